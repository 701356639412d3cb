// A stack holds at most RateLimiterStack.MAX_TIERS limiters: its tiers are the
// few scales of one limit, decided in one atomic step. Past the cap it is a
// RangeError when the stack is made, before any tier is looked at.

import { expect } from 'chai';
import { InvalidOptionRangeError, RateLimiterStack, RollingRateLimiter } from '../../src/index.js';

/** `count` in-memory limiters, each its own namespace and window. */
function limiters(count: number, clock?: () => number): RollingRateLimiter[] {
  return Array.from(
    { length: count },
    (_, i) => new RollingRateLimiter({ namespace: `tier-${i}`, interval: 1_000 + i, maxInInterval: 2 + i, ...(clock ? { clock } : {}) }),
  );
}

describe('the number of tiers of a stack', () => {
  it('is at most 100', () => {
    expect(RateLimiterStack.MAX_TIERS).to.equal(100);
  });

  for (const count of [101, 100_000]) {
    it(`refuses ${count.toLocaleString('en')} limiters with a RangeError naming \`limiters\` and the cap`, () => {
      // The same limiter over and over: the count is refused before the tiers are checked (or even read).
      const one = new RollingRateLimiter({ interval: 1_000, maxInInterval: 1 });
      const given = count === 101 ? limiters(count) : new Array<RollingRateLimiter>(count).fill(one);
      let error: unknown;
      try {
        new RateLimiterStack(given);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).to.be.instanceOf(InvalidOptionRangeError).and.to.be.instanceOf(RangeError);
      const { message, option, received } = error as InvalidOptionRangeError;
      expect({ option, received }).to.deep.equal({ option: 'limiters', received: count });
      expect(message).to.include('`limiters`').and.to.include('at most 100').and.to.include(String(count));
    });
  }

  it('decides, undoes and clears with every one of 100 tiers', async () => {
    let now = 1_700_000_000_000_000;
    const stack = new RateLimiterStack(limiters(100, () => now));
    const first = await stack.limitWithInfo('u', { actionId: 'a' });
    expect(first.blocked).to.equal(false);
    expect(first.tiers).to.have.length(100);
    expect(first.tiers.map((tier) => tier.actionsRemaining)).to.deep.equal(Array.from({ length: 100 }, (_, i) => 1 + i));
    expect(first.actionsRemaining).to.equal(1);
    now += 1;
    expect(await stack.limit('u')).to.equal(false);
    now += 1;
    expect(await stack.limit('u'), 'the first tier allows 2').to.equal(true);
    expect(await stack.undo('u', 'a')).to.equal(true);
    await stack.clear('u');
    // As fresh as before the first attempt: a dry run reports what an attempt now would leave.
    const cleared = await stack.wouldLimitWithInfo('u');
    expect(cleared.tiers.map((tier) => tier.actionsRemaining)).to.deep.equal(first.tiers.map((tier) => tier.actionsRemaining));
  });
});
