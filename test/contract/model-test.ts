// The randomized model test: thousands of random schedules of attempts, dry
// runs and clears over several ids, with random rules, run on a store and on
// the independent reference model of test/support/reference-model.ts, and
// compared field by field. Time steps are drawn so that they often land
// exactly on the window boundary and the gap boundary, and two attempts often
// share a microsecond. Set MODEL_SCHEDULES to run more (or fewer) schedules,
// and MODEL_SEED to replay one run.

import { expect } from 'chai';
import { ReferenceLimiter, type ReferenceRules } from '../support/reference-model.js';
import { SeededRandom } from '../support/random.js';
import { TestClock } from '../support/test-clock.js';
import type { BackendCapabilities, LimiterFactory } from './limiter-contract.js';

const IDS = ['alice', 'bob', '42'];

interface Step {
  /** `limit` compares limitWithInfo(), `limit-verdict` compares limit() (a cheaper path that answers only the verdict). */
  readonly operation: 'limit' | 'limit-verdict' | 'peek' | 'clear';
  readonly id: string;
  readonly advanceUs: number;
}

function randomRules(random: SeededRandom, countBlockedFalse: boolean): ReferenceRules {
  // Intervals of a second or more: on Redis, keys expire in real time (PEXPIRE), and a schedule must not outlive them.
  const intervalMs = random.pick([1000, 1001, 1500, 5000, 60_000]);
  return {
    intervalMs,
    maxInInterval: random.chance(0.2) ? random.int(5, 12) : random.int(1, 4),
    minDifferenceMs: random.chance(0.35) ? 0 : random.pick([1, 999, Math.floor(intervalMs / 3), intervalMs, intervalMs * 2]),
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

  it(`matches the reference model on ${schedules} random schedules (seed ${seed})`, async function () {
    this.timeout(Math.max(60_000, schedules * 200));
    const create = factory();
    const random = new SeededRandom(seed);
    let steps = 0;
    for (let schedule = 0; schedule < schedules; schedule += 1) {
      const rules = randomRules(random, capabilities.countBlockedFalse);
      const useScript = capabilities.useScript === true && random.chance(0.4);
      const clock = new TestClock(Date.UTC(2026, 0, 1) * 1000 + random.int(0, 1e9));
      const limiter = create({
        interval: rules.intervalMs,
        maxInInterval: rules.maxInInterval,
        minDifference: rules.minDifferenceMs,
        countBlocked: rules.countBlocked,
        clock: clock.read,
        namespace: `model-${schedule}`,
        ...(useScript ? { useScript: true } : {}),
      });
      const reference = new ReferenceLimiter(rules);
      const length = random.chance(0.15) ? random.int(60, 120) : random.int(10, 40);
      for (let i = 0; i < length; i += 1) {
        const step = randomStep(random, rules);
        clock.advanceUs(step.advanceUs);
        const where = `seed ${seed}, schedule ${schedule}, step ${i}, rules ${JSON.stringify(rules)}${useScript ? ' useScript' : ''}, ${step.operation} ${step.id}`;
        if (step.operation === 'clear') {
          await limiter.clear(step.id);
          reference.clear(step.id);
          continue;
        }
        if (step.operation === 'limit-verdict') {
          expect(await limiter.limit(step.id), where).to.equal(reference.attempt(step.id, clock.now).blocked);
          steps += 1;
          continue;
        }
        const actual =
          step.operation === 'limit' ? await limiter.limitWithInfo(step.id) : await limiter.wouldLimitWithInfo(step.id);
        const expected =
          step.operation === 'limit' ? reference.attempt(step.id, clock.now) : reference.peek(step.id, clock.now);
        expect(actual, where).to.deep.equal(expected);
        steps += 1;
      }
      for (const id of IDS) await limiter.clear(id);
    }
    expect(steps).to.be.greaterThan(schedules * 10);
    console.log(`      model test: ${schedules} schedules, ${steps} decisions compared`);
  });
}
