// The behavioural contract of RollingRateLimiter (docs/semantics.md), written once and
// run against every store: each backend's test file calls
// describeLimiterContract with a factory that builds limiters on it.

import { expect } from 'chai';
import { RollingRateLimiter, type RollingRateLimiterOptions } from '../../src/index.js';
import { TestClock } from '../support/test-clock.js';
import { describeModelTest } from './model-test.js';

/** Options a contract test sets; the factory adds the client and a namespace unique to the test. */
export type ContractOptions = Omit<RollingRateLimiterOptions, 'client' | 'namespace'> & { namespace?: string };

/** What a backend can do, so the contract runs every test that applies to it. */
export interface BackendCapabilities {
  /** Whether `countBlocked: false` is supported. */
  readonly countBlockedFalse: boolean;
  /** How many random schedules the model test runs. */
  readonly modelSchedules: number;
  /** Whether attempts may carry action ids (every store that runs the decide script, and memory). */
  readonly actionIds: boolean;
  /** Whether the model test also tries `useScript: false`, the MULTI path (Redis clients that run scripts). */
  readonly multiPath?: boolean;
  /** Whether the factory's limiters batch their decisions (`batch: true`): the model test then makes concurrent calls. */
  readonly batch?: boolean;
}

export type LimiterFactory = (options: ContractOptions) => RollingRateLimiter;

