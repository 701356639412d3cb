// Abuse on shared namespaces, from several processes on one real Redis: a seeded fuzz of docs/semantics.md ("Time
// in flight", "Costs", "Bounds and shared namespaces"). Four processes (test/support/abuse-fuzz-worker.ts), each with
// its own connections and, per clock, a limiter on each of three namespaces (a limit of actions, a budget of 2^48,
// and a limit of actions that a budget of the attacker's writes too), its own `batch` and `onStoreError`, and the
// timeouts of its generation (the old processes 1.2 s, the new 1.5 and 2 s, as in a rolling deployment), decide for
// 24 s:
//   - one attacker id floods them with attempts that are mostly blocked (without action ids, with ids of their own,
//     single-use or not, retried), settles its reservations to the whole budget, past it (a RangeError that must
//     change nothing), to 0 and back up, until its key would weigh more than 2^51, and meets the other kind of rule
//     on the shared namespace (NAMESPACE_CONFLICT, both ways);
//   - victim ids receive ordinary traffic: sessions of requests, each checked by the three limiters, from the
//     limiters the plan routes each victim to in each phase (sticky routing that moves from phase to phase, and
//     users who come for two phases, half of them handed over from an old process to a new one), some on Redis's
//     clock, some on the local clock, some on a local clock whose calls are late by up to three quarters of their
//     timeout (stamped that far in the past), sometimes in one batch with the attacker's calls.
// Then, from the stamps alone (the late clocks' values, or the store's records of the admitted action ids; never when
// an await resumed), test/support/abuse-fuzz-check.ts checks every window of every namespace and id: 0
// over-admissions (each admission at the lowest weight it ever had) and 0 admissions closer than minDifference. And
// no call on a victim's id ever rejected or was decided by the `onStoreError` policy, whatever the attacker did: its
// failures fail alone, and never open a circuit (every limiter's opens after 2 failures in a row).
//
// The seed is printed and replays the plan (the rules, clocks, timeouts and routes) and each lane's draws; the
// interleaving is the machine's. SEED=<seed> replays; ABUSE_FUZZ_RUN_MS runs longer (or shorter).

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { checkWindows, describeBreach } from '../support/abuse-fuzz-check.js';
import { ATTACKER, planRun, SPACES, type Admission, type Space, type WorkerLog } from '../support/abuse-fuzz-plan.js';
import { lastJsonLine, startChild, type Child, type ChildRun } from '../support/child-process.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);
const WORKERS = 4;
const RUN_MS = Number(process.env.ABUSE_FUZZ_RUN_MS ?? 24_000);
/** A worker still running this long after its start is killed (by its own PID). */
const WORKER_LIMIT_MS = RUN_MS + 45_000;
/** How many breaches and failures a failure message lists. */
const SHOWN = 6;

/** Adds tallies of one kind up. */
function sumTallies(tallies: readonly Record<string, number>[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const tally of tallies) for (const [kind, n] of Object.entries(tally)) sum[kind] = (sum[kind] ?? 0) + n;
  return sum;
}

/**
 * The slowest command Redis ran since `sinceSeconds` (its slow log keeps those over 10 ms by default), in ms: a
 * script one id's records make slow delays every other id's.
 */
async function slowestCommand(url: string, sinceSeconds: number): Promise<string> {
  const client = new Redis(url);
  try {
    const entries = (await client.call('SLOWLOG', 'GET', '128')) as [number, number, number, string[]][];
    const ours = entries.filter(([, at]) => at >= sinceSeconds).sort((a, b) => b[2] - a[2]);
    const [slowest] = ours;
    if (slowest === undefined) return 'none over 10 ms';
    return `${ours.length} over 10 ms, the slowest ${(slowest[2] / 1000).toFixed(1)} ms (${slowest[3].slice(0, 4).join(' ').slice(0, 120)})`;
  } finally {
    client.disconnect();
  }
}

const tallyText = (tally: Record<string, number>): string =>
  Object.entries(tally)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ') || 'none';

