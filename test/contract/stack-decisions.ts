// What a RateLimiterStack decides, as examples on a TestClock: the
// push-notification case (10 per minute and 1 per 3 s), all-or-nothing
// recording across tiers, dry runs, clear, and the state a stack shares with
// its limiters and with other stacks over them. Part of the stack contract
// (stack-contract.ts), run on every backend.

import { expect } from 'chai';
import type { RollingRateLimiter } from '../../src/index.js';
import type { TestClock } from '../support/test-clock.js';
import type { StackFixture } from './stack-contract.js';

const MINUTE = 60_000;

/** The RateLimitInfo fields plus the tier's identity, as a stack reports them for `limiter`. */
const tierInfo = (
  limiter: RollingRateLimiter,
  info: {
    blocked: boolean;
    blockedDueToCount: boolean;
    blockedDueToMinDifference: boolean;
    actionsRemaining: number;
    millisecondsUntilAllowed: number;
  },
) => ({ ...info, namespace: limiter.namespace, interval: limiter.interval, maxInInterval: limiter.maxInInterval });
const allowed = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false };
const blockedByCount = { blocked: true, blockedDueToCount: true, blockedDueToMinDifference: false };
const blockedByGap = { blocked: true, blockedDueToCount: false, blockedDueToMinDifference: true };

