// Windows of 1 to 3 ms shared by processes on real Redis, on the local clock:
// a seeded fuzz of the decide script. Four processes
// (test/support/short-interval-worker.ts), each with its own client, decide
// on a few shared ids at once: plain attempts, attempts with their own action
// ids, retries and undos of those, and action ids every process retries;
// minDifference 0 and above, countBlocked either way, batch: true or not,
// timeouts from 15 ms (keys expire and records are forgotten between a
// process's calls) to 10 s.
//
// Each scenario is checked against docs/semantics.md ("Exact semantics",
// "Action ids, undo, clear", "Time in flight"), by test/support/
// admission-windows.ts, from each decision's own stamp and answer: at every
// moment, at most maxInInterval admitted records not undone in any window
// (t - interval, t] of stamps, admitted records at least minDifference
// apart, a retry answered alreadyAdmitted exactly while its admission counts,
// an undo removing exactly the admission it should. Where the timeout
// outlasts the scenario (nothing forgotten), the keys must hold exactly the
// admissions the processes were told of, at their stamps.
//
// It also counts what two wrong readings of the same logs would report as
// over-admissions: a window closed at its start ([t - interval, t]), and
// windows of the moments the calls answered (when an await resumed).
//
// The seed is printed, and replays the schedule (the timing is the machine's):
// SHORT_INTERVAL_FUZZ_SEED=<seed>. SHORT_INTERVAL_FUZZ_SCENARIOS and
// SHORT_INTERVAL_FUZZ_GROUPS run more (or fewer).

import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { checkScenario, expectedKeys, keyDifferences, type FuzzRule, type ScenarioFindings } from '../support/admission-windows.js';
import { startChild, type Child } from '../support/child-process.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useIORedisClient } from '../support/ioredis-client.js';
import { SeededRandom } from '../support/random.js';
import { keyOf } from '../support/redis-keys.js';
import type { FuzzLog, FuzzScenario } from '../support/short-interval-worker.js';

const PROCESSES = 4;
const SEED = Number(process.env.SHORT_INTERVAL_FUZZ_SEED ?? Date.now() % 2 ** 31);
/** 24 covers each interval (1, 2, 3 ms) with countBlocked, a gap and batch either way. */
const SCENARIOS = Number(process.env.SHORT_INTERVAL_FUZZ_SCENARIOS ?? 24);
const GROUPS = Number(process.env.SHORT_INTERVAL_FUZZ_GROUPS ?? 150);
/** A timeout longer than any scenario: nothing is forgotten before the keys are read. */
const LONG_TIMEOUT_MS = 10_000;
/** Longest wait for one process's log of one scenario. */
const SCENARIO_LIMIT_MS = 30_000;
/** A process still running after this long is killed (by its own PID). */
const WORKER_LIMIT_MS = 300_000;

/** Scenario `index` of the run: its rule from the matrix, the rest drawn from the seed. */
function scenarioOf(random: SeededRandom, index: number, namespace: string): Omit<FuzzScenario, 'seed'> {
  const interval = [1, 2, 3][index % 3] as number;
  const timeout = random.pick([LONG_TIMEOUT_MS, LONG_TIMEOUT_MS, 2_000, random.int(15, 40)]);
  return {
    index,
    namespace,
    ids: Array.from({ length: random.int(1, 3) }, (_, i) => `user-${i}`),
    interval,
    maxInInterval: random.pick([3, 3, 3, 1, 2, 4, 5]),
    minDifference: Math.floor(index / 6) % 2 === 1 ? random.int(1, interval) : 0,
    countBlocked: Math.floor(index / 3) % 2 === 0,
    batch: Math.floor(index / 12) % 2 === 1,
    timeout,
    groups: GROUPS,
    sharedActions: random.int(2, 6),
    longPauseChance: timeout < 100 ? 0.03 : 0,
  };
}

function ruleOf(scenario: Omit<FuzzScenario, 'seed'>): FuzzRule {
  return {
    intervalUs: scenario.interval * 1000,
    maxInInterval: scenario.maxInInterval,
    minDifferenceUs: scenario.minDifference * 1000,
    timeoutUs: scenario.timeout * 1000,
    countBlocked: scenario.countBlocked,
  };
}

/** A scenario's settings, as failures name them. */
function settingsOf(scenario: Omit<FuzzScenario, 'seed'>): string {
  const { interval, maxInInterval, minDifference, countBlocked, batch, timeout, ids } = scenario;
  return JSON.stringify({ interval, maxInInterval, minDifference, countBlocked, batch, timeout, ids: ids.length });
}