describe('abuse on shared namespaces from 4 processes on one Redis (seeded fuzz)', function () {
  this.timeout(RUN_MS + 75_000);
  let redis: UsedRedis | undefined;
  before(async function () {
    this.timeout(30_000);
    redis = await useRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('0 over-admissions per namespace and id, and 0 failures on victim ids, whatever the attacker does', async () => {
    const namespaces = uniqueNamespaces('abuse-fuzz');
    const actions = namespaces.next('actions');
    const budget = namespaces.next('budget');
    const mixed = namespaces.next('mixed');
    const url = (redis as UsedRedis).url;
    const plans = planRun(SEED, url, { actions, budget, mixed, mixedBudget: mixed }, WORKERS, RUN_MS);
    const replay = `seed ${SEED} (replay: SEED=${SEED} npx mocha test/redis/abuse-fuzz.test.ts)`;
    const children: Child[] = plans.map((plan) => startChild('abuse-fuzz-worker.ts', [JSON.stringify(plan)], WORKER_LIMIT_MS));
    let runs: ChildRun[];
    let startAt: number | undefined;
    try {
      const ready = await Promise.all(children.map((child) => child.nextLine()));
      expect(ready, `${replay}: every worker connected`).to.deep.equal(Array<string>(WORKERS).fill('ready'));
      // Every worker starts at once, as soon as all have connected.
      startAt = Date.now() + 300;
      for (const child of children) child.send(JSON.stringify({ startAt }));
    } finally {
      // Without the start line, a worker ends at once.
      for (const child of children) child.closeInput();
      runs = await Promise.all(children.map((child) => child.exited));
    }
    for (const [i, run] of runs.entries()) {
      expect({ code: run.code, killed: run.killed }, `${replay}: worker ${i} ended by itself\n${run.stderr.slice(-2_000)}`).to.deep.equal({
        code: 0,
        killed: false,
      });
    }
    const logs = runs.map((run) => lastJsonLine<WorkerLog>(run));
    const rules = (plans[0] as (typeof plans)[number]).rules;

    const admissions: Admission[] = logs.flatMap((log) => log.admissions);
    const { windows, breaches } = checkWindows(admissions, rules);
    const overAdmissions = breaches.filter((breach) => breach.excused === undefined);
    const excused = breaches.length - overAdmissions.length;
    const failures = logs.flatMap((log) => log.failures);
    const victimFailures = failures.filter((failure) => failure.role === 'victim');
    const attackerFailures = failures.filter((failure) => failure.role === 'attacker');
    const findings = logs.flatMap((log) => log.findings.map((finding) => `worker ${log.worker}: ${finding}`));

    const attempts = logs.reduce((sum, log) => sum + log.attempts, 0);
    const blocked = logs.reduce((sum, log) => sum + log.blocked, 0);
    const settlements = sumTallies(logs.map((log) => log.settlements));
    const settled = Object.values(settlements).reduce((sum, n) => sum + n, 0);
    const expected = sumTallies(logs.map((log) => log.expected));
    const slowest = await slowestCommand(url, Math.floor(startAt / 1000));
    const admittedBy = (space: Space, victims: boolean): number => admissions.filter((a) => a.space === space && (a.id !== ATTACKER) === victims).length;
    console.log(
      `      ${replay}: ${attempts} attempts + ${settled} settlements in ${RUN_MS / 1000} s by ${WORKERS} processes ` +
        `(${plans.map((plan) => `${plan.batch ? 'batch' : 'no batch'}/${plan.policy}/timeouts ${plan.timeouts.late}-${plan.timeouts.local}-${plan.timeouts.redis}`).join(', ')}); ` +
        `admitted ${admissions.length} (victims ${SPACES.map((space) => `${space} ${admittedBy(space, true)}`).join(', ')}; attacker ${SPACES.map((space) => `${space} ${admittedBy(space, false)}`).join(', ')}), ` +
        `blocked ${blocked}, already admitted ${logs.reduce((sum, log) => sum + log.alreadyAdmitted, 0)}; settlements: ${tallyText(settlements)}; ` +
        `the attacker's failures allowed: ${tallyText(expected)}; verdicts unknown (timed out): ${logs.reduce((sum, log) => sum + log.unknown, 0)}; ` +
        `${windows} windows checked, ${overAdmissions.length} over, ${excused} excused (outside the promise); ` +
        `victims' failures ${victimFailures.length}, slowest victim answer ${Math.round(Math.max(...logs.map((log) => log.slowestVictimMs)))} ms; ` +
        `Redis's slow log: ${slowest}`,
    );

    const problems = [
      ...overAdmissions.slice(0, SHOWN).map((breach) => describeBreach(breach, rules[breach.space])),
      ...victimFailures
        .slice(0, SHOWN)
        .map((f) => `  a victim's call failed: ${f.operation} on ${f.space} for ${f.id} (worker ${f.worker}, ${f.mode} clock): ${f.what}`),
      ...attackerFailures
        .slice(0, SHOWN)
        .map((f) => `  the attacker's call failed unexpectedly: ${f.operation} on ${f.space} (worker ${f.worker}, ${f.mode} clock): ${f.what}`),
      ...findings.slice(0, SHOWN).map((finding) => `  ${finding}`),
    ];
    const counts = {
      overAdmissions: overAdmissions.length,
      victimFailures: victimFailures.length,
      attackerFailures: attackerFailures.length,
      findings: findings.length,
    };
    expect(counts, `${replay}:\n${problems.join('\n')}`).to.deep.equal({ overAdmissions: 0, victimFailures: 0, attackerFailures: 0, findings: 0 });
    // The run did what it is for: decisions on every namespace for victims, settlements refused past the budget and
    // past 2^51, and the two kinds of rule meeting on the shared namespace.
    const tallied = (tally: Record<string, number>, prefix: string): number =>
      Object.entries(tally).reduce((sum, [kind, n]) => sum + (kind.startsWith(prefix) ? n : 0), 0);
    expect(attempts, `${replay}: attempts`).to.be.above(2_000);
    for (const space of ['actions', 'budget', 'mixed'] as const) expect(admittedBy(space, true), `${replay}: victims admitted on ${space}`).to.be.above(0);
    expect(tallied(settlements, 'refused: above the budget'), `${replay}: settlements above the budget`).to.be.above(0);
    expect(tallied(settlements, 'refused: the key would weigh'), `${replay}: settlements past 2^51`).to.be.above(0);
    expect(tallied(expected, 'NAMESPACE_CONFLICT'), `${replay}: NAMESPACE_CONFLICT on the shared namespace`).to.be.above(0);
  });
});
