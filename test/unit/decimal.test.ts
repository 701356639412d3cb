import { expect } from 'chai';
import fc from 'fast-check';
import { decimalString } from '../../src/redis/decimal.js';

describe('decimalString', () => {
  it('writes exactly what String() writes, for every safe integer', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (value) => {
        expect(decimalString(value)).to.equal(String(value));
      }),
      { numRuns: 20_000 },
    );
  });

  it('writes microsecond timestamps, the edges of the split and negative cut-offs as String() does', () => {
    const now = Date.now() * 1000;
    const values = [0, 1, -1, 99_999_999, 100_000_000, 100_000_001, 199_999_999, 200_000_000, now, now + 1, now - 60_000_000, -60_000_000];
    values.push(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1_700_000_000_000_000, 1_700_000_000_000_099, 1_700_000_000_100_000);
    for (const value of values) expect(decimalString(value), String(value)).to.equal(String(value));
  });

  it('leaves what is not a safe integer to String()', () => {
    for (const value of [0.5, 1e20, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) expect(decimalString(value)).to.equal(String(value));
  });
});