export function describeLimiterContract(backend: string, factory: () => LimiterFactory, capabilities: BackendCapabilities): void {
  describe(`RollingRateLimiter contract on ${backend}`, () => {
    let create: LimiterFactory;
    let clock: TestClock;
    before(() => {
      create = factory();
    });
    beforeEach(() => {
      clock = new TestClock();
    });
    const make = (options: Partial<ContractOptions> = {}): RollingRateLimiter => create({ interval: 1000, maxInInterval: 3, clock: clock.read, ...options });

    describe('the rolling window', () => {
      it('allows maxInInterval actions in the window and blocks the next', async () => {
        const limiter = make({ maxInInterval: 3 });
        const results: boolean[] = [];
        for (let i = 0; i < 4; i += 1) {
          results.push(await limiter.limit('user'));
          clock.advanceMs(10);
        }
        expect(results).to.deep.equal([false, false, false, true]);
      });

      it('stops counting an action exactly `interval` after it (the window is (t - interval, t])', async () => {
        const limiter = make({ interval: 1000, maxInInterval: 1, countBlocked: true });
        expect(await limiter.limit('user')).to.equal(false);
        clock.advanceUs(1000 * 1000 - 1);
        expect(await limiter.wouldLimit('user')).to.equal(true);
        clock.advanceUs(1);
        expect(await limiter.limit('user')).to.equal(false);
      });

      it('has no fixed buckets: actions at the end of one minute still count at the start of the next', async () => {
        const limiter = make({ interval: 60_000, maxInInterval: 10 });
        clock.advanceMs(59_000);
        for (let i = 0; i < 10; i += 1) expect(await limiter.limit('user')).to.equal(false);
        clock.advanceMs(2_000);
        expect(await limiter.limit('user')).to.equal(true);
      });

      it('reports actionsRemaining after each allowed action', async () => {
        const limiter = make({ maxInInterval: 3 });
        const remaining: number[] = [];
        for (let i = 0; i < 4; i += 1) remaining.push((await limiter.limitWithInfo('user')).actionsRemaining);
        expect(remaining).to.deep.equal([2, 1, 0, 0]);
      });

      it('reports the wait until the oldest counted action leaves the window', async () => {
        const limiter = make({ interval: 1000, maxInInterval: 2 });
        await limiter.limit('user');
        clock.advanceMs(300);
        const second = await limiter.limitWithInfo('user');
        expect(second).to.deep.equal({
          blocked: false,
          blockedDueToCount: false,
          blockedDueToMinDifference: false,
          actionsRemaining: 0,
          millisecondsUntilAllowed: 700,
        });
      });

      it('counts two attempts in the same microsecond as two attempts', async () => {
        const limiter = make({ maxInInterval: 2 });
        expect(await limiter.limit('user')).to.equal(false);
        expect(await limiter.limit('user')).to.equal(false);
        expect(await limiter.limit('user')).to.equal(true);
      });
    });

    describe('the minimum gap', () => {
      it('allows a gap of exactly minDifference and blocks one a microsecond shorter', async () => {
        const limiter = make({ maxInInterval: 100, minDifference: 200, countBlocked: true });
        await limiter.limit('user');
        clock.advanceUs(200 * 1000 - 1);
        const early = await limiter.wouldLimitWithInfo('user');
        expect(early.blocked).to.equal(true);
        expect(early.blockedDueToMinDifference).to.equal(true);
        clock.advanceUs(1);
        expect(await limiter.limit('user')).to.equal(false);
      });

      it('reports waits rounded up to whole milliseconds', async () => {
        const limiter = make({ interval: 1000, maxInInterval: 2, minDifference: 200 });
        await limiter.limit('user');
        clock.advanceUs(300_500);
        const info = await limiter.wouldLimitWithInfo('user');
        // The first action leaves the window 699.5 ms from now: reported as 700, never short.
        expect(info).to.include({ blocked: false, millisecondsUntilAllowed: 700 });
      });

      it('blocks for both reasons at once and reports the longer wait', async () => {
        const limiter = make({ interval: 5000, maxInInterval: 2, minDifference: 1000 });
        await limiter.limit('user');
        clock.advanceMs(1000);
        expect(await limiter.limit('user')).to.equal(false);
        clock.advanceMs(100);
        const info = await limiter.limitWithInfo('user');
        expect(info).to.include({ blocked: true, blockedDueToCount: true, blockedDueToMinDifference: true });
        // The window frees up 5000 ms after the second action (4900 ms from now); the gap after 1000 ms.
        expect(info.millisecondsUntilAllowed).to.equal(4900);
      });
    });

    describe('blocked attempts', () => {
      it('count by default: an id that keeps hammering stays blocked', async () => {
        const limiter = make({ interval: 1000, maxInInterval: 2 });
        for (let i = 0; i < 10; i += 1) {
          await limiter.limit('user');
          clock.advanceMs(200);
        }
        // Ten attempts 200 ms apart: the last two are in the window, so the next is blocked.
        expect(await limiter.limit('user')).to.equal(true);
      });

      if (capabilities.countBlockedFalse) {
        it('do not count with countBlocked: false', async () => {
          const limiter = make({ interval: 1000, maxInInterval: 2, countBlocked: false });
          expect(await limiter.limit('user')).to.equal(false);
          clock.advanceMs(100);
          expect(await limiter.limit('user')).to.equal(false);
          for (let i = 0; i < 5; i += 1) {
            clock.advanceMs(100);
            expect(await limiter.limit('user')).to.equal(true);
          }
          clock.advanceMs(400); // 1000 ms after the first allowed action
          expect(await limiter.limit('user')).to.equal(false);
        });
      }
    });

    describe('dry runs', () => {
      it('wouldLimitWithInfo returns exactly what limitWithInfo then returns, and records nothing', async () => {
        const limiter = make({ interval: 1000, maxInInterval: 2, minDifference: 100 });
        for (let i = 0; i < 5; i += 1) {
          const peek = await limiter.wouldLimitWithInfo('user');
          expect(await limiter.wouldLimitWithInfo('user')).to.deep.equal(peek);
          expect(await limiter.limitWithInfo('user')).to.deep.equal(peek);
          clock.advanceMs(150);
        }
      });

      it('wouldLimit on a fresh id is false and leaves it fresh', async () => {
        const limiter = make({ maxInInterval: 1 });
        for (let i = 0; i < 3; i += 1) expect(await limiter.wouldLimit('fresh')).to.equal(false);
        expect(await limiter.limitWithInfo('fresh')).to.include({ blocked: false, actionsRemaining: 0 });
      });
    });

    describe('ids', () => {
      it('treats a number as its decimal string', async () => {
        const limiter = make({ maxInInterval: 1 });
        expect(await limiter.limit(42)).to.equal(false);
        expect(await limiter.limit('42')).to.equal(true);
      });

      it('keeps ids apart whatever characters they contain', async () => {
        const limiter = make({ maxInInterval: 1 });
        const ids = ['a:b', 'a', 'b', '{a}', 'a}', '{', '}', ':', '%7B', '%', 'a b', 'ünï', '😀', '\uD800', '\uDBFF', '\0', 'x'.repeat(10_000)];
        for (const id of ids) expect(await limiter.limit(id), `first attempt of ${JSON.stringify(id).slice(0, 20)}`).to.equal(false);
        for (const id of ids) expect(await limiter.limit(id), `second attempt of ${JSON.stringify(id).slice(0, 20)}`).to.equal(true);
      });

      it('rejects an id that is not a non-empty string or a finite number with a TypeError', async () => {
        const limiter = make();
        for (const bad of ['', NaN, Infinity, null, undefined, {}, [], true]) {
          let caught: unknown;
          try {
            await limiter.limit(bad as never);
          } catch (error) {
            caught = error;
          }
          expect(caught, JSON.stringify(bad) ?? 'undefined').to.be.instanceOf(TypeError);
        }
      });

      it('keeps limiters with different namespaces apart', async () => {
        const first = make({ maxInInterval: 1, namespace: 'first' });
        const second = make({ maxInInterval: 1, namespace: 'second' });
        expect(await first.limit('user')).to.equal(false);
        expect(await second.limit('user')).to.equal(false);
        expect(await first.limit('user')).to.equal(true);
      });
    });

    describe('clear', () => {
      it('forgets an id', async () => {
        const limiter = make({ maxInInterval: 1, minDifference: 500 });
        await limiter.limit('user');
        await limiter.limit('other');
        await limiter.clear('user');
        expect(await limiter.limit('user')).to.equal(false);
        expect(await limiter.limit('other')).to.equal(true);
      });
    });

    describeModelTest(() => create, capabilities);
  });
}
