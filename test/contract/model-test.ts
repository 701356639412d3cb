// The randomized model test of one limiter: thousands of random schedules of
// every public operation over several ids, with random rules, run on a store
// and on the independent reference of test/support/reference-stack.ts (a
// limiter is a stack of one tier), and compared field by field:
// limit() and limitWithInfo() with and without an action id (new ones, and
// retries of ids admitted, blocked and undone earlier), undo(), clear(),
// wouldLimit() and wouldLimitWithInfo(). Time steps are drawn so that they
// often land exactly on the window boundary, the gap boundary and the last
// reported wait, and two attempts often share a microsecond. Set MODEL_SCHEDULES to run more (or
// fewer) schedules, and MODEL_SEED to replay one run.
//
// Clocks that disagree: in a quarter of the schedules two processes act on
// the same keys with clocks 2 s apart (either way), and in a sixth one clock
// now and then steps back 4 s. A limiter holds no state of its own but its
// clock, so the two processes are one limiter whose clock reads the acting
// process's time: on Redis the same commands on the same keys as two
// limiters in two processes. Every decision must still be steps 1-7 of docs/semantics.md
// with the caller's time applied to the key as it stands.
//
// Time in flight: in another quarter of the schedules every call reaches the
// store late, by up to the limiter's timeout (2 s), so calls arrive out of
// stamp order; the model applies them in call order, each with its stamp.
//
// On one clock, and with calls late and out of order, the admissions the
// limiter answered (not undone, since the last clear) are also checked
// against the promise itself: at most maxInInterval in any window of stamps,
// and at least minDifference apart.
//
// Costs (docs/semantics.md, "Costs"): wherever action ids run (every store
// that runs the decide script, and memory; the MULTI path refuses cost
// tiers), three in ten limiters count cost (`maxCostInInterval`, mostly
// 5 to 40 so that windows fill, sometimes 1 to 4 or large), each attempt and
// dry run with a random cost (none, 1, near or exactly the maximum, exactly
// what the last answer said remains); and settle() of admitted, blocked,
// undone and unknown action ids, down, to 0, up above the reservation and
// the maximum, twice to the same cost. Calls with a bad cost (0, negative,
// fractional, not a number, above the maximum, or any cost where nothing
// counts cost) and bad settlements must reject with a TypeError or
// RangeError and change nothing.
//
// Batched (`batch: true` backends): steps run in groups of up to eight
// concurrent calls, each reading the clock as it is called, so a group goes
// to Redis in one script call; every answer must still be the model's, in
// call order.

import { expect } from 'chai';
import type { RollingRateLimiter } from '../../src/index.js';
import { countsCost, limitInfoOf, maxOf, ReferenceStack, type ReferenceTierRules } from '../support/reference-stack.js';
import { SeededRandom } from '../support/random.js';
import { TestClock } from '../support/test-clock.js';
import type { BackendCapabilities, LimiterFactory } from './limiter-contract.js';
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
  randomTiming,
  shown,
  STEP_BACK_US,
  SKEW_US,
  type Outcome,
  type Timing,
} from './model-schedule.js';

const IDS = ['alice', 'bob', '42'];

type Operation = 'limit' | 'limit-verdict' | 'peek' | 'peek-verdict' | 'undo' | 'clear' | 'settle' | 'bad-cost' | 'bad-settle';

function randomRules(random: SeededRandom, countBlockedFalse: boolean, byCost: boolean): Omit<ReferenceTierRules, 'namespace'> {
  // Intervals of five seconds or more: keys expire in real time (PEXPIRE on Redis, the wall clock in memory), and a
  // schedule on a loaded machine must not outlive them.
  const intervalMs = random.pick([5000, 5001, 7500, 15_000, 60_000]);
  return {
    intervalMs,
    ...(byCost ? { maxCostInInterval: randomMaxCost(random) } : { maxInInterval: random.chance(0.2) ? random.int(5, 12) : random.int(1, 4) }),
    minDifferenceMs: random.chance(0.35) ? 0 : random.pick([1, 999, Math.floor(intervalMs / 3), intervalMs - 1, intervalMs]),
    countBlocked: countBlockedFalse ? random.chance(0.5) : true,
  };
}

