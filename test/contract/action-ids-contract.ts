// Idempotent action ids and undo, on every store that supports them:
// examples for one limiter and for a stack. Random schedules of every
// operation, action ids among them, are in the model tests (model-test.ts,
// stack-model-test.ts).

import { expect } from 'chai';
import { RateLimiterStack, type RollingRateLimiter } from '../../src/index.js';
import { TestClock } from '../support/test-clock.js';
import type { LimiterFactory } from './limiter-contract.js';

export function describeActionIdContract(backend: string, factory: () => LimiterFactory): void {
  describe(`action ids and undo on ${backend}`, () => {
    let create: LimiterFactory;
    let clock: TestClock;
    before(() => {
      create = factory();
    });
    beforeEach(() => {
      clock = new TestClock();
    });
    const make = (rules: { maxInInterval: number; countBlocked?: boolean; namespace?: string }): RollingRateLimiter =>
      create({ interval: 60_000, clock: clock.read, ...rules });

    it('counts a retried admitted action once, and answers it as admitted again', async () => {
      const limiter = make({ maxInInterval: 2 });
      expect(await limiter.limitWithInfo('user', { actionId: 'job-1' })).to.include({ blocked: false, actionsRemaining: 1 });
      clock.advanceMs(10);
      const retry = await limiter.limitWithInfo('user', { actionId: 'job-1' });
      expect(retry).to.include({ blocked: false, actionsRemaining: 1, alreadyAdmitted: true });
      clock.advanceMs(10);
      expect(await limiter.limit('user', { actionId: 'job-2' })).to.equal(false);
      expect(await limiter.limit('user', { actionId: 'job-3' })).to.equal(true);
    });

    it('never admits more than the limit through cycles of block, undo and retry (20 cycles, limit 2)', async () => {
      // Each cycle: a blocked attempt, an undo of an admitted action, the blocked action retried, a new action.
      const limiter = make({ maxInInterval: 2 });
      const admitted: { t: number; actionId: string }[] = [];
      const attempt = async (actionId: string): Promise<void> => {
        clock.advanceMs(1);
        const info = await limiter.limitWithInfo('user', { actionId });
        if (!info.blocked && info.alreadyAdmitted !== true) admitted.push({ t: clock.now, actionId });
      };
      await attempt('a0');
      await attempt('a1');
      for (let cycle = 0; cycle < 20; cycle += 1) {
        const blocked = `b${cycle}`;
        await attempt(blocked);
        const newest = admitted.pop();
        if (newest !== undefined) expect(await limiter.undo('user', newest.actionId), `cycle ${cycle}: undo`).to.equal(true);
        await attempt(blocked);
        await attempt(`c${cycle}`);
        const inWindow = admitted.filter((a) => a.t > clock.now - 60_000_000).length;
        expect(inWindow, `cycle ${cycle}: admitted and not undone in the window`).to.be.at.most(2);
      }
      expect(admitted.length, 'admitted and not undone, all within 62 ms').to.be.at.most(2);
    });

    it('answers a retry of an admitted action as admitted for as long as it counts, however many attempts were blocked since', async () => {
      const limiter = make({ maxInInterval: 2 });
      expect(await limiter.limit('user', { actionId: 'first' })).to.equal(false);
      clock.advanceMs(1);
      expect(await limiter.limit('user')).to.equal(false);
      for (let i = 0; i < 10; i += 1) {
        clock.advanceMs(1);
        expect(await limiter.limit('user'), `blocked attempt ${i}`).to.equal(true);
      }
      clock.advanceMs(1);
      expect(await limiter.limitWithInfo('user', { actionId: 'first' })).to.include({ blocked: false, alreadyAdmitted: true });
      expect(await limiter.undo('user', 'first')).to.equal(true);
    });

    it('records an action once: a retried blocked action moves its record instead of adding one', async () => {
      const limiter = make({ maxInInterval: 2 });
      await limiter.limit('user', { actionId: 'a' });
      clock.advanceMs(1_000);
      await limiter.limit('user', { actionId: 'b' });
      for (let i = 0; i < 5; i += 1) {
        clock.advanceMs(1_000);
        expect(await limiter.limitWithInfo('user', { actionId: 'c' })).to.include({ blocked: true, actionsRemaining: 0 });
      }
      // One record for 'c', however often it tried: 'b' is still kept, and a retry of 'b' is recognised.
      expect(await limiter.limitWithInfo('user', { actionId: 'b' })).to.include({ alreadyAdmitted: true });
      // Once 'a' and 'b' leave the window, 'c' gets in (its own blocked record is the only one left).
      clock.advanceMs(55_000);
      expect(await limiter.limitWithInfo('user', { actionId: 'c' })).to.include({ blocked: false, actionsRemaining: 1 });
      expect(await limiter.limitWithInfo('user', { actionId: 'c' })).to.include({ alreadyAdmitted: true, actionsRemaining: 1 });
    });

    it('keeps action ids apart that differ only in a lone surrogate (which clients would send as U+FFFD)', async () => {
      const limiter = make({ maxInInterval: 1, countBlocked: false });
      const ids = ['job-\uD800', 'job-\uDBFF', 'job-\uDC01', 'job-\uFFFD'];
      const seen: boolean[] = [];
      for (const actionId of ids) {
        clock.advanceMs(10);
        seen.push(await limiter.limit('user', { actionId }));
      }
      expect(seen, 'one admitted, three other actions blocked').to.deep.equal([false, true, true, true]);
      expect(await limiter.limitWithInfo('user', { actionId: 'job-\uD800' })).to.include({ alreadyAdmitted: true });
      expect(await limiter.undo('user', 'job-\uDBFF'), 'never admitted').to.equal(false);
      expect(await limiter.undo('user', 'job-\uD800')).to.equal(true);
    });

    it('undo gives an admitted action back, once', async () => {
      const limiter = make({ maxInInterval: 1, countBlocked: false });
      await limiter.limit('user', { actionId: 'push-1' });
      expect(await limiter.limit('user', { actionId: 'push-2' })).to.equal(true);
      expect(await limiter.undo('user', 'push-1')).to.equal(true);
      expect(await limiter.undo('user', 'push-1')).to.equal(false);
      expect(await limiter.undo('user', 'never-admitted')).to.equal(false);
      expect(await limiter.limit('user', { actionId: 'push-2' })).to.equal(false);
    });

    it('refuses an action id that is not a non-empty string', async () => {
      const limiter = make({ maxInInterval: 1 });
      for (const bad of ['', 5, null]) {
        const error = await limiter.limit('user', { actionId: bad as never }).catch((e: unknown) => e);
        expect(error, String(bad)).to.be.instanceOf(TypeError);
      }
    });

    it('works in a stack: a retry records nothing in any tier, and undo refunds every tier', async () => {
      const minute = make({ maxInInterval: 10, countBlocked: false, namespace: 'minute' });
      const spacing = create({ interval: 3_000, maxInInterval: 1, countBlocked: false, clock: clock.read, namespace: 'spacing' });
      const stack = new RateLimiterStack([minute, spacing]);
      expect(await stack.limit('teacher', { actionId: 'n1' })).to.equal(false);
      clock.advanceMs(100);
      const retry = await stack.limitWithInfo('teacher', { actionId: 'n1' });
      expect(retry.alreadyAdmitted).to.equal(true);
      expect(retry.tiers.map((tier) => tier.actionsRemaining)).to.deep.equal([9, 0]);
      expect(await stack.limit('teacher', { actionId: 'n2' })).to.equal(true);
      expect(await stack.undo('teacher', 'n1')).to.equal(true);
      expect(await stack.limit('teacher', { actionId: 'n2' })).to.equal(false);
      expect((await minute.wouldLimitWithInfo('teacher')).actionsRemaining).to.equal(8);
    });
  });
}
