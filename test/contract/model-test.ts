// The randomized model test of one limiter: thousands of random schedules of
// every public operation over several ids, with random rules, run on a store
// and on the independent reference of test/support/reference-stack.ts (a
// limiter is a stack of one tier), and compared field by field:
// limit() and limitWithInfo() with and without an action id (new ones, and
// retries of ids admitted, blocked and undone earlier), undo(), clear(),
// wouldLimit() and wouldLimitWithInfo(). Time steps are drawn so that they
// often land exactly on the window boundary and the gap boundary, and two
// attempts often share a microsecond. Set MODEL_SCHEDULES to run more (or
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
// Batched (`batch: true` backends): steps run in groups of up to eight
// concurrent calls, each reading the clock as it is called, so a group goes
// to Redis in one script call; every answer must still be the model's, in
// call order.

import { expect } from 'chai';
import type { RollingRateLimiter } from '../../src/index.js';
import { limitInfoOf, ReferenceStack, type ReferenceTierRules } from '../support/reference-stack.js';
import { SeededRandom } from '../support/random.js';
import { TestClock } from '../support/test-clock.js';
import type { BackendCapabilities, LimiterFactory } from './limiter-contract.js';
import { AdmissionLog, randomActionId, randomAdvance, randomLateness, randomTiming, STEP_BACK_US, SKEW_US, type Timing } from './model-schedule.js';

const IDS = ['alice', 'bob', '42'];

type Operation = 'limit' | 'limit-verdict' | 'peek' | 'peek-verdict' | 'undo' | 'clear';

function randomRules(random: SeededRandom, countBlockedFalse: boolean): Omit<ReferenceTierRules, 'namespace'> {
  // Intervals of five seconds or more: keys expire in real time (PEXPIRE on Redis, the wall clock in memory), and a
  // schedule on a loaded machine must not outlive them.
  const intervalMs = random.pick([5000, 5001, 7500, 15_000, 60_000]);
  return {
    intervalMs,
    maxInInterval: random.chance(0.2) ? random.int(5, 12) : random.int(1, 4),
    minDifferenceMs: random.chance(0.35) ? 0 : random.pick([1, 999, Math.floor(intervalMs / 3), intervalMs - 1, intervalMs]),
    countBlocked: countBlockedFalse ? random.chance(0.5) : true,
  };
}

function randomOperation(random: SeededRandom, withActionIds: boolean): Operation {
  const roll = random.next();
  if (roll < 0.36) return 'limit';
  if (roll < 0.6) return 'limit-verdict';
  if (roll < 0.78) return 'peek';
  if (roll < 0.86) return 'peek-verdict';
  if (roll < 0.97) return withActionIds ? 'undo' : 'limit';
  return 'clear';
}

