// The behavioural contract of RateLimiterStack (SPEC.md "Stacking"), written
// once and run against every store: each backend's test file calls
// describeStackContract with the same factory it gives describeLimiterContract.
// Examples on a TestClock first, then a randomized model test against the
// independent reference of test/support/reference-stack.ts.

import { expect } from 'chai';
import { RateLimiterStack, RollingRateLimiter, type StackRateLimitInfo } from '../../src/index.js';
import { SeededRandom } from '../support/random.js';
import { limitInfoOf, ReferenceStack, type ReferenceTierRules } from '../support/reference-stack.js';
import { TestClock } from '../support/test-clock.js';
import type { ContractOptions, LimiterFactory } from './limiter-contract.js';

export interface StackContractOptions {
  /** How many random schedules the stacked model test runs (MODEL_SCHEDULES overrides it). */
  readonly modelSchedules: number;
  /** Whether the model test also gives tiers `useScript: true` (Redis clients that run scripts). */
  readonly useScript?: boolean;
  /**
   * Builds a limiter on a different store than the backend's (e.g. an
   * in-memory one next to Redis): the stack must refuse to stack it with the
   * backend's limiters. Omitted where no other store is at hand.
   */
  readonly foreignLimiter?: (options: ContractOptions) => RollingRateLimiter;
  /**
   * Whether each limiter keeps its state apart (in memory): two limiters with
   * one namespace then never share keys, and stack together.
   */
  readonly ownStatePerLimiter?: boolean;
}

const MINUTE = 60_000;

