// Property-based tests over what users (and attackers) feed the limiter:
// 100,000 random ids (unicode, control characters, lone surrogates, braces,
// colons, percent signs, very long strings) and random option values.

import { expect } from 'chai';
import fc from 'fast-check';
import { isRateLimiterError, RollingRateLimiter } from '../../src/index.js';
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

  const optionRules: Record<string, (value: unknown) => boolean> = {
    interval: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 1e12,
    maxInInterval: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 2 ** 31 - 1,
    minDifference: (v) => v === undefined || (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 1e12),
    timeout: (v) => v === undefined || (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 2 ** 31 - 1),
    countBlocked: (v) => v === undefined || typeof v === 'boolean',
    namespace: (v) => v === undefined || typeof v === 'string',
    clock: (v) => v === undefined || v === 'local' || v === 'redis' || typeof v === 'function',
    onStoreError: (v) => v === undefined || v === 'throw' || v === 'allow' || v === 'block',
  };

  for (const [option, isValid] of Object.entries(optionRules)) {
    it(`every invalid \`${option}\` gets a TypeError or RangeError naming it`, () => {
      const candidates = fc.oneof(
        fc.anything(),
        fc.double(),
        fc.integer({ min: -5, max: 5 }),
        fc.constantFrom(0, -1, 0.5, 1e12 + 1, 2 ** 31, NaN, Infinity, '', 'local ', 'REDIS', null, [], {}),
      );
      fc.assert(
        fc.property(candidates, (value) => {
          fc.pre(!isValid(value));
          let caught: unknown;
          try {
            new RollingRateLimiter({ interval: 1000, maxInInterval: 5, [option]: value });
          } catch (error) {
            caught = error;
          }
          expect(caught instanceof TypeError || caught instanceof RangeError, String(caught)).to.equal(true);
          expect((caught as Error).message).to.include(`\`${option}\``);
          expect(isRateLimiterError(caught)).to.equal(true);
          expect(caught).to.include({ code: 'ERR_RATE_LIMITER_INVALID_OPTION', option });
        }),
        { numRuns: 500, seed: 42 },
      );
    });
  }
});
