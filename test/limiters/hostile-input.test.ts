// Property-based tests over what users (and attackers) feed the limiter:
// random option values. The 100,000 random ids are a soak, in
// test/soak/hostile-ids.test.ts.

import { expect } from 'chai';
import fc from 'fast-check';
import { isRateLimiterError, RollingRateLimiter } from '../../src/index.js';

describe('hostile input', () => {
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