/** Expects `build` to throw a TypeError whose message matches `message`. */
function expectTypeError(build: () => unknown, message: RegExp): void {
  let caught: unknown;
  try {
    build();
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected a TypeError').to.be.instanceOf(TypeError);
  expect((caught as TypeError).message).to.match(message);
}

export function describeStackContract(backend: string, factory: () => LimiterFactory, options: StackContractOptions): void {
  describe(`RateLimiterStack contract on ${backend}`, () => {
    let create: LimiterFactory;
    let clock: TestClock;
    let tierCounter = 0;
    before(() => {
      create = factory();
    });
    beforeEach(() => {
      clock = new TestClock();
    });
    /** A limiter on the backend; each gets its own namespace unless one is given (the stack refuses duplicates). */
    const make = (overrides: Partial<ContractOptions> = {}): RollingRateLimiter => {
      tierCounter += 1;
      return create({ interval: 1000, maxInInterval: 3, clock: clock.read, namespace: `tier-${tierCounter}`, ...overrides });
    };
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

    describe('the push-notification case: 10 per minute and 1 per 3 s per teacher', () => {
      it('blocks a quick second push on the 3 s tier and the 11th in a minute on the minute tier, with the true wait', async () => {
        const perMinute = make({ namespace: 'push:minute', interval: MINUTE, maxInInterval: 10 });
        const spacing = make({ namespace: 'push:3s', interval: 3000, maxInInterval: 1 });
        const push = new RateLimiterStack([perMinute, spacing]);

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
        const push = new RateLimiterStack([perMinute, spacing]);

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
        const stack = new RateLimiterStack([daily, spaced]);

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
        const stack = new RateLimiterStack([only]);
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
        const stack = new RateLimiterStack([loose, strict]);

        expect(await stack.limitWithInfo('user')).to.include({ ...allowed, actionsRemaining: 0 });
        const before = await loose.wouldLimitWithInfo('user');
        expect(before).to.deep.equal({ ...allowed, actionsRemaining: 3, millisecondsUntilAllowed: 0 });
        for (let i = 0; i < 3; i += 1) {
          clock.advanceMs(i === 0 ? 0 : 100);
          const blocked = await stack.limitWithInfo('user');
          expect(blocked.tiers.map((tier) => tier.blocked), `blocked attempt ${i}`).to.deep.equal([false, true]);
          expect(blocked.tiers[0], `blocked attempt ${i}`).to.include({ actionsRemaining: 4 });
        }
        expect(await loose.wouldLimitWithInfo('user')).to.deep.equal(before);
      });

      it('a tier with countBlocked: true records the attempt even when another tier blocks', async () => {
        const counting = make({ namespace: 'counting', interval: 10_000, maxInInterval: 5, countBlocked: true });
        const strict = make({ namespace: 'strict', interval: 1000, maxInInterval: 1 });
        const stack = new RateLimiterStack([counting, strict]);

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
        const stack = new RateLimiterStack([open, closed]);
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
        const stack = new RateLimiterStack([a, b, c]);
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
        const stack = new RateLimiterStack([a, b]);
        for (let i = 0; i < 3; i += 1) expect(await stack.wouldLimit('fresh')).to.equal(false);
        expect(await a.limitWithInfo('fresh')).to.include({ ...allowed, actionsRemaining: 0 });
        expect(await b.limitWithInfo('fresh')).to.include({ ...allowed, actionsRemaining: 1 });
      });

      it('clear(id) clears every tier and no other id', async () => {
        const a = make({ interval: MINUTE, maxInInterval: 1 });
        const b = make({ interval: MINUTE, maxInInterval: 5, minDifference: 10_000 });
        const stack = new RateLimiterStack([a, b]);
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
        const stack = new RateLimiterStack([perMinute, spacing]);
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
        const forward = new RateLimiterStack([a, b]);
        const backward = new RateLimiterStack([b, a]);
        const first = await forward.limitWithInfo('user');
        const peek = await backward.wouldLimitWithInfo('user');
        expect(peek.tiers.map((tier) => tier.namespace)).to.deep.equal([b.namespace, a.namespace]);
        expect(peek.tiers[1]).to.include({ ...allowed, actionsRemaining: 0, millisecondsUntilAllowed: MINUTE });
        expect(peek.tiers[0]).to.include({ ...blockedByGap, actionsRemaining: 3, millisecondsUntilAllowed: 500 });
        expect(first.tiers[1]).to.include({ actionsRemaining: 4 });
      });

      it('treats a number id as its decimal string and rejects a bad id with a TypeError', async () => {
        const stack = new RateLimiterStack([make({ maxInInterval: 1 }), make({ maxInInterval: 5 })]);
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

    describe('construction', () => {
      it('refuses an empty array or something that is not an array', () => {
        expectTypeError(() => new RateLimiterStack([]), /non-empty array/);
        expectTypeError(() => new RateLimiterStack(undefined as never), /non-empty array/);
        expectTypeError(() => new RateLimiterStack(make() as never), /non-empty array/);
      });

      it('refuses something that is not a RollingRateLimiter, naming its index', () => {
        const limiter = make();
        const lookalike = {
          interval: limiter.interval,
          maxInInterval: limiter.maxInInterval,
          minDifference: limiter.minDifference,
          namespace: 'lookalike',
          countBlocked: true,
          clock: clock.read,
          limit: () => Promise.resolve(false),
          limitWithInfo: () => limiter.limitWithInfo('x'),
          wouldLimit: () => Promise.resolve(false),
          wouldLimitWithInfo: () => limiter.wouldLimitWithInfo('x'),
          clear: () => Promise.resolve(),
        };
        expectTypeError(() => new RateLimiterStack([limiter, lookalike as unknown as RollingRateLimiter]), /limiters\[1\]/);
        expectTypeError(() => new RateLimiterStack([{} as RollingRateLimiter]), /limiters\[0\]/);
        // Holes in a sparse array are not limiters either (map() would skip them).
        // eslint-disable-next-line no-sparse-arrays
        expectTypeError(() => new RateLimiterStack([limiter, ,] as never), /limiters\[1\]/);
        expectTypeError(() => new RateLimiterStack(new Array(2) as never), /limiters\[0\]/);
        expectTypeError(() => new RateLimiterStack([limiter, null as unknown as RollingRateLimiter]), /limiters\[1\]/);
      });

      it('refuses two tiers with the same namespace', () => {
        const limiter = make({ namespace: 'same' });
        expectTypeError(() => new RateLimiterStack([limiter, limiter]), /namespace/);
        const other = make({ namespace: 'other' });
        expectTypeError(() => new RateLimiterStack([limiter, other, limiter]), /namespace.*limiters\[2\]/);
        // Two distinct limiters with one namespace clash only where they share a keyspace (one Redis), not in memory.
        const twin = make({ namespace: limiter.namespace });
        if (twin.namespace === limiter.namespace) {
          if (options.ownStatePerLimiter === true) expect(new RateLimiterStack([limiter, twin]).limiters).to.have.length(2);
          else expectTypeError(() => new RateLimiterStack([limiter, twin]), /namespace/);
        }
      });

      it('refuses limiters with different clocks', () => {
        const other = new TestClock(clock.now);
        const a = make();
        expectTypeError(() => new RateLimiterStack([a, make({ clock: other.read })]), /clock/);
        expectTypeError(() => new RateLimiterStack([a, make({ clock: 'local' })]), /clock/);
        // The same function is the same clock.
        expect(new RateLimiterStack([a, make({ clock: clock.read })]).limiters).to.have.length(2);
      });

      const { foreignLimiter } = options;
      if (foreignLimiter !== undefined) {
        it("refuses limiters that keep their state in another store (they cannot decide in one atomic step)", () => {
          const here = make({ namespace: 'here' });
          const elsewhere = foreignLimiter({ interval: 1000, maxInInterval: 3, clock: clock.read, namespace: 'elsewhere' });
          expectTypeError(() => new RateLimiterStack([here, elsewhere]), /same place/);
          expectTypeError(() => new RateLimiterStack([elsewhere, here]), /same place/);
        });
      }
    });

    describeStackModelTest(() => create, options.modelSchedules, options.useScript === true);
  });
}

// ---------------------------------------------------------------------------
// The randomized model test.

const IDS = ['alice', 'bob', '42'];

type RulesWithoutNamespace = Omit<ReferenceTierRules, 'namespace'>;

/** A tier's rules; a plain tier has no gap rule and does not count blocked attempts. */
function randomTierRules(random: SeededRandom, plain: boolean): RulesWithoutNamespace {
  // Intervals of a second or more: on Redis, keys expire in real time (PEXPIRE), and a schedule must not outlive them.
  const intervalMs = random.pick([1000, 1001, 1500, 3000, 5000, 60_000, 86_400_000]);
  return {
    intervalMs,
    maxInInterval: random.chance(0.2) ? random.int(5, 12) : random.int(1, 4),
    minDifferenceMs: plain || random.chance(0.4) ? 0 : random.pick([1, 999, Math.floor(intervalMs / 3), intervalMs - 1, intervalMs]),
    countBlocked: !plain && random.chance(0.5),
  };
}

type Operation =
  | 'limit'
  | 'limit-verdict'
  | 'peek'
  | 'tier-limit'
  | 'tier-limit-verdict'
  | 'tier-peek'
  | 'other-limit'
  | 'other-peek'
  | 'clear'
  | 'tier-clear';

function randomOperation(random: SeededRandom): Operation {
  const roll = random.next();
  if (roll < 0.3) return 'limit';
  if (roll < 0.5) return 'limit-verdict';
  if (roll < 0.68) return 'peek';
  if (roll < 0.74) return 'tier-limit';
  if (roll < 0.78) return 'tier-limit-verdict';
  if (roll < 0.84) return 'tier-peek';
  if (roll < 0.91) return 'other-limit';
  if (roll < 0.95) return 'other-peek';
  if (roll < 0.98) return 'clear';
  return 'tier-clear';
}

/** A time step that often lands exactly on a tier's window or gap boundary, on the last reported wait, or on 0. */
function randomAdvance(random: SeededRandom, tiers: readonly RulesWithoutNamespace[], lastWaitsMs: readonly number[]): number {
  const tier = random.pick(tiers);
  const intervalUs = tier.intervalMs * 1000;
  const gapUs = tier.minDifferenceMs * 1000;
  const waitUs = (lastWaitsMs.length > 0 ? random.pick(lastWaitsMs) : 0) * 1000;
  return random.pick([
    0,
    0,
    0,
    1,
    random.int(1, 999),
    1000,
    intervalUs,
    intervalUs - 1,
    Math.floor(intervalUs / tier.maxInInterval),
    gapUs,
    Math.max(0, gapUs - 1),
    waitUs,
    waitUs,
    Math.max(0, waitUs - 1),
    random.int(0, Math.min(intervalUs * 2, 10_000_000)),
  ]);
}

/** A random non-empty selection of tier indices, in random order. */
function randomOrder(random: SeededRandom, count: number): number[] {
  const indices = Array.from({ length: count }, (_, i) => i);
  for (let i = indices.length - 1; i > 0; i -= 1) {
    const j = random.int(0, i);
    [indices[i], indices[j]] = [indices[j] as number, indices[i] as number];
  }
  return indices.slice(0, random.int(1, count));
}

function describeStackModelTest(factory: () => LimiterFactory, defaultSchedules: number, tryUseScript: boolean): void {
  const schedules = Number(process.env.MODEL_SCHEDULES ?? defaultSchedules);
  const seed = Number(process.env.MODEL_SEED ?? Date.now() % 2 ** 31);

  it(`matches the reference stack on ${schedules} random schedules (seed ${seed})`, async function () {
    this.timeout(Math.max(60_000, schedules * 300));
    const create = factory();
    const random = new SeededRandom(seed);
    let decisions = 0;
    for (let schedule = 0; schedule < schedules; schedule += 1) {
      // A quarter of the stacks are all plain tiers, the common stack, which Redis decides with a script of its own.
      const plain = random.chance(0.25);
      const rules = Array.from({ length: random.int(2, 3) }, () => randomTierRules(random, plain));
      const clock = new TestClock(Date.UTC(2026, 0, 1) * 1000 + random.int(0, 1e9));
      // Clocks that disagree, as in the single-limiter model test: a second process 2 s ahead or behind, or a clock stepping back 4 s.
      const timing = random.next();
      const otherOffset = random.chance(0.5) ? 2_000_000 : -2_000_000;
      let skew = 0;
      const read = (): number => clock.now + skew;
      const limiters = rules.map((tier, i) =>
        create({
          interval: tier.intervalMs,
          maxInInterval: tier.maxInInterval,
          minDifference: tier.minDifferenceMs,
          countBlocked: tier.countBlocked,
          clock: read,
          namespace: `stack-model-${schedule}-tier-${i}`,
          // A tier's own limit() then takes the limit script even with countBlocked: true.
          ...(tryUseScript && random.chance(0.4) ? { useScript: true } : {}),
        }),
      );
      const stack = new RateLimiterStack(limiters);
      // A second stack over some of the same limiters, in another order: it shares their state.
      const otherOrder = randomOrder(random, limiters.length);
      const other = new RateLimiterStack(otherOrder.map((i) => limiters[i] as RollingRateLimiter));
      const reference = new ReferenceStack(rules.map((tier, i) => ({ ...tier, namespace: (limiters[i] as RollingRateLimiter).namespace })));
      const lastWaits = new Map<string, number[]>();

      const length = random.chance(0.15) ? random.int(60, 120) : random.int(10, 40);
      for (let step = 0; step < length; step += 1) {
        const id = random.pick(IDS);
        const operation = randomOperation(random);
        const tierIndex = random.int(0, limiters.length - 1);
        const advanceUs = randomAdvance(random, rules, lastWaits.get(id) ?? []);
        if (timing < 0.15 && random.chance(0.1)) clock.advanceUs(-4_000_000);
        else clock.advanceUs(advanceUs);
        skew = timing >= 0.15 && timing < 0.4 && random.chance(0.5) ? otherOffset : 0;
        const now = read();
        // '42' is sometimes passed as the number 42: the same id.
        const libraryId = id === '42' && random.chance(0.5) ? 42 : id;
        const where =
          `seed ${seed}, schedule ${schedule}, step ${step}, t ${now} (skew ${skew / 1e6} s), ${operation}` +
          `${operation.startsWith('tier') ? ` on tier ${tierIndex}` : ''}${operation.startsWith('other') ? ` on tiers [${otherOrder.join(', ')}]` : ''}` +
          ` ${JSON.stringify(libraryId)}, tiers ${JSON.stringify(rules)}`;

        switch (operation) {
          case 'clear':
            await stack.clear(libraryId);
            reference.clear(id);
            continue;
          case 'tier-clear':
            await (limiters[tierIndex] as RollingRateLimiter).clear(libraryId);
            reference.clear(id, [tierIndex]);
            continue;
          case 'limit':
          case 'peek': {
            const actual: StackRateLimitInfo =
              operation === 'limit' ? await stack.limitWithInfo(libraryId) : await stack.wouldLimitWithInfo(libraryId);
            const expected = operation === 'limit' ? reference.attempt(id, now) : reference.peek(id, now);
            expect(actual, where).to.deep.equal(expected);
            lastWaits.set(id, [expected.millisecondsUntilAllowed, ...expected.tiers.map((tier) => tier.millisecondsUntilAllowed)]);
            break;
          }
          case 'limit-verdict': {
            // limit() is limitWithInfo().blocked: only the verdict to compare.
            const expected = reference.attempt(id, now);
            expect(await stack.limit(libraryId), where).to.equal(expected.blocked);
            lastWaits.set(id, [expected.millisecondsUntilAllowed]);
            break;
          }
          case 'tier-limit-verdict': {
            const expected = reference.attempt(id, now, [tierIndex]);
            expect(await (limiters[tierIndex] as RollingRateLimiter).limit(libraryId), where).to.equal(expected.blocked);
            lastWaits.set(id, [expected.millisecondsUntilAllowed]);
            break;
          }
          case 'other-limit':
          case 'other-peek': {
            const actual: StackRateLimitInfo =
              operation === 'other-limit' ? await other.limitWithInfo(libraryId) : await other.wouldLimitWithInfo(libraryId);
            const expected =
              operation === 'other-limit' ? reference.attempt(id, now, otherOrder) : reference.peek(id, now, otherOrder);
            expect(actual, where).to.deep.equal(expected);
            lastWaits.set(id, [expected.millisecondsUntilAllowed]);
            break;
          }
          case 'tier-limit':
          case 'tier-peek': {
            const limiter = limiters[tierIndex] as RollingRateLimiter;
            const actual = operation === 'tier-limit' ? await limiter.limitWithInfo(libraryId) : await limiter.wouldLimitWithInfo(libraryId);
            const expected =
              operation === 'tier-limit' ? reference.attempt(id, now, [tierIndex]) : reference.peek(id, now, [tierIndex]);
            expect(actual, where).to.deep.equal(limitInfoOf(expected));
            lastWaits.set(id, [expected.millisecondsUntilAllowed]);
            break;
          }
        }
        decisions += 1;
      }
      for (const id of IDS) await stack.clear(id);
    }
    expect(decisions).to.be.greaterThan(schedules * 8);
    console.log(`      stack model test: ${schedules} schedules, ${decisions} decisions compared (seed ${seed})`);
  });
}