export function describeModelTest(factory: () => LimiterFactory, capabilities: BackendCapabilities): void {
  const schedules = Number(process.env.MODEL_SCHEDULES ?? capabilities.modelSchedules);
  const seed = Number(process.env.MODEL_SEED ?? Date.now() % 2 ** 31);

  it(`matches the reference model on ${schedules} random schedules of every operation, with skewed and stepping clocks and calls late and out of stamp order (seed ${seed})`, async function () {
    this.timeout(Math.max(60_000, schedules * 200));
    const create = factory();
    const random = new SeededRandom(seed);
    let steps = 0;
    const byTiming: Record<Timing, number> = { 'one clock': 0, 'two clocks': 0, 'steps back': 0, late: 0 };
    const byOperation: Record<string, number> = {};
    let concurrent = 0;
    for (let schedule = 0; schedule < schedules; schedule += 1) {
      // On a client that runs scripts, some schedules take the MULTI path (`useScript: false`), which has no action ids.
      const multi = capabilities.multiPath === true && random.chance(0.3);
      const rules = randomRules(random, capabilities.countBlockedFalse && !multi);
      const withActionIds = capabilities.actionIds && !multi;
      const timing = randomTiming(random);
      const base = new TestClock(Date.UTC(2026, 0, 1) * 1000 + random.int(0, 1e9));
      // The other process's clock runs 2 s ahead or behind; `skew` is the acting process's offset.
      const otherOffset = random.chance(0.5) ? SKEW_US : -SKEW_US;
      let skew = 0;
      const namespace = `model-${schedule}`;
      const limiter: RollingRateLimiter = create({
        interval: rules.intervalMs,
        maxInInterval: rules.maxInInterval,
        minDifference: rules.minDifferenceMs,
        countBlocked: rules.countBlocked,
        clock: () => base.now + skew,
        namespace,
        ...(multi ? { useScript: false } : {}),
      });
      const reference = new ReferenceStack([{ ...rules, namespace: limiter.namespace }]);
      const admissions = new AdmissionLog(rules.intervalMs * 1000, rules.maxInInterval, rules.minDifferenceMs * 1000);
      const length = random.chance(0.15) ? random.int(60, 120) : random.int(10, 40);
      // Calls made but not awaited yet (batched backends only), each with what the model answered.
      let group: { actual: Promise<unknown>; expected: unknown; where: string; onAnswer?: (answer: unknown) => void }[] = [];
      const settleGroup = async (): Promise<void> => {
        const actuals = await Promise.all(group.map((call) => call.actual));
        group.forEach((call, i) => {
          expect(actuals[i], call.where).to.deep.equal(call.expected);
          call.onAnswer?.(actuals[i]);
        });
        if (group.length > 1) concurrent += group.length;
        group = [];
      };
      for (let i = 0; i < length; i += 1) {
        const operation = randomOperation(random, withActionIds);
        const id = random.pick(IDS);
        if (timing === 'steps back' && random.chance(0.1)) base.advanceUs(-STEP_BACK_US);
        else base.advanceUs(randomAdvance(random, rules));
        skew = timing === 'two clocks' && random.chance(0.5) ? otherOffset : timing === 'late' ? -randomLateness(random, rules) : 0;
        const now = base.now + skew;
        const actionId = withActionIds && operation !== 'peek' && operation !== 'peek-verdict' ? randomActionId(random, operation === 'undo') : undefined;
        const where =
          `seed ${seed}, schedule ${schedule} (${timing}), step ${i}, rules ${JSON.stringify(rules)}${multi ? ' useScript: false' : ''}, ` +
          `${operation} ${id}${actionId === undefined ? '' : ` action ${actionId}`} at ${skew / 1e6} s${timing === 'late' ? ' (late)' : ''}`;
        byOperation[operation] = (byOperation[operation] ?? 0) + 1;
        if (operation === 'clear' || operation === 'undo') {
          await settleGroup();
          if (operation === 'clear') {
            await limiter.clear(id);
            reference.clear(id);
            admissions.clear(id);
          } else {
            const removed = await limiter.undo(id, actionId as string);
            expect(removed, where).to.equal(reference.undo(id, actionId as string));
            admissions.undo(id, actionId as string);
          }
          continue;
        }
        const attempt = operation === 'limit' || operation === 'limit-verdict';
        const options = actionId === undefined ? undefined : { actionId };
        // The call reads the clock as it is made; the model answers in call order.
        const actual =
          operation === 'limit-verdict'
            ? limiter.limit(id, options)
            : operation === 'limit'
              ? limiter.limitWithInfo(id, options)
              : operation === 'peek'
                ? limiter.wouldLimitWithInfo(id)
                : limiter.wouldLimit(id);
        const answer = limitInfoOf(attempt ? reference.attempt(id, now, [0], actionId) : reference.peek(id, now));
        const verdictOnly = operation === 'limit-verdict' || operation === 'peek-verdict';
        const admitted = attempt && !answer.blocked && answer.alreadyAdmitted !== true;
        group.push({
          actual,
          expected: verdictOnly ? answer.blocked : answer,
          where,
          ...(admitted && (timing === 'one clock' || timing === 'late') ? { onAnswer: () => admissions.admit(id, now, actionId, where) } : {}),
        });
        steps += 1;
        byTiming[timing] += 1;
        if (capabilities.batch !== true || group.length === 8 || random.chance(0.3)) await settleGroup();
      }
      await settleGroup();
      for (const id of IDS) await limiter.clear(id);
    }
    expect(steps).to.be.greaterThan(schedules * 10);
    expect(byTiming['two clocks'], 'decisions with clocks 2 s apart').to.be.greaterThan(schedules * 2);
    expect(byTiming['steps back'], 'decisions with a clock that steps back').to.be.greaterThan(schedules);
    expect(byTiming.late, 'decisions late by up to the timeout, out of stamp order').to.be.greaterThan(schedules * 2);
    if (capabilities.actionIds) expect(byOperation.undo, 'undos').to.be.greaterThan(schedules / 2);
    if (capabilities.batch === true) expect(concurrent, 'decisions made concurrently, in batches').to.be.greaterThan(schedules * 5);
    console.log(
      `      model test: ${schedules} schedules, ${steps} decisions compared ` +
        `(${byTiming['one clock']} on one clock, ${byTiming['two clocks']} with clocks ±2 s apart, ${byTiming['steps back']} with a clock stepping back 4 s, ` +
        `${byTiming.late} late by up to the 2 s timeout, out of stamp order` +
        `${capabilities.batch === true ? `; ${concurrent} in concurrent groups of 2 to 8` : ''}); operations ${JSON.stringify(byOperation)}`,
    );
  });
}
