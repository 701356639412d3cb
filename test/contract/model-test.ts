// The randomized model test: thousands of random schedules of attempts, dry
// runs and clears over several ids, with random rules, run on a store and on
// the independent reference model of test/support/reference-model.ts, and
// compared field by field. Time steps are drawn so that they often land
// exactly on the window boundary and the gap boundary, and two attempts often
// share a microsecond. Set MODEL_SCHEDULES to run more (or fewer) schedules,
// and MODEL_SEED to replay one run.
//
// Clocks that disagree: in a quarter of the schedules two processes act on
// the same keys with clocks 2 s apart (either way), and in a sixth one clock
// now and then steps back 4 s. A limiter holds no state of its own but its
// clock, so the two processes are one limiter whose clock reads the acting
// process's time: on Redis the same commands on the same keys as two
// limiters in two processes. Every decision must still be SPEC steps 1-7
// with the caller's time applied to the key as it stands.
//
// Batched (`batch: true` backends): steps run in groups of up to eight
// concurrent calls, each reading the clock as it is called, so a group goes
// to Redis in one script call; every answer must still be the model's, in
// call order.

import { expect } from 'chai';
import { ReferenceLimiter, type ReferenceRules } from '../support/reference-model.js';
import { SeededRandom } from '../support/random.js';
import { TestClock } from '../support/test-clock.js';
import type { BackendCapabilities, LimiterFactory } from './limiter-contract.js';

const IDS = ['alice', 'bob', '42'];

interface Step {
  /** `limit` compares limitWithInfo(), `limit-verdict` compares limit() (which is limitWithInfo().blocked). */
  readonly operation: 'limit' | 'limit-verdict' | 'peek' | 'clear';
  readonly id: string;
  readonly advanceUs: number;
}

/** How the schedule's time behaves. */
type Timing = 'one clock' | 'two clocks' | 'steps back';

const SKEW_US = 2_000_000;
const STEP_BACK_US = 4_000_000;

function randomTiming(random: SeededRandom): Timing {
  const roll = random.next();
  return roll < 0.25 ? 'two clocks' : roll < 0.42 ? 'steps back' : 'one clock';
}

function randomRules(random: SeededRandom, countBlockedFalse: boolean): ReferenceRules {
  // Intervals of a second or more: on Redis, keys expire in real time (PEXPIRE), and a schedule must not outlive them.
  const intervalMs = random.pick([1000, 1001, 1500, 5000, 60_000]);
  return {
    intervalMs,
    maxInInterval: random.chance(0.2) ? random.int(5, 12) : random.int(1, 4),
    minDifferenceMs: random.chance(0.35) ? 0 : random.pick([1, 999, Math.floor(intervalMs / 3), intervalMs - 1, intervalMs]),
    countBlocked: countBlockedFalse ? random.chance(0.5) : true,
  };
}

function randomStep(random: SeededRandom, rules: ReferenceRules): Step {
  const intervalUs = rules.intervalMs * 1000;
  const gapUs = rules.minDifferenceMs * 1000;
  const advanceUs = random.pick([
    0,
    0,
    1,
    random.int(1, 999),
    1000,
    intervalUs,
    intervalUs - 1,
    Math.floor(intervalUs / rules.maxInInterval),
    gapUs,
    Math.max(0, gapUs - 1),
    random.int(0, intervalUs * 2),
  ]);
  const roll = random.next();
  const operation = roll < 0.4 ? 'limit' : roll < 0.72 ? 'limit-verdict' : roll < 0.97 ? 'peek' : 'clear';
  return { operation, id: random.pick(IDS), advanceUs };
}

export function describeModelTest(factory: () => LimiterFactory, capabilities: BackendCapabilities): void {
  const schedules = Number(process.env.MODEL_SCHEDULES ?? capabilities.modelSchedules);
  const seed = Number(process.env.MODEL_SEED ?? Date.now() % 2 ** 31);

  it(`matches the reference model on ${schedules} random schedules, with skewed and stepping clocks (seed ${seed})`, async function () {
    this.timeout(Math.max(60_000, schedules * 200));
    const create = factory();
    const random = new SeededRandom(seed);
    let steps = 0;
    const byTiming: Record<Timing, number> = { 'one clock': 0, 'two clocks': 0, 'steps back': 0 };
    let concurrent = 0;
    for (let schedule = 0; schedule < schedules; schedule += 1) {
      const rules = randomRules(random, capabilities.countBlockedFalse);
      const useScript = capabilities.useScript === true && random.chance(0.4);
      const timing = randomTiming(random);
      const base = new TestClock(Date.UTC(2026, 0, 1) * 1000 + random.int(0, 1e9));
      // The other process's clock runs 2 s ahead or behind; `skew` is the acting process's offset.
      const otherOffset = random.chance(0.5) ? SKEW_US : -SKEW_US;
      let skew = 0;
      const limiter = create({
        interval: rules.intervalMs,
        maxInInterval: rules.maxInInterval,
        minDifference: rules.minDifferenceMs,
        countBlocked: rules.countBlocked,
        clock: () => base.now + skew,
        namespace: `model-${schedule}`,
        ...(useScript ? { useScript: true } : {}),
      });
      const reference = new ReferenceLimiter(rules);
      const length = random.chance(0.15) ? random.int(60, 120) : random.int(10, 40);
      // Calls made but not awaited yet (batched backends only), each with what the model answered.
      let group: { actual: Promise<unknown>; expected: unknown; where: string }[] = [];
      const settleGroup = async (): Promise<void> => {
        const actuals = await Promise.all(group.map((call) => call.actual));
        group.forEach((call, i) => expect(actuals[i], call.where).to.deep.equal(call.expected));
        if (group.length > 1) concurrent += group.length;
        group = [];
      };
      for (let i = 0; i < length; i += 1) {
        const step = randomStep(random, rules);
        if (timing === 'steps back' && random.chance(0.1)) base.advanceUs(-STEP_BACK_US);
        else base.advanceUs(step.advanceUs);
        skew = timing === 'two clocks' && random.chance(0.5) ? otherOffset : 0;
        const now = base.now + skew;
        const where = `seed ${seed}, schedule ${schedule} (${timing}), step ${i}, rules ${JSON.stringify(rules)}${useScript ? ' useScript' : ''}, ${step.operation} ${step.id} at ${skew / 1e6} s`;
        if (step.operation === 'clear') {
          await settleGroup();
          await limiter.clear(step.id);
          reference.clear(step.id);
          continue;
        }
        // The call reads the clock as it is made; the model answers in call order.
        const actual =
          step.operation === 'limit-verdict'
            ? limiter.limit(step.id)
            : step.operation === 'limit'
              ? limiter.limitWithInfo(step.id)
              : limiter.wouldLimitWithInfo(step.id);
        const answer = step.operation === 'peek' ? reference.peek(step.id, now) : reference.attempt(step.id, now);
        group.push({ actual, expected: step.operation === 'limit-verdict' ? answer.blocked : answer, where });
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
    if (capabilities.batch === true) expect(concurrent, 'decisions made concurrently, in batches').to.be.greaterThan(schedules * 5);
    console.log(
      `      model test: ${schedules} schedules, ${steps} decisions compared ` +
        `(${byTiming['one clock']} on one clock, ${byTiming['two clocks']} with clocks ±2 s apart, ${byTiming['steps back']} with a clock stepping back 4 s` +
        `${capabilities.batch === true ? `; ${concurrent} in concurrent groups of 2 to 8` : ''})`,
    );
  });
}
