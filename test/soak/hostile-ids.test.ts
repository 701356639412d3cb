// A soak over what users (and attackers) feed the limiter as ids: 100,000
// random ids (unicode, control characters, lone surrogates, braces, colons,
// percent signs, very long strings). `npm run test:soak` and `npm test` run
// it; the random option values are in test/limiters/hostile-input.test.ts.

import { expect } from 'chai';
import fc from 'fast-check';
import { RollingRateLimiter } from '../../src/index.js';
import { KeyBuilder } from '../../src/core/identity.js';
import { TestClock } from '../support/test-clock.js';

/** One UTF-16 unit or code point, leaning on the characters that matter to keys. */
const hostileUnit = fc.oneof(
  fc.constantFrom('{', '}', ':', '%', '%7B', '%25', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\0', '\n', ' ', 'u'),
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

const hostileId = fc.oneof(
  { weight: 20, arbitrary: fc.string({ unit: hostileUnit, minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: hostileUnit, minLength: 1000, maxLength: 10_000 }) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer() },
);

describe('hostile input', () => {
  it('100,000 random ids: no crash, and no two different ids share a key', async function () {
    this.timeout(120_000);
    const ids = fc.sample(hostileId, { numRuns: 100_000, seed: 20261121 });
    const clock = new TestClock();
    const limiter = new RollingRateLimiter({ namespace: 'n:{x}%', interval: 1000, maxInInterval: 1, clock: clock.read });
    const keys = new KeyBuilder('n:{x}%');
    const owner = new Map<string, string>();
    for (const id of ids) {
      const asString = typeof id === 'number' ? String(id) : id;
      const key = keys.keyFor(asString);
      const previous = owner.get(key);
      if (previous !== undefined) expect(previous, `key ${JSON.stringify(key).slice(0, 80)}`).to.equal(asString);
      owner.set(key, asString);
      // Every key must survive UTF-8, which is how every client sends it.
      expect(Buffer.from(key, 'utf8').toString('utf8') === key, JSON.stringify(key).slice(0, 80)).to.equal(true);
      const first = await limiter.limitWithInfo(id);
      expect(typeof first.blocked).to.equal('boolean');
    }
    expect(owner.size).to.be.greaterThan(90_000);
  });
});