export function describeStackDecisions(fixture: StackFixture): void {
  const { make } = fixture;
  let clock: TestClock;
  beforeEach(() => {
    clock = fixture.clock;
  });

  describe('the push-notification case: 10 per minute and 1 per 3 s per teacher', () => {
    it('blocks a quick second push on the 3 s tier and the 11th in a minute on the minute tier, with the true wait', async () => {
      const perMinute = make({ namespace: 'push:minute', interval: MINUTE, maxInInterval: 10 });
      const spacing = make({ namespace: 'push:3s', interval: 3000, maxInInterval: 1 });
      const push = fixture.stack([perMinute, spacing]);

      const first = await push.limitWithInfo('teacher');
      expect(first).to.deep.equal({
        ...allowed,
        actionsRemaining: 0,
        millisecondsUntilAllowed: 3000,
        tiers: [
          tierInfo(perMinute, { ...allowed, actionsRemaining: 9, millisecondsUntilAllowed: 0 }),
          tierInfo(spacing, { ...allowed, actionsRemaining: 0, millisecondsUntilAllowed: 3000 }),
        ],
      });

      // A second push 1 s later: the 3 s tier blocks, the minute tier does not. Both count
      // blocked attempts (the default), so the 3 s window restarts at this attempt.
      clock.advanceMs(1000);
      const second = await push.limitWithInfo('teacher');
      expect(second).to.deep.equal({
        ...blockedByCount,
        actionsRemaining: 0,
        millisecondsUntilAllowed: 3000,
        tiers: [
          tierInfo(perMinute, { ...allowed, actionsRemaining: 8, millisecondsUntilAllowed: 0 }),
          tierInfo(spacing, { ...blockedByCount, actionsRemaining: 0, millisecondsUntilAllowed: 3000 }),
        ],
      });
      expect(second.tiers.map((tier) => tier.blocked)).to.deep.equal([false, true]);

      // Exactly when it said: allowed.
      clock.advanceMs(second.millisecondsUntilAllowed);
      expect(await push.limit('teacher')).to.equal(false); // t = 4 s: 3 in the minute tier
      // One push every 3 s: t = 7, 10, ..., 25 s, the 10th in the minute tier.
      for (let t = 7; t <= 25; t += 3) {
        clock.advanceMs(3000);
        const info = await push.limitWithInfo('teacher');
        expect(info.blocked, `push at ${t} s`).to.equal(false);
        expect(info.tiers[0]?.actionsRemaining, `push at ${t} s`).to.equal(10 - (3 + (t - 4) / 3));
      }

      // t = 28 s: the 3 s tier allows, the minute tier blocks the 11th. Its window holds
      // 0, 1, 4, ..., 25 s and now 28 s; the 10th newest is 1 s, so it frees up at 61 s.
      clock.advanceMs(3000);
      const eleventh = await push.limitWithInfo('teacher');
      expect(eleventh).to.deep.equal({
        ...blockedByCount,
        actionsRemaining: 0,
        millisecondsUntilAllowed: 33_000,
        tiers: [
          tierInfo(perMinute, { ...blockedByCount, actionsRemaining: 0, millisecondsUntilAllowed: 33_000 }),
          tierInfo(spacing, { ...allowed, actionsRemaining: 0, millisecondsUntilAllowed: 3000 }),
        ],
      });
      expect(eleventh.tiers.map((tier) => tier.blocked)).to.deep.equal([true, false]);

      // The wait is the true wait across tiers: a microsecond short is still blocked, on the minute tier only.
      // (A dry run describes the attempt as if it were recorded: it would count, so its own wait is
      // until the 4 s push leaves the minute window, 3 s and 1 µs later.)
      clock.advanceUs(33_000 * 1000 - 1);
      const almost = await push.wouldLimitWithInfo('teacher');
      expect(almost).to.include({ ...blockedByCount, millisecondsUntilAllowed: 3001 });
      expect(almost.tiers.map((tier) => tier.blocked)).to.deep.equal([true, false]);
      clock.advanceUs(1);
      expect(await push.limitWithInfo('teacher')).to.include({ ...allowed });
    });

    it('with countBlocked: false, a blocked push is not recorded and the reported wait is exact', async () => {
      const perMinute = make({ namespace: 'push:minute', interval: MINUTE, maxInInterval: 10, countBlocked: false });
      const spacing = make({ namespace: 'push:3s', interval: 3000, maxInInterval: 1, countBlocked: false });
      const push = fixture.stack([perMinute, spacing]);

      expect(await push.limit('teacher')).to.equal(false);
      clock.advanceMs(1000);
      const second = await push.limitWithInfo('teacher');
      expect(second).to.deep.equal({
        ...blockedByCount,
        actionsRemaining: 0,
        millisecondsUntilAllowed: 2000,
        tiers: [
          tierInfo(perMinute, { ...allowed, actionsRemaining: 9, millisecondsUntilAllowed: 0 }),
          tierInfo(spacing, { ...blockedByCount, actionsRemaining: 0, millisecondsUntilAllowed: 2000 }),
        ],
      });
      clock.advanceUs(2000 * 1000 - 1);
      expect(await push.limit('teacher')).to.equal(true);
      clock.advanceUs(1);
      expect(await push.limit('teacher')).to.equal(false);
      expect((await perMinute.wouldLimitWithInfo('teacher')).actionsRemaining).to.equal(7); // 2 recorded, and this one
    });

    it('reports each reason when one tier blocks on the gap and another on the count', async () => {
      const daily = make({ namespace: 'daily', interval: MINUTE, maxInInterval: 2, countBlocked: false });
      const spaced = make({ namespace: 'spaced', interval: 10_000, maxInInterval: 100, minDifference: 5000, countBlocked: false });
      const stack = fixture.stack([daily, spaced]);

      expect(await stack.limit('user')).to.equal(false); // t = 0
      clock.advanceMs(1000);
      expect(await stack.limitWithInfo('user')).to.deep.equal({
        ...blockedByGap,
        actionsRemaining: 1,
        millisecondsUntilAllowed: 4000,
        tiers: [
          tierInfo(daily, { ...allowed, actionsRemaining: 1, millisecondsUntilAllowed: 0 }),
          tierInfo(spaced, { ...blockedByGap, actionsRemaining: 99, millisecondsUntilAllowed: 4000 }),
        ],
      });
      clock.advanceMs(4000); // t = 5 s: a gap of exactly 5 s is allowed
      expect(await stack.limitWithInfo('user')).to.deep.equal({
        ...allowed,
        actionsRemaining: 0,
        millisecondsUntilAllowed: 55_000,
        tiers: [
          tierInfo(daily, { ...allowed, actionsRemaining: 0, millisecondsUntilAllowed: 55_000 }),
          tierInfo(spaced, { ...allowed, actionsRemaining: 98, millisecondsUntilAllowed: 5000 }),
        ],
      });
      clock.advanceMs(2000); // t = 7 s: both tiers block, each for its own reason
      expect(await stack.limitWithInfo('user')).to.deep.equal({
        blocked: true,
        blockedDueToCount: true,
        blockedDueToMinDifference: true,
        actionsRemaining: 0,
        millisecondsUntilAllowed: 53_000,
        tiers: [
          tierInfo(daily, { ...blockedByCount, actionsRemaining: 0, millisecondsUntilAllowed: 53_000 }),
          tierInfo(spaced, { ...blockedByGap, actionsRemaining: 98, millisecondsUntilAllowed: 3000 }),
        ],
      });
    });

    it('a stack of one limiter reports exactly that limiter', async () => {
      const only = make({ interval: 1000, maxInInterval: 2, minDifference: 100 });
      const twin = make({ interval: 1000, maxInInterval: 2, minDifference: 100 });
      const stack = fixture.stack([only]);
      for (let i = 0; i < 6; i += 1) {
        const info = await stack.limitWithInfo('user');
        const alone = await twin.limitWithInfo('user');
        expect(info).to.deep.equal({ ...alone, tiers: [tierInfo(only, alone)] }, `attempt ${i}`);
        clock.advanceMs(i % 2 === 0 ? 50 : 400);
      }
    });
  });

  describe('all or nothing', () => {
    it('a tier with countBlocked: false records nothing when another tier blocks', async () => {
      const loose = make({ namespace: 'loose', interval: 10_000, maxInInterval: 5, countBlocked: false });
      const strict = make({ namespace: 'strict', interval: 1000, maxInInterval: 1 });
      const stack = fixture.stack([loose, strict]);

      expect(await stack.limitWithInfo('user')).to.include({ ...allowed, actionsRemaining: 0 });
      const before = await loose.wouldLimitWithInfo('user');
      expect(before).to.deep.equal({ ...allowed, actionsRemaining: 3, millisecondsUntilAllowed: 0 });
      for (let i = 0; i < 3; i += 1) {
        clock.advanceMs(i === 0 ? 0 : 100);
        const blocked = await stack.limitWithInfo('user');
        expect(
          blocked.tiers.map((tier) => tier.blocked),
          `blocked attempt ${i}`,
        ).to.deep.equal([false, true]);
        expect(blocked.tiers[0], `blocked attempt ${i}`).to.include({ actionsRemaining: 4 });
      }
      expect(await loose.wouldLimitWithInfo('user')).to.deep.equal(before);
    });

    it('a tier with countBlocked: true records the attempt even when another tier blocks', async () => {
      const counting = make({ namespace: 'counting', interval: 10_000, maxInInterval: 5, countBlocked: true });
      const strict = make({ namespace: 'strict', interval: 1000, maxInInterval: 1 });
      const stack = fixture.stack([counting, strict]);

      expect(await stack.limit('user')).to.equal(false);
      expect((await counting.wouldLimitWithInfo('user')).actionsRemaining).to.equal(3);
      const blocked = await stack.limitWithInfo('user');
      expect(blocked.tiers.map((tier) => tier.blocked)).to.deep.equal([false, true]);
      expect(blocked.tiers[0]).to.include({ actionsRemaining: 3 });
      expect((await counting.wouldLimitWithInfo('user')).actionsRemaining).to.equal(2);
    });

    it('the blocking tier itself records nothing with countBlocked: false', async () => {
      const open = make({ namespace: 'open', interval: 10_000, maxInInterval: 100, countBlocked: true });
      const closed = make({ namespace: 'closed', interval: 1000, maxInInterval: 1, countBlocked: false });
      const stack = fixture.stack([open, closed]);
      expect(await stack.limit('user')).to.equal(false);
      clock.advanceMs(999);
      expect(await stack.limit('user')).to.equal(true);
      clock.advanceMs(1); // 1000 ms after the only recorded attempt in `closed`
      const info = await stack.limitWithInfo('user');
      expect(info).to.include({ ...allowed });
      expect(info.tiers[0]).to.include({ actionsRemaining: 97 });
    });
  });

  describe('dry runs, clear and shared state', () => {
    it('wouldLimitWithInfo returns exactly what limitWithInfo then returns, and writes nothing', async () => {
      const a = make({ interval: 2000, maxInInterval: 3, minDifference: 150, countBlocked: false });
      const b = make({ interval: 1000, maxInInterval: 2, countBlocked: true });
      const c = make({ interval: 5000, maxInInterval: 4, minDifference: 300, countBlocked: false });
      const stack = fixture.stack([a, b, c]);
      const steps = [0, 0, 100, 150, 149, 1, 300, 0, 1000, 999, 1, 2000, 5000, 50];
      for (const [i, step] of steps.entries()) {
        clock.advanceMs(step);
        const tiersBefore = [await a.wouldLimitWithInfo('user'), await b.wouldLimitWithInfo('user'), await c.wouldLimitWithInfo('user')];
        const peek = await stack.wouldLimitWithInfo('user');
        expect(await stack.wouldLimitWithInfo('user'), `step ${i}`).to.deep.equal(peek);
        expect(await stack.wouldLimit('user'), `step ${i}`).to.equal(peek.blocked);
        const tiersAfter = [await a.wouldLimitWithInfo('user'), await b.wouldLimitWithInfo('user'), await c.wouldLimitWithInfo('user')];
        expect(tiersAfter, `step ${i}: a dry run of the stack wrote to a tier`).to.deep.equal(tiersBefore);
        expect(await stack.limitWithInfo('user'), `step ${i}`).to.deep.equal(peek);
      }
    });

    it('wouldLimit on a fresh id is false and leaves every tier fresh', async () => {
      const a = make({ maxInInterval: 1 });
      const b = make({ maxInInterval: 2 });
      const stack = fixture.stack([a, b]);
      for (let i = 0; i < 3; i += 1) expect(await stack.wouldLimit('fresh')).to.equal(false);
      expect(await a.limitWithInfo('fresh')).to.include({ ...allowed, actionsRemaining: 0 });
      expect(await b.limitWithInfo('fresh')).to.include({ ...allowed, actionsRemaining: 1 });
    });

    it('clear(id) clears every tier and no other id', async () => {
      const a = make({ interval: MINUTE, maxInInterval: 1 });
      const b = make({ interval: MINUTE, maxInInterval: 5, minDifference: 10_000 });
      const stack = fixture.stack([a, b]);
      await stack.limit('user');
      await stack.limit('other');
      await stack.clear('user');
      expect(await a.wouldLimitWithInfo('user')).to.include({ ...allowed, actionsRemaining: 0 });
      expect(await b.wouldLimitWithInfo('user')).to.include({ ...allowed, actionsRemaining: 4, millisecondsUntilAllowed: 10_000 });
      expect(await stack.limit('user')).to.equal(false);
      expect(await stack.limitWithInfo('other')).to.include({ blocked: true, blockedDueToCount: true, blockedDueToMinDifference: true });
    });

    it('the limiters stay usable alone and share their state with the stack', async () => {
      const perMinute = make({ interval: MINUTE, maxInInterval: 3 });
      const spacing = make({ interval: 3000, maxInInterval: 1 });
      const stack = fixture.stack([perMinute, spacing]);
      expect(stack.limiters).to.have.length(2);
      expect(stack.limiters[0]).to.equal(perMinute);
      expect(stack.limiters[1]).to.equal(spacing);

      // A tier used alone records into what the stack sees.
      expect(await spacing.limit('user')).to.equal(false);
      const blocked = await stack.limitWithInfo('user');
      expect(blocked.tiers.map((tier) => tier.blocked)).to.deep.equal([false, true]);
      // ...and what the stack records is what the tier alone sees.
      expect(await perMinute.wouldLimitWithInfo('user')).to.include({ actionsRemaining: 1 });
      clock.advanceMs(3000);
      expect(await stack.limit('user')).to.equal(false);
      expect(await perMinute.limitWithInfo('user')).to.include({ ...allowed, actionsRemaining: 0 });
      clock.advanceMs(3000);
      expect((await stack.wouldLimitWithInfo('user')).tiers.map((tier) => tier.blocked)).to.deep.equal([true, false]);
      // A tier's own clear forgets only that tier.
      await perMinute.clear('user');
      expect(await stack.wouldLimit('user')).to.equal(false);
      await spacing.limit('user');
      expect((await stack.wouldLimitWithInfo('user')).tiers.map((tier) => tier.blocked)).to.deep.equal([false, true]);
    });

    it('two stacks over the same limiters, in another order, share the state and report tiers in their own order', async () => {
      const a = make({ interval: MINUTE, maxInInterval: 2 });
      const b = make({ interval: 1000, maxInInterval: 5, minDifference: 500 });
      const forward = fixture.stack([a, b]);
      const backward = fixture.stack([b, a]);
      const first = await forward.limitWithInfo('user');
      const peek = await backward.wouldLimitWithInfo('user');
      expect(peek.tiers.map((tier) => tier.namespace)).to.deep.equal([b.namespace, a.namespace]);
      expect(peek.tiers[1]).to.include({ ...allowed, actionsRemaining: 0, millisecondsUntilAllowed: MINUTE });
      expect(peek.tiers[0]).to.include({ ...blockedByGap, actionsRemaining: 3, millisecondsUntilAllowed: 500 });
      expect(first.tiers[1]).to.include({ actionsRemaining: 4 });
    });

    it('treats a number id as its decimal string and rejects a bad id with a TypeError', async () => {
      const stack = fixture.stack([make({ maxInInterval: 1 }), make({ maxInInterval: 5 })]);
      expect(await stack.limit(42)).to.equal(false);
      expect(await stack.limit('42')).to.equal(true);
      for (const bad of ['', NaN, Infinity, null, undefined, {}, true]) {
        let caught: unknown;
        try {
          await stack.limit(bad as never);
        } catch (error) {
          caught = error;
        }
        expect(caught, JSON.stringify(bad) ?? 'undefined').to.be.instanceOf(TypeError);
      }
    });
  });
}
