// The randomized model test of RateLimiterStack: random stacks of two or
// three tiers on one backend (a quarter of them plain tiers, the common
// stack), a second stack over some of the same limiters in another order, and
// the tiers' limiters used alone, under clocks that disagree and with calls
// that reach the store late (by up to the 2 s timeout) and out of stamp
// order; attempts with
// and without action ids (retries of ids admitted, blocked and undone
// earlier), undo and clear through the stack and through a tier, dry runs;
// every answer compared field by field with the independent reference of
// test/support/reference-stack.ts. Set
// MODEL_SCHEDULES to run more (or fewer) schedules, and MODEL_SEED to replay
// one run. describeStackContract runs it on every backend.

import { expect } from 'chai';
import { RateLimiterStack, type RollingRateLimiter } from '../../src/index.js';
import { SeededRandom } from '../support/random.js';
import { limitInfoOf, ReferenceStack, type ReferenceStackInfo, type ReferenceTierRules } from '../support/reference-stack.js';
import { TestClock } from '../support/test-clock.js';
import { AdmissionLog, randomActionId, randomAdvance, randomLateness } from './model-schedule.js';
import type { LimiterFactory } from './limiter-contract.js';

const IDS = ['alice', 'bob', '42'];

type RulesWithoutNamespace = Omit<ReferenceTierRules, 'namespace'>;