function randomOperation(random: SeededRandom, withActionIds: boolean, byCost: boolean): Operation {
  if (byCost && withActionIds && random.chance(0.15)) return 'settle';
  if (random.chance(0.015)) return 'bad-cost';
  if (withActionIds && random.chance(0.01)) return 'bad-settle';
  const roll = random.next();
  if (roll < 0.36) return 'limit';
  if (roll < 0.6) return 'limit-verdict';
  if (roll < 0.78) return 'peek';
  if (roll < 0.86) return 'peek-verdict';
  if (roll < 0.97) return withActionIds ? 'undo' : 'limit';
  return 'clear';
}

/** An attempt's options: its action id (single-use or not) and cost, each when given. */
function attemptOptions(actionId: string | undefined, cost: unknown, singleUse = false): { actionId?: string; cost?: number; singleUse?: boolean } | undefined {
  if (actionId === undefined && cost === undefined) return undefined;
  return {
    ...(actionId === undefined ? {} : singleUse ? { actionId, singleUse } : { actionId }),
    ...(cost === undefined ? {} : { cost: cost as number }),
  };
}

export function describeModelTest(factory: () => LimiterFactory, capabilities: BackendCapabilities): void {
  const schedules = Number(process.env.MODEL_SCHEDULES ?? capabilities.modelSchedules);
  const seed = Number(process.env.MODEL_SEED ?? Date.now() % 2 ** 31);
  // Cost tiers run wherever action ids do: every store that runs the decide script, and memory.
  const costs = capabilities.actionIds;

  it(`matches the reference model on ${schedules} random schedules of every operation${costs ? ', costs and settlements among them,' : ''} with skewed and stepping clocks and calls late and out of stamp order (seed ${seed})`, async function () {
    this.timeout(Math.max(60_000, schedules * 200));
    const create = factory();
    const random = new SeededRandom(seed);
    let steps = 0;
    const byTiming: Record<Timing, number> = { 'one clock': 0, 'two clocks': 0, 'steps back': 0, late: 0 };
    const byOperation: Record<string, number> = {};
    let concurrent = 0;
    let costDecisions = 0;
    let settled = 0;
    let rejected = 0;
    for (let schedule = 0; schedule < schedules; schedule += 1) {
      // On a client that runs scripts, some schedules take the MULTI path (`useScript: false`), which has no action ids
      // and no cost tiers.
      const multi = capabilities.multiPath === true && random.chance(0.3);
      const byCost = costs && !multi && random.chance(0.3);
      const rules = randomRules(random, capabilities.countBlockedFalse && !multi, byCost);
      const max = maxOf(rules);
      const withActionIds = capabilities.actionIds && !multi;
      const timing = randomTiming(random);
      const base = new TestClock(Date.UTC(2026, 0, 1) * 1000 + random.int(0, 1e9));
      // The other process's clock runs 2 s ahead or behind; `skew` is the acting process's offset.
      const otherOffset = random.chance(0.5) ? SKEW_US : -SKEW_US;
      let skew = 0;
      const namespace = `model-${schedule}`;
      const limiter: RollingRateLimiter = create({
        interval: rules.intervalMs,
        ...(byCost ? { maxCostInInterval: max } : { maxInInterval: max }),
        minDifference: rules.minDifferenceMs,
        countBlocked: rules.countBlocked,
        clock: () => base.now + skew,
        namespace,
        ...(multi ? { useScript: false } : {}),
      });
      const reference = new ReferenceStack([{ ...rules, namespace: limiter.namespace }]);
      const admissions = new AdmissionLog(rules.intervalMs * 1000, max, rules.minDifferenceMs * 1000);
      // Per id, the last answer's wait and cost remaining (time steps and costs land on them); per id and action id, the cost reserved.
      const lastWaits = new Map<string, number>();
      const lastCostRemaining = new Map<string, number>();
      const reserved = new Map<string, number>();
      const admittedLately = new Map<string, string[]>();
      let follow: { id: string; actionId: string } | undefined;
      // Single-use action ids (as the HTTP middleware makes one per request): fresh, never retried, so the model, which
      // takes them as any action id, answers alike; a blocked one is recorded without it, and an admitted one is
      // settled and undone by it.
      let singleUses = 0;
      const length = random.chance(0.15) ? random.int(60, 120) : random.int(10, 40);
      // Calls made but not awaited yet (batched backends only), each with what the model answered.
      let group: { actual: Promise<Outcome>; expected: Outcome; where: string; onAnswer?: () => void }[] = [];
      const flushGroup = async (): Promise<void> => {
        const actuals = await Promise.all(group.map((call) => call.actual));
        group.forEach((call, i) => {
          expectOutcome(actuals[i] as Outcome, call.expected, call.where);
          call.onAnswer?.();
        });
        if (group.length > 1) concurrent += group.length;
        group = [];
      };
      for (let i = 0; i < length; i += 1) {
        // Often the step after a reservation settles it (the call it paid for has returned).
        const followUp = follow !== undefined && random.chance(0.5) ? follow : undefined;
        follow = undefined;
        const operation = followUp === undefined ? randomOperation(random, withActionIds, byCost) : 'settle';
        const id = followUp?.id ?? (operation === 'settle' ? randomSettleId(random, IDS, admittedLately) : random.pick(IDS));
        if (timing === 'steps back' && random.chance(0.1)) base.advanceUs(-STEP_BACK_US);
        else base.advanceUs((operation === 'settle' ? randomSettleAdvance : randomAdvance)(random, rules, lastWaits.get(id) ?? 0));
        skew = timing === 'two clocks' && random.chance(0.5) ? otherOffset : timing === 'late' ? -randomLateness(random, rules) : 0;
        const now = base.now + skew;
        const dryRun = operation === 'peek' || operation === 'peek-verdict';
        const actionId =
          followUp !== undefined
            ? followUp.actionId
            : !withActionIds || dryRun
              ? undefined
              : operation === 'settle'
                ? randomSettleActionId(random, admittedLately.get(id))
                : (operation === 'limit' || operation === 'limit-verdict') && random.chance(0.15)
                  ? `once-${(singleUses += 1)}`
                  : randomActionId(random, operation === 'undo' || operation === 'bad-settle');
        // The cost of an attempt or dry run: on a cost limiter often given; a bad one for 'bad-cost'.
        const bad =
          operation === 'bad-cost'
            ? byCost
              ? randomBadCost(random, max)
              : { cost: random.pick([1, 2, 3]), error: 'TypeError' as const }
            : operation === 'bad-settle'
              ? byCost
                ? randomBadSettleCost(random, max)
                : { cost: random.pick([0, 1, 5]), error: 'TypeError' as const }
              : undefined;
        const cost =
          operation === 'bad-cost'
            ? bad?.cost
            : operation === 'settle'
              ? randomSettleCost(random, max, reserved.get(`${id}\0${actionId}`))
              : operation === 'bad-settle'
                ? bad?.cost
                : byCost
                  ? randomCost(random, max, lastCostRemaining.get(id))
                  : undefined;
        const where =
          `seed ${seed}, schedule ${schedule} (${timing}), step ${i}, rules ${JSON.stringify(rules)}${multi ? ' useScript: false' : ''}, ` +
          `${operation} ${id}${actionId === undefined ? '' : ` action ${actionId}`}${cost === undefined ? '' : ` cost ${shown(cost)}`} ` +
          `at t ${now} (${skew / 1e6} s${timing === 'late' ? ', late' : ''}); the model held ${reference.describeRecords(0, id)}`;
        byOperation[operation] = (byOperation[operation] ?? 0) + 1;
        if (operation === 'clear' || operation === 'undo' || operation === 'settle') {
          await flushGroup();
          if (operation === 'clear') {
            await limiter.clear(id);
            reference.clear(id);
            admissions.clear(id);
          } else if (operation === 'undo') {
            const removed = await limiter.undo(id, actionId as string);
            expect(removed, where).to.equal(reference.undo(id, actionId as string));
            admissions.undo(id, actionId as string);
          } else {
            const actual = await outcomeOf(() => limiter.settle(id, actionId as string, cost as number));
            const tiers = reference.settleIn(id, actionId as string, cost as number, now);
            expectOutcome(actual, { value: tiers.length > 0 }, where);
            if (tiers.length > 0) {
              admissions.settle(id, actionId as string, cost as number);
              settled += 1;
            }
          }
          continue;
        }
        if (bad !== undefined) {
          // Rejected, and nothing changes: the model is not asked.
          const options = operation === 'bad-settle' ? undefined : { ...(actionId === undefined ? {} : { actionId }), cost: bad.cost as number };
          const method = random.pick(['limit', 'limitWithInfo', 'wouldLimit', 'wouldLimitWithInfo'] as const);
          const actual =
            operation === 'bad-settle'
              ? outcomeOf(() => limiter.settle(id, actionId as string, bad.cost as number))
              : method === 'limit' || method === 'limitWithInfo'
                ? outcomeOf(() => limiter[method](id, options))
                : outcomeOf(() => limiter[method](id, { cost: bad.cost as number }));
          group.push({ actual, expected: { error: bad.error }, where: `${where}${operation === 'bad-cost' ? ` through ${method}` : ''}` });
          rejected += 1;
          if (capabilities.batch !== true || group.length === 8 || random.chance(0.3)) await flushGroup();
          continue;
        }
        const attempt = operation === 'limit' || operation === 'limit-verdict';
        const options = attemptOptions(actionId, cost, actionId?.startsWith('once-') === true);
        // The call reads the clock as it is made; the model answers in call order.
        const actual = outcomeOf(() =>
          operation === 'limit-verdict'
            ? limiter.limit(id, options)
            : operation === 'limit'
              ? limiter.limitWithInfo(id, options)
              : cost === undefined
                ? operation === 'peek'
                  ? limiter.wouldLimitWithInfo(id)
                  : limiter.wouldLimit(id)
                : operation === 'peek'
                  ? limiter.wouldLimitWithInfo(id, { cost: cost as number })
                  : limiter.wouldLimit(id, { cost: cost as number }),
        );
        const answer = limitInfoOf(
          attempt ? reference.attempt(id, now, [0], actionId, cost as number | undefined) : reference.peek(id, now, [0], cost as number | undefined),
        );
        const verdictOnly = operation === 'limit-verdict' || operation === 'peek-verdict';
        const admitted = attempt && !answer.blocked && answer.alreadyAdmitted !== true;
        const weight = countsCost(rules) ? ((cost as number | undefined) ?? 1) : 1;
        if (admitted && actionId !== undefined) {
          reserved.set(`${id}\0${actionId}`, weight);
          noteAdmitted(admittedLately, id, actionId);
          if (byCost) follow = { id, actionId };
        }
        lastWaits.set(id, answer.millisecondsUntilAllowed);
        if (answer.costRemaining !== undefined) lastCostRemaining.set(id, answer.costRemaining);
        group.push({
          actual,
          expected: { value: verdictOnly ? answer.blocked : answer },
          where,
          ...(admitted && (timing === 'one clock' || timing === 'late') ? { onAnswer: () => admissions.admit(id, now, actionId, where, weight) } : {}),
        });
        steps += 1;
        byTiming[timing] += 1;
        if (byCost) costDecisions += 1;
        if (capabilities.batch !== true || group.length === 8 || random.chance(0.3)) await flushGroup();
      }
      await flushGroup();
      for (const id of IDS) await limiter.clear(id);
    }
    expect(steps).to.be.greaterThan(schedules * 10);
    // Each timing is drawn for a fifth to a quarter of the schedules: on a run of 60 schedules that is 12 to 15, give or
    // take 3, so the floors below leave room for chance (about half what a run draws on average).
    expect(byTiming['two clocks'], 'decisions with clocks 2 s apart').to.be.greaterThan(schedules);
    expect(byTiming['steps back'], 'decisions with a clock that steps back').to.be.greaterThan(schedules / 2);
    expect(byTiming.late, 'decisions late by up to the timeout, out of stamp order').to.be.greaterThan(schedules);
    if (capabilities.actionIds) expect(byOperation.undo, 'undos').to.be.greaterThan(schedules / 2);
    if (costs) {
      expect(costDecisions, 'decisions on cost limiters').to.be.greaterThan(schedules); // a third of the schedules, give or take: room for chance on short runs
      expect(byOperation.settle, 'settlements').to.be.greaterThan(schedules / 6);
      expect(settled, 'settlements that settled an admitted action').to.be.greaterThan(schedules / 20);
    }
    expect(rejected, 'calls with a bad cost or settlement').to.be.greaterThan(schedules / 10);
    if (capabilities.batch === true) expect(concurrent, 'decisions made concurrently, in batches').to.be.greaterThan(schedules * 5);
    console.log(
      `      model test: ${schedules} schedules, ${steps} decisions compared ` +
        `(${byTiming['one clock']} on one clock, ${byTiming['two clocks']} with clocks ±2 s apart, ${byTiming['steps back']} with a clock stepping back 4 s, ` +
        `${byTiming.late} late by up to the 2 s timeout, out of stamp order` +
        `${capabilities.batch === true ? `; ${concurrent} in concurrent groups of 2 to 8` : ''}` +
        `${costs ? `; ${costDecisions} on cost limiters, ${byOperation.settle ?? 0} settlements of which ${settled} settled` : ''}; ${rejected} calls rejected for their cost); ` +
        `operations ${JSON.stringify(byOperation)}`,
    );
  });
}
