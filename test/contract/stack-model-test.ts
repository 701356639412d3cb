// The randomized model test of RateLimiterStack: random stacks of two or
// three tiers on one backend (a quarter of them plain tiers, the common
// stack), a second stack over some of the same limiters in another order, and
// the tiers' limiters used alone, under clocks that disagree and with calls
// that reach the store late (by up to the 2 s timeout) and out of stamp
// order; attempts with
// and without action ids (retries of ids admitted, blocked and undone
// earlier), undo and clear through the stack and through a tier, dry runs;
// every answer compared field by field with the independent reference of
// test/support/reference-stack.ts.
//
// Costs (docs/semantics.md, "Costs"): two in five tiers count cost
// (`maxCostInInterval`), so stacks mix action tiers and cost tiers (RPM and
// TPM); attempts and dry runs carry random costs (none, 1, near or exactly
// the smallest cost tier's maximum, what the last answer said remains);
// settle() through the stack and through a tier (an action tier's limiter
// refuses it), of admitted, blocked, undone and unknown action ids, down, to
// 0 and up; calls with a bad cost (or a cost where no tier counts cost)
// reject with a TypeError or RangeError. Every field compared, costRemaining
// and the tiers' maxCostInInterval among them. Set
// MODEL_SCHEDULES to run more (or fewer) schedules, and MODEL_SEED to replay
// one run. describeStackContract runs it on every backend.

import { expect } from 'chai';
import { RateLimiterStack, type RollingRateLimiter } from '../../src/index.js';
import { SeededRandom } from '../support/random.js';
import { countsCost, limitInfoOf, maxOf, ReferenceStack, type ReferenceStackInfo, type ReferenceTierRules } from '../support/reference-stack.js';
import { TestClock } from '../support/test-clock.js';
import {
  AdmissionLog,
  expectOutcome,
  outcomeOf,
  noteAdmitted,
  randomActionId,
  randomAdvance,
  randomBadCost,
  randomBadSettleCost,
  randomCost,
  randomLateness,
  randomMaxCost,
  randomSettleActionId,
  randomSettleAdvance,
  randomSettleId,
  randomSettleCost,
  shown,
  type Outcome,
} from './model-schedule.js';
import type { LimiterFactory } from './limiter-contract.js';

const IDS = ['alice', 'bob', '42'];

type RulesWithoutNamespace = Omit<ReferenceTierRules, 'namespace'>;