/** A tier's rules; a plain tier has no gap rule and does not count blocked attempts. */
function randomTierRules(random: SeededRandom, plain: boolean): RulesWithoutNamespace {
  // Intervals of five seconds or more: keys expire in real time (PEXPIRE on Redis, the wall clock in memory), and a
  // schedule on a loaded machine must not outlive them.
  const intervalMs = random.pick([5000, 5001, 7500, 15_000, 60_000, 86_400_000]);
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
  | 'tier-clear'
  | 'undo'
  | 'tier-undo';

function randomOperation(random: SeededRandom): Operation {
  if (random.chance(0.08)) return random.chance(0.6) ? 'undo' : 'tier-undo';
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
function randomStackAdvance(random: SeededRandom, tiers: readonly RulesWithoutNamespace[], lastWaitsMs: readonly number[]): number {
  return randomAdvance(random, random.pick(tiers), lastWaitsMs.length > 0 ? random.pick(lastWaitsMs) : 0);
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

export function describeStackModelTest(
  factory: () => LimiterFactory,
  defaultSchedules: number,
  batch: boolean,
  stackOf: (limiters: readonly RollingRateLimiter[]) => RateLimiterStack = (limiters) => new RateLimiterStack(limiters),
): void {
  const schedules = Number(process.env.MODEL_SCHEDULES ?? defaultSchedules);
  const seed = Number(process.env.MODEL_SEED ?? Date.now() % 2 ** 31);

  it(`matches the reference stack on ${schedules} random schedules of every operation (seed ${seed})`, async function () {
    this.timeout(Math.max(60_000, schedules * 300));
    const create = factory();
    const random = new SeededRandom(seed);
    let decisions = 0;
    let concurrent = 0;
    let lateDecisions = 0;
    for (let schedule = 0; schedule < schedules; schedule += 1) {
      // A quarter of the stacks are all plain tiers (no gap rule, countBlocked: false), the common stack.
      const plain = random.chance(0.25);
      const rules = Array.from({ length: random.int(2, 3) }, () => randomTierRules(random, plain));
      const clock = new TestClock(Date.UTC(2026, 0, 1) * 1000 + random.int(0, 1e9));
      // Clocks that disagree, as in the single-limiter model test: a second process 2 s ahead or behind, or a clock
      // stepping back 4 s; or calls late by up to the timeout, out of stamp order.
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
        }),
      );
      const stack = stackOf(limiters);
      // A second stack over some of the same limiters, in another order: it shares their state.
      const otherOrder = randomOrder(random, limiters.length);
      const other = stackOf(otherOrder.map((i) => limiters[i] as RollingRateLimiter));
      const reference = new ReferenceStack(rules.map((tier, i) => ({ ...tier, namespace: (limiters[i] as RollingRateLimiter).namespace })));
      const lastWaits = new Map<string, number[]>();
      // On one clock (calls late or not), every tier's admissions (answered, not undone, since the last clear) against the promise itself.
      const oneClock = timing >= 0.4;
      const late = timing >= 0.4 && timing < 0.65;
      const admissions = rules.map((tier) => new AdmissionLog(tier.intervalMs * 1000, tier.maxInInterval, tier.minDifferenceMs * 1000));
      let group: { actual: Promise<unknown>; expected: unknown; where: string }[] = [];
      const settleGroup = async (): Promise<void> => {
        const actuals = await Promise.all(group.map((call) => call.actual));
        group.forEach((call, i) => expect(actuals[i], call.where).to.deep.equal(call.expected));
        if (group.length > 1) concurrent += group.length;
        group = [];
      };

      const length = random.chance(0.15) ? random.int(60, 120) : random.int(10, 40);
      for (let step = 0; step < length; step += 1) {
        const id = random.pick(IDS);
        const operation = randomOperation(random);
        const actionId =
          !operation.endsWith('peek') && operation !== 'clear' && operation !== 'tier-clear' ? randomActionId(random, operation.endsWith('undo')) : undefined;
        const options = actionId === undefined ? undefined : { actionId };
        const tierIndex = random.int(0, limiters.length - 1);
        const advanceUs = randomStackAdvance(random, rules, lastWaits.get(id) ?? []);
        if (timing < 0.15 && random.chance(0.1)) clock.advanceUs(-4_000_000);
        else clock.advanceUs(advanceUs);
        skew =
          timing >= 0.15 && timing < 0.4 && random.chance(0.5) ? otherOffset : late ? -randomLateness(random, rules[tierIndex] as RulesWithoutNamespace) : 0;
        if (late) lateDecisions += 1;
        const now = read();
        // '42' is sometimes passed as the number 42: the same id.
        const libraryId = id === '42' && random.chance(0.5) ? 42 : id;
        /** The model's answer to an attempt on `tiers`, its admission logged in each of them. */
        const attempt = (tiers: readonly number[]): ReturnType<ReferenceStack['attempt']> => {
          const answer = reference.attempt(id, now, tiers, actionId);
          if (oneClock && !answer.blocked && answer.alreadyAdmitted !== true) {
            for (const tier of tiers) (admissions[tier] as AdmissionLog).admit(id, now, actionId, where);
          }
          return answer;
        };
        const forget = (tiers: readonly number[], what: 'undo' | 'clear'): void => {
          for (const tier of tiers) {
            if (what === 'clear') (admissions[tier] as AdmissionLog).clear(id);
            else (admissions[tier] as AdmissionLog).undo(id, actionId as string);
          }
        };
        const where =
          `seed ${seed}, schedule ${schedule}, step ${step}, t ${now} (skew ${skew / 1e6} s), ${operation}` +
          `${operation.startsWith('tier') ? ` on tier ${tierIndex}` : ''}${operation.startsWith('other') ? ` on tiers [${otherOrder.join(', ')}]` : ''}` +
          ` ${JSON.stringify(libraryId)}${actionId === undefined ? '' : ` action ${actionId}`}, tiers ${JSON.stringify(rules)}`;

        // Clears and undos settle the calls in flight first; attempts and dry runs join the group (one call at a time
        // unless batched, where groups of up to eight go to Redis together, each reading the clock as it is made).
        if (operation === 'clear' || operation === 'tier-clear' || operation === 'undo' || operation === 'tier-undo') {
          await settleGroup();
          const tiers = operation.startsWith('tier') ? [tierIndex] : reference.allTiers;
          const target = operation.startsWith('tier') ? (limiters[tierIndex] as RollingRateLimiter) : stack;
          if (operation.endsWith('clear')) {
            await target.clear(libraryId);
            reference.clear(id, tiers);
            forget(tiers, 'clear');
          } else {
            expect(await target.undo(libraryId, actionId as string), where).to.equal(reference.undo(id, actionId as string, tiers));
            forget(tiers, 'undo');
          }
          continue;
        }
        const [target, tiers] = operation.startsWith('tier')
          ? [limiters[tierIndex] as RollingRateLimiter, [tierIndex]]
          : operation.startsWith('other')
            ? [other, otherOrder]
            : [stack, reference.allTiers];
        const dryRun = operation.endsWith('peek');
        const expected = dryRun ? reference.peek(id, now, tiers) : attempt(tiers);
        const limiterAnswer = (info: ReferenceStackInfo): unknown => (target === stack || target === other ? info : limitInfoOf(info));
        const actual: Promise<unknown> = operation.endsWith('verdict')
          ? target.limit(libraryId, options)
          : dryRun
            ? target.wouldLimitWithInfo(libraryId)
            : target.limitWithInfo(libraryId, options);
        group.push({ actual, expected: operation.endsWith('verdict') ? expected.blocked : limiterAnswer(expected), where });
        lastWaits.set(id, [expected.millisecondsUntilAllowed, ...expected.tiers.map((tier) => tier.millisecondsUntilAllowed)]);
        decisions += 1;
        if (!batch || group.length === 8 || random.chance(0.3)) await settleGroup();
      }
      await settleGroup();
      for (const id of IDS) await stack.clear(id);
    }
    expect(decisions).to.be.greaterThan(schedules * 8);
    if (batch) expect(concurrent, 'decisions made concurrently, in batches').to.be.greaterThan(schedules * 3);
    expect(lateDecisions, 'decisions late by up to the timeout, out of stamp order').to.be.greaterThan(schedules * 2);
    console.log(
      `      stack model test: ${schedules} schedules, ${decisions} decisions compared, ${lateDecisions} of them late by up to the 2 s timeout` +
        `${batch ? ` (${concurrent} in concurrent groups of 2 to 8)` : ''} (seed ${seed})`,
    );
  });
}