describe('windows of 1 to 3 ms shared by processes on real Redis (a seeded fuzz of the decide script)', function () {
  const connection = useIORedisClient();
  const namespaces = uniqueNamespaces('short-interval');
  let workers: Child[] = [];

  before(async function () {
    this.timeout(60_000);
    workers = Array.from({ length: PROCESSES }, (_, worker) => startChild('short-interval-worker.ts', [connection.url, String(worker)], WORKER_LIMIT_MS));
    const ready = await Promise.all(workers.map((worker) => worker.nextLine()));
    expect(ready, 'every process connected').to.deep.equal(Array<string>(PROCESSES).fill('ready'));
  });

  after(async function () {
    this.timeout(30_000);
    for (const worker of workers) worker.closeInput();
    const runs = await Promise.all(workers.map((worker) => worker.exited));
    for (const run of runs) expect(run.code, `a process failed: ${run.stderr}`).to.equal(0);
  });

  /** Runs one scenario in every process at once; each process's seed is the scenario's, mixed with its number. */
  async function run(scenario: Omit<FuzzScenario, 'seed'>, seed: number, planted?: Partial<FuzzScenario>): Promise<FuzzLog[]> {
    workers.forEach((worker, i) => {
      const mine: FuzzScenario = { ...scenario, seed: (seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0, ...(i === 0 ? planted : undefined) };
      worker.send(JSON.stringify(mine));
    });
    const logs = await Promise.race([
      Promise.all(
        workers.map(async (worker, i) => {
          const line = await worker.nextLine();
          if (line === '') throw new Error(`process ${i} ended: ${(await worker.exited).stderr}`);
          return JSON.parse(line) as FuzzLog;
        }),
      ),
      delay(SCENARIO_LIMIT_MS, undefined, { ref: false }).then(() => {
        throw new Error(`scenario ${scenario.index} took longer than ${SCENARIO_LIMIT_MS} ms`);
      }),
    ]);
    for (const log of logs) expect(log.clockReads, 'one clock reading per decision').to.equal(log.events.filter(([kind]) => kind === 'd').length);
    return logs;
  }

  /** What each id's key holds against what the logs say it must; then the keys go. */
  async function storeDifferences(scenario: Omit<FuzzScenario, 'seed'>, logs: readonly FuzzLog[], findings: ScenarioFindings): Promise<string[]> {
    const expected = expectedKeys(scenario.ids.length, logs, findings.byId);
    const differences: string[] = [];
    for (const [i, id] of scenario.ids.entries()) {
      const key = keyOf(scenario.namespace, id);
      const stored = await connection.client.zrange(key, 0, -1, 'WITHSCORES');
      differences.push(...keyDifferences(expected[i] as (typeof expected)[number], stored, scenario.countBlocked).map((d) => `${id}: ${d}`));
      await connection.client.del(key, `${key}:a`);
    }
    return differences;
  }

  it(`admits at most maxInInterval in every window of stamps, at least minDifference apart, across ${PROCESSES} processes (seed ${SEED})`, async function () {
    this.timeout(240_000);
    const random = new SeededRandom(SEED);
    const replay = `replay: SHORT_INTERVAL_FUZZ_SEED=${SEED} npx mocha test/redis/short-interval-fuzz.test.ts`;
    const totals = { decisions: 0, admissions: 0, undos: 0, unknown: 0, already: 0, storeChecked: 0, closed: 0, answered: 0, whole: 0 };
    const started = Date.now();
    for (let index = 0; index < SCENARIOS; index += 1) {
      const scenario = scenarioOf(random, index, namespaces.next(String(index)));
      const logs = await run(scenario, random.int(0, 2 ** 31 - 1));
      const findings = checkScenario(ruleOf(scenario), scenario.ids.length, logs);
      const where = `seed ${SEED}, scenario ${index} ${settingsOf(scenario)} (${replay})`;
      expect(findings.violations, `${findings.violations.length} broken promises, ${where}`).to.deep.equal([]);
      const longest = Math.max(...logs.map((log) => log.wallMs));
      if (scenario.timeout === LONG_TIMEOUT_MS && findings.unknown === 0 && longest < LONG_TIMEOUT_MS / 2) {
        expect(await storeDifferences(scenario, logs, findings), `the keys against the logs, ${where}`).to.deep.equal([]);
        totals.storeChecked += 1;
      } else {
        for (const id of scenario.ids) await connection.client.del(keyOf(scenario.namespace, id), `${keyOf(scenario.namespace, id)}:a`);
      }
      totals.decisions += findings.decisions;
      totals.admissions += findings.admissions;
      totals.undos += findings.undos;
      totals.unknown += findings.unknown;
      totals.already += findings.alreadyAdmitted;
      totals.closed += findings.misread.closedWindow;
      totals.answered += findings.misread.answeredWindow;
      totals.whole += findings.wholeMillisecondStamps;
    }
    console.log(
      `      seed ${SEED}: ${SCENARIOS} scenarios, ${totals.decisions} decisions (${totals.admissions} admitted, ${totals.already} already admitted, ` +
        `${totals.unknown} failed or late), ${totals.undos} undos in ${Date.now() - started} ms; keys checked after ${totals.storeChecked} scenarios; ` +
        `no over-admission. Misread: ${totals.closed} over with windows closed at their start, ${totals.answered} with the times calls answered; ` +
        `${totals.whole} stamps on a whole millisecond`,
    );
    expect(totals.decisions).to.be.at.least(SCENARIOS * GROUPS * PROCESSES);
  });

  it('finds the over-admissions of a process that allows one more, and no gap (the check is not blind)', async function () {
    this.timeout(60_000);
    const random = new SeededRandom(SEED ^ 0x5eed);
    // 3 per 3 ms, 1 ms apart, only admitted attempts recorded (so a window holds its admissions alone); process 0
    // alone allows 4 per window and no gap.
    const scenario = {
      ...scenarioOf(random, 0, namespaces.next('planted')),
      interval: 3,
      maxInInterval: 3,
      minDifference: 1,
      countBlocked: false,
      timeout: LONG_TIMEOUT_MS,
      longPauseChance: 0,
    };
    const logs = await run(scenario, random.int(0, 2 ** 31 - 1), { maxInIntervalHere: 4, minDifferenceHere: 0 });
    const findings = checkScenario(ruleOf(scenario), scenario.ids.length, logs);
    for (const id of scenario.ids) await connection.client.del(keyOf(scenario.namespace, id), `${keyOf(scenario.namespace, id)}:a`);
    const windows = findings.violations.filter((v) => v.includes('admitted within'));
    const gaps = findings.violations.filter((v) => v.includes('apart'));
    console.log(`      planted: ${windows.length} windows over the limit and ${gaps.length} gaps too short found in ${findings.decisions} decisions`);
    expect(windows, `windows over the limit (seed ${SEED})`).to.not.be.empty;
    expect(gaps, `gaps too short (seed ${SEED})`).to.not.be.empty;
  });
});
