import { expect } from 'chai';
import { StoreError } from '../../src/index.js';
import { readInteger, readScoredMembers } from '../../src/redis/replies.js';

describe('Redis reply readers', () => {
  it('read integers as numbers or numeric strings', () => {
    expect(readInteger(3, 'ZCARD')).to.equal(3);
    expect(readInteger('3', 'ZCARD')).to.equal(3);
  });

  for (const bad of [null, undefined, '', 'OK', 1.5, [], {}, NaN]) {
    it(`reject ${JSON.stringify(bad) ?? 'undefined'} as an integer with a StoreError, never a silent default`, () => {
      expect(() => readInteger(bad, 'ZCARD')).to.throw(StoreError, /Unexpected reply to ZCARD/);
    });
  }

  it('read WITHSCORES replies flat (RESP2) and as pairs (RESP3)', () => {
    const expected = [
      { member: 'a', score: 1 },
      { member: 'b', score: 1763700000000123 },
    ];
    expect(readScoredMembers(['a', '1', 'b', '1763700000000123'], 'ZRANGE')).to.deep.equal(expected);
    expect(
      readScoredMembers(
        [
          ['a', 1],
          ['b', 1763700000000123],
        ],
        'ZRANGE',
      ),
    ).to.deep.equal(expected);
    expect(readScoredMembers([], 'ZRANGE')).to.deep.equal([]);
  });

  for (const bad of [null, 'a', ['a'], ['a', 'x'], [1, '2'], [['a']], [['a', 'nope']], { a: 1 }]) {
    it(`reject ${JSON.stringify(bad)} as a WITHSCORES reply`, () => {
      expect(() => readScoredMembers(bad, 'ZRANGE')).to.throw(StoreError);
    });
  }
});