/** A tier's rules; a plain tier has no gap rule and does not count blocked attempts. */
function randomTierRules(random: SeededRandom, plain: boolean, byCost: boolean): RulesWithoutNamespace {
  // Intervals of five seconds or more: keys expire in real time (PEXPIRE on Redis, the wall clock in memory), and a
  // schedule on a loaded machine must not outlive them.
  const intervalMs = random.pick([5000, 5001, 7500, 15_000, 60_000, 86_400_000]);
  return {
    intervalMs,
    ...(byCost ? { maxCostInInterval: randomMaxCost(random) } : { maxInInterval: random.chance(0.2) ? random.int(5, 12) : random.int(1, 4) }),
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
  | 'tier-undo'
  | 'settle'
  | 'tier-settle'
  | 'bad-cost'
  | 'bad-settle';

function randomOperation(random: SeededRandom, withCost: boolean): Operation {
  if (random.chance(0.08)) return random.chance(0.6) ? 'undo' : 'tier-undo';
  if (withCost && random.chance(0.1)) return random.chance(0.75) ? 'settle' : 'tier-settle';
  if (random.chance(0.02)) return random.chance(0.7) ? 'bad-cost' : 'bad-settle';
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

  it(`matches the reference stack on ${schedules} random schedules of every operation, stacks of action and cost tiers among them (seed ${seed})`, async function () {
    this.timeout(Math.max(60_000, schedules * 300));
    const create = factory();
    const random = new SeededRandom(seed);
    let decisions = 0;
    let concurrent = 0;
    let lateDecisions = 0;
    let costDecisions = 0;
    let settlements = 0;
    let settled = 0;
    let rejected = 0;
    for (let schedule = 0; schedule < schedules; schedule += 1) {
      // A quarter of the stacks are all plain tiers (no gap rule, countBlocked: false), the common stack; two in five
      // tiers count cost.
      const plain = random.chance(0.25);
      const rules = Array.from({ length: random.int(2, 3) }, () => randomTierRules(random, plain, random.chance(0.4)));
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
          ...(countsCost(tier) ? { maxCostInInterval: maxOf(tier) } : { maxInInterval: maxOf(tier) }),
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
      const withCost = reference.countsCost();
      const lastWaits = new Map<string, number[]>();
      // Per id, the cost the last answer said remains; per id and action id, the cost last reserved.
      const lastCostRemaining = new Map<string, number>();
      const reserved = new Map<string, number>();
      const admittedLately = new Map<string, string[]>();
      let follow: { id: string; actionId: string } | undefined;
      // On one clock (calls late or not), every tier's admissions (answered, not undone, since the last clear) against the promise itself.
      const oneClock = timing >= 0.4;
      const late = timing >= 0.4 && timing < 0.65;
      const admissions = rules.map((tier) => new AdmissionLog(tier.intervalMs * 1000, maxOf(tier), tier.minDifferenceMs * 1000));
      let group: { actual: Promise<Outcome>; expected: Outcome; where: string }[] = [];
      const flushGroup = async (): Promise<void> => {
        const actuals = await Promise.all(group.map((call) => call.actual));
        group.forEach((call, i) => expectOutcome(actuals[i] as Outcome, call.expected, call.where));
        if (group.length > 1) concurrent += group.length;
        group = [];
      };

      const length = random.chance(0.15) ? random.int(60, 120) : random.int(10, 40);
      for (let step = 0; step < length; step += 1) {
        // Often the step after a reservation settles it (the call it paid for has returned).
        const followUp = follow !== undefined && random.chance(0.5) ? follow : undefined;
        follow = undefined;
        const operation = followUp === undefined ? randomOperation(random, withCost) : random.chance(0.8) ? 'settle' : 'tier-settle';
        const settling = operation === 'settle' || operation === 'tier-settle';
        const id = followUp?.id ?? (settling ? randomSettleId(random, IDS, admittedLately) : random.pick(IDS));
        const forUndo = operation.endsWith('undo') || operation.endsWith('settle');
        const actionId =
          followUp !== undefined
            ? followUp.actionId
            : operation.endsWith('peek') || operation.endsWith('clear')
              ? undefined
              : settling
                ? randomSettleActionId(random, admittedLately.get(id))
                : randomActionId(random, forUndo);
        const tierIndex = random.int(0, limiters.length - 1);
        const advanceUs = settling
          ? randomSettleAdvance(random, random.pick(rules), random.pick(lastWaits.get(id) ?? [0]))
          : randomStackAdvance(random, rules, lastWaits.get(id) ?? []);
        if (timing < 0.15 && random.chance(0.1)) clock.advanceUs(-4_000_000);
        else clock.advanceUs(advanceUs);
        skew =
          timing >= 0.15 && timing < 0.4 && random.chance(0.5) ? otherOffset : late ? -randomLateness(random, rules[tierIndex] as RulesWithoutNamespace) : 0;
        if (late) lateDecisions += 1;
        const now = read();
        // '42' is sometimes passed as the number 42: the same id.
        const libraryId = id === '42' && random.chance(0.5) ? 42 : id;
        // The call's target: the stack, a tier's limiter alone, or the other stack (bad calls and settlements go to any).
        const on = operation.startsWith('tier')
          ? 'tier'
          : operation.startsWith('other')
            ? 'other'
            : operation.startsWith('bad')
              ? random.pick(['stack', 'tier', 'other'] as const)
              : 'stack';
        const [target, tiers] =
          on === 'tier' ? [limiters[tierIndex] as RollingRateLimiter, [tierIndex]] : on === 'other' ? [other, otherOrder] : [stack, reference.allTiers];
        const costTiers = tiers.filter((tier) => countsCost(rules[tier] as RulesWithoutNamespace));
        // The smallest maximum of the call's cost tiers: costs are drawn to fit it.
        const costMax = costTiers.length === 0 ? 10 : Math.min(...costTiers.map((tier) => maxOf(rules[tier] as RulesWithoutNamespace)));
        const reservedKey = `${id}\0${actionId}`;
        const cost: unknown =
          operation === 'bad-cost'
            ? costTiers.length === 0
              ? random.pick([1, 2, 3])
              : randomBadCost(random, costMax).cost
            : operation === 'bad-settle'
              ? costTiers.length === 0
                ? random.pick([0, 1, 5])
                : randomBadSettleCost(random, Math.max(...costTiers.map((tier) => maxOf(rules[tier] as RulesWithoutNamespace)))).cost
              : operation.endsWith('settle')
                ? randomSettleCost(random, costMax, reserved.get(reservedKey))
                : costTiers.length > 0 && !operation.endsWith('clear') && !operation.endsWith('undo')
                  ? randomCost(random, costMax, lastCostRemaining.get(id))
                  : undefined;
        const options =
          actionId === undefined && cost === undefined
            ? undefined
            : { ...(actionId === undefined ? {} : { actionId }), ...(cost === undefined ? {} : { cost: cost as number }) };
        /** The model's answer to an attempt on `tiers`, its admission logged in each of them. */
        const attempt = (): ReturnType<ReferenceStack['attempt']> => {
          const answer = reference.attempt(id, now, tiers, actionId, cost as number | undefined);
          if (!answer.blocked && answer.alreadyAdmitted !== true) {
            if (actionId !== undefined) {
              reserved.set(reservedKey, (cost as number | undefined) ?? 1);
              noteAdmitted(admittedLately, id, actionId);
              if (tiers.some((tier) => countsCost(rules[tier] as RulesWithoutNamespace))) follow = { id, actionId };
            }
            if (oneClock) {
              for (const tier of tiers) {
                const weight = countsCost(rules[tier] as RulesWithoutNamespace) ? ((cost as number | undefined) ?? 1) : 1;
                (admissions[tier] as AdmissionLog).admit(id, now, actionId, where, weight);
              }
            }
          }
          return answer;
        };
        const forget = (what: 'undo' | 'clear'): void => {
          for (const tier of tiers) {
            if (what === 'clear') (admissions[tier] as AdmissionLog).clear(id);
            else (admissions[tier] as AdmissionLog).undo(id, actionId as string);
          }
        };
        const where =
          `seed ${seed}, schedule ${schedule}, step ${step}, t ${now} (skew ${skew / 1e6} s), ${operation}` +
          `${on === 'tier' ? ` on tier ${tierIndex}` : ''}${on === 'other' ? ` on tiers [${otherOrder.join(', ')}]` : ''}` +
          ` ${JSON.stringify(libraryId)}${actionId === undefined ? '' : ` action ${actionId}`}${cost === undefined ? '' : ` cost ${shown(cost)}`}` +
          `, tiers ${JSON.stringify(rules)}; the model held ${tiers.map((tier) => `[${reference.describeRecords(tier, id)}]`).join(' ')}`;

        // Bad calls reject and change nothing: they join the group (a batch's bad call fails alone).
        if (operation === 'bad-cost' || operation === 'bad-settle') {
          const rejection = operation === 'bad-cost' ? reference.rejectsCost(cost, tiers) : reference.rejectsSettle(cost, tiers);
          if (rejection === undefined) throw new Error(`${where}: the schedule drew a valid call as a bad one`);
          const method = random.pick(['limit', 'limitWithInfo', 'wouldLimit', 'wouldLimitWithInfo'] as const);
          const actual =
            operation === 'bad-settle'
              ? outcomeOf(() => target.settle(libraryId, actionId as string, cost as number))
              : method === 'limit' || method === 'limitWithInfo'
                ? outcomeOf(() => target[method](libraryId, options))
                : outcomeOf(() => target[method](libraryId, { cost: cost as number }));
          group.push({
            actual,
            expected: { error: rejection.error },
            where: `${where}${operation === 'bad-cost' ? ` through ${method}` : ''} (${rejection.why})`,
          });
          rejected += 1;
          if (!batch || group.length === 8 || random.chance(0.3)) await flushGroup();
          continue;
        }

        // Clears, undos and settlements settle the calls in flight first; attempts and dry runs join the group (one
        // call at a time unless batched, where groups of up to eight go to Redis together, each reading the clock as
        // it is made).
        if (operation.endsWith('clear') || operation.endsWith('undo') || operation.endsWith('settle')) {
          await flushGroup();
          if (operation.endsWith('clear')) {
            await target.clear(libraryId);
            reference.clear(id, tiers);
            forget('clear');
          } else if (operation.endsWith('undo')) {
            expect(await target.undo(libraryId, actionId as string), where).to.equal(reference.undo(id, actionId as string, tiers));
            forget('undo');
          } else {
            settlements += 1;
            const actual = await outcomeOf(() => target.settle(libraryId, actionId as string, cost as number));
            const rejection = reference.rejectsSettle(cost, tiers);
            if (rejection !== undefined) {
              rejected += 1;
              expectOutcome(actual, { error: rejection.error }, `${where} (${rejection.why})`);
            } else {
              const settledTiers = reference.settleIn(id, actionId as string, cost as number, now, tiers);
              expectOutcome(actual, { value: settledTiers.length > 0 }, where);
              for (const tier of settledTiers) (admissions[tier] as AdmissionLog).settle(id, actionId as string, cost as number);
              if (settledTiers.length > 0) settled += 1;
            }
          }
          continue;
        }
        const dryRun = operation.endsWith('peek');
        const rejection = reference.rejectsCost(cost, tiers);
        if (rejection !== undefined) throw new Error(`${where}: the schedule drew a bad cost for a valid call (${rejection.why})`);
        const expected = dryRun ? reference.peek(id, now, tiers, cost as number | undefined) : attempt();
        const limiterAnswer = (info: ReferenceStackInfo): unknown => (target === stack || target === other ? info : limitInfoOf(info));
        const actual = outcomeOf(() =>
          operation.endsWith('verdict')
            ? target.limit(libraryId, options)
            : dryRun
              ? cost === undefined
                ? target.wouldLimitWithInfo(libraryId)
                : target.wouldLimitWithInfo(libraryId, { cost: cost as number })
              : target.limitWithInfo(libraryId, options),
        );
        group.push({ actual, expected: { value: operation.endsWith('verdict') ? expected.blocked : limiterAnswer(expected) }, where });
        lastWaits.set(id, [expected.millisecondsUntilAllowed, ...expected.tiers.map((tier) => tier.millisecondsUntilAllowed)]);
        if (expected.costRemaining !== undefined) lastCostRemaining.set(id, expected.costRemaining);
        decisions += 1;
        if (costTiers.length > 0) costDecisions += 1;
        if (!batch || group.length === 8 || random.chance(0.3)) await flushGroup();
      }
      await flushGroup();
      for (const id of IDS) await stack.clear(id);
    }
    expect(decisions).to.be.greaterThan(schedules * 8);
    if (batch) expect(concurrent, 'decisions made concurrently, in batches').to.be.greaterThan(schedules * 3);
    expect(lateDecisions, 'decisions late by up to the timeout, out of stamp order').to.be.greaterThan(schedules);
    expect(costDecisions, 'decisions through a cost tier').to.be.greaterThan(schedules); // room for chance on short runs
    expect(settlements, 'settlements').to.be.greaterThan(schedules / 6);
    expect(settled, 'settlements that settled an admitted action').to.be.greaterThan(schedules / 20);
    console.log(
      `      stack model test: ${schedules} schedules, ${decisions} decisions compared, ${lateDecisions} of them late by up to the 2 s timeout` +
        `${batch ? ` (${concurrent} in concurrent groups of 2 to 8)` : ''}, ${costDecisions} through a cost tier; ` +
        `${settlements} settlements of which ${settled} settled; ${rejected} calls rejected for their cost (seed ${seed})`,
    );
  });
}
