// A worker of the abuse fuzz (test/redis/abuse-fuzz.test.ts): one OS process with its own Redis connections and
// clocks, started as `node --import tsx abuse-fuzz-worker.ts <plan as JSON>` (test/support/child-process.ts). It
// connects, prints `ready`, waits for one line on stdin ({ startAt }: wall-clock ms), and from then until the run's
// end keeps three lanes going on the limiters of its plan (test/support/abuse-fuzz-plan.ts), through its recorder
// (test/support/abuse-fuzz-recorder.ts):
//   - the attacker's: floods of attempts that are mostly blocked (without an action id, with ids of their own,
//     single-use or not, some stamped far in the past), reservations settled to the whole budget, above it, to 0
//     and back up, retries of its action ids, and decisions on the namespace a limit of actions and a budget share;
//   - two of ordinary traffic on the victims' ids, from the limiters the plan routes each victim to in each phase,
//     sometimes in the same batch as the attacker's calls.
// It prints one JSON line at the end: the recorder's log (WorkerLog). Every loop ends with the run (and at
// plan.maxAttempts). Each lane draws from a generator of its own, seeded from the plan's seed.

import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { ATTACKER, BUDGET, MODES, type Mode, type Space, type WorkerPlan } from './abuse-fuzz-plan.js';
import { AbuseRecorder, type Call } from './abuse-fuzz-recorder.js';
import { SeededRandom } from './random.js';

type OwnSpace = Exclude<Space, 'mixedBudget'>;

const plan = JSON.parse(process.argv[2] ?? '') as WorkerPlan;
const laneRandom = (lane: number): SeededRandom => new SeededRandom((plan.seed ^ Math.imul(plan.worker * 4 + lane + 1, 0x9e3779b1)) >>> 0);
const recorder = new AbuseRecorder(plan);
const attempt = (call: Call): Promise<void> => recorder.attempt(call);
let actionCounter = 0;
const newActionId = (): string => `w${plan.worker}-${(actionCounter += 1)}`;

let startAt = 0;
const running = (): boolean => Date.now() < startAt + plan.runMs && recorder.attempts < plan.maxAttempts;

/** A late call's lateness: up to three quarters of its limiter's timeout (often 0, often the most); `far`: at least half of that. */
function latenessOf(random: SeededRandom, mode: Mode, far = false): number {
  if (mode !== 'late') return 0;
  const most = Math.floor(0.75 * plan.timeouts.late * 1000);
  return far ? random.int(Math.floor(most / 2), most) : random.pick([0, 0, 1, random.int(0, most), random.int(0, most), most]);
}

/** The victims this worker serves now, and on which clocks (none in the quiet part of a phase). */
function routedNow(): { victim: string; mode: Mode }[] {
  const elapsed = Date.now() - startAt;
  if (elapsed % plan.phaseMs >= plan.activeMs) return [];
  const phase = Math.floor(elapsed / plan.phaseMs);
  return plan.victims.flatMap(({ id, routes }) =>
    (routes[Math.min(phase, routes.length - 1)] ?? []).filter((route) => route.worker === plan.worker).map((route) => ({ victim: id, mode: route.mode })),
  );
}

function victimCall(random: SeededRandom, space: OwnSpace, victim: string, mode: Mode, lateUs = latenessOf(random, mode)): Call {
  const cost = space === 'budget' ? random.pick([random.int(1, BUDGET / 8), random.int(1, BUDGET / 32), BUDGET / 8]) : undefined;
  // A call on a library clock carries an action id: its admission's stamp is read from its record. Most ids are
  // single-use, as the HTTP middleware makes them.
  const actionId = mode !== 'late' || random.chance(0.5) ? newActionId() : undefined;
  return { role: 'victim', space, id: victim, mode, cost, actionId, singleUse: random.chance(0.6), lateUs };
}

/** Victims that this worker serves now, on the clock of `mode`, to go in the same batch as the attacker's calls. */
function victimsAlongside(random: SeededRandom, space: OwnSpace, mode: Mode): Call[] {
  if (!plan.batch) return [];
  return routedNow()
    .filter((route) => route.mode === mode && random.chance(0.5))
    .map((route) => victimCall(random, space, route.victim, mode));
}

function attackerCall(random: SeededRandom, space: Space, far: boolean): Call {
  const mode = space === 'mixedBudget' ? plan.mixedBudgetMode : random.pick(MODES);
  const idKind = mode === 'late' ? random.pick(['none', 'id', 'single']) : random.pick(['id', 'single']);
  const max = plan.rules[space].max;
  const cost = plan.rules[space].countsCost ? random.pick([max, max, max - 1, max / 2, random.int(1, max)]) : undefined;
  return {
    role: 'attacker',
    space,
    id: ATTACKER,
    mode,
    cost,
    ...(idKind === 'none' ? {} : { actionId: newActionId(), singleUse: idKind === 'single' }),
    lateUs: latenessOf(random, mode, far),
  };
}

/** The attacker's retries: action ids it used, blocked or admitted, tried again. */
const retryable: Call[] = [];

/** Which kind of rule the attacker writes the mixed namespace with now: blocks of each in turn. */
const favoursBudget = (): boolean => Math.floor((Date.now() - startAt) / plan.kindBlockMs) % 2 === 1;
/**
 * In the first three quarters of a block the attacker writes the mixed namespace with its kind alone: the other's key
 * expires, as every decision of this kind on it fails and writes nothing; then with both kinds.
 */
const mixedPure = (): boolean => (Date.now() - startAt) % plan.kindBlockMs < 0.75 * plan.kindBlockMs;

async function attackerFlood(random: SeededRandom): Promise<void> {
  const space = random.pick<OwnSpace>(['actions', 'budget', 'budget', favoursBudget() || mixedPure() ? 'budget' : 'mixed']);
  const far = random.chance(0.3);
  const calls = Array.from({ length: random.int(8, 30) }, () => attackerCall(random, space, far));
  const mode = random.pick(MODES);
  calls.push(...victimsAlongside(random, space, mode));
  await Promise.all(calls.map(attempt));
  // Retries on the mixed namespace would keep its key of one kind alive through the other kind's block.
  for (const call of calls) {
    if (call.role === 'attacker' && call.space !== 'mixed' && call.actionId !== undefined && !call.singleUse && random.chance(0.2)) retryable.push(call);
  }
  retryable.splice(0, Math.max(0, retryable.length - 50));
}

async function attackerSettlements(random: SeededRandom): Promise<void> {
  const heavy = random.chance(0.3);
  const reservations = Array.from({ length: random.int(2, 12) }, (): Call => {
    const mode = random.pick(MODES);
    const cost = random.pick([1, 1, random.int(1, 1_000)]);
    return {
      role: 'attacker',
      space: 'budget',
      id: ATTACKER,
      mode,
      cost,
      actionId: newActionId(),
      singleUse: random.chance(0.5),
      lateUs: latenessOf(random, mode),
    };
  });
  await Promise.all(reservations.map(attempt));
  for (const reservation of reservations) {
    const actionId = reservation.actionId as string;
    if (!recorder.admitted('budget', ATTACKER, actionId)) continue;
    // Up to the budget and past it, to 0 and back up; or, in some episodes, to something small.
    const steps = heavy
      ? random.pick([[BUDGET], [0, BUDGET], [BUDGET, BUDGET + 1, 0], [2 ** 53, Number.MAX_SAFE_INTEGER, BUDGET], [0, 2 * BUDGET, BUDGET]])
      : random.pick([[BUDGET + 1], [0], [random.int(0, 1_000)], [BUDGET, 0], [0, random.int(0, BUDGET), 1]]);
    for (const cost of steps) await recorder.settle('attacker', ATTACKER, reservation.mode, actionId, cost);
  }
}

async function attackerConflict(random: SeededRandom): Promise<void> {
  const usual: Space = favoursBudget() ? 'mixedBudget' : 'mixed';
  const other: Space = usual === 'mixed' ? 'mixedBudget' : 'mixed';
  const calls = Array.from({ length: random.int(1, 6) }, () => attackerCall(random, mixedPure() || random.chance(0.7) ? usual : other, false));
  calls.push(...victimsAlongside(random, 'mixed', random.pick(MODES)));
  await Promise.all(calls.map(attempt));
}

async function attackerRetries(random: SeededRandom): Promise<void> {
  const chosen = new Set(Array.from({ length: random.int(1, 5) }, () => random.pick(retryable)).filter((call) => call !== undefined));
  await Promise.all([...chosen].map((call) => attempt({ ...call, lateUs: latenessOf(random, call.mode) })));
}

/**
 * The attacker's cycle: 4 s of floods, conflicts and retries, then 4 s of reservations settled (its floods, which
 * count, keep its own window full: the budget's window empties while it settles, and a key its settlements made too
 * heavy to record in is forgotten, interval + timeout after its last records).
 */
const ATTACK_CYCLE_MS = 8_000;
const FLOODING_MS = 4_000;

async function attackerLane(): Promise<void> {
  const random = laneRandom(0);
  while (running()) {
    const roll = random.next();
    if ((Date.now() - startAt) % ATTACK_CYCLE_MS < FLOODING_MS) {
      if (roll < 0.6) await attackerFlood(random);
      else if (roll < 0.85) await attackerConflict(random);
      else if (retryable.length > 0) await attackerRetries(random);
    } else if (roll < 0.7) {
      await attackerSettlements(random);
    } else {
      await attackerConflict(random);
    }
    await sleep(random.int(0, 4));
  }
}

/**
 * A lateness that stamps a call inside the previous phase's active part, where the records it must count were made
 * (a call stamped where nothing was recorded tests little), if the most a call may be late by reaches there.
 */
function aimedLateness(random: SeededRandom, most: number): number {
  const elapsedUs = (Date.now() - startAt) * 1000;
  const previousStartUs = (Math.floor(elapsedUs / 1000 / plan.phaseMs) - 1) * plan.phaseMs * 1000;
  const from = Math.max(0, elapsedUs - previousStartUs - plan.activeMs * 1000);
  const to = Math.min(most, elapsedUs - previousStartUs);
  return previousStartUs < 0 || from > to ? random.int(0, most) : random.int(from, to);
}

async function victimLane(lane: number): Promise<void> {
  const random = laneRandom(lane);
  while (running()) {
    const routes = routedNow();
    if (routes.length === 0) {
      await sleep(10);
      continue;
    }
    // A user's session: a few requests (now and then two at once), each checked by the three limiters, then a
    // pause. On a late clock the session's calls are about equally late (a stall, or a queue, delays them all).
    const { victim, mode } = random.pick(routes);
    const most = Math.floor(0.75 * plan.timeouts.late * 1000);
    const sessionLateUs = random.pick([0, random.int(0, most), random.int(Math.floor(most / 2), most), most, aimedLateness(random, most)]);
    for (let session = random.int(2, 6); session > 0 && running(); session -= 1) {
      const calls = Array.from({ length: random.pick([1, 1, 1, 2]) }).flatMap(() =>
        (['actions', 'budget', 'mixed'] as const).map((space) =>
          victimCall(random, space, victim, mode, mode === 'late' ? Math.max(0, sessionLateUs - random.int(0, 20_000)) : 0),
        ),
      );
      await Promise.all(calls.map(attempt));
      for (const call of calls) {
        if (call.space !== 'budget' || call.actionId === undefined || !recorder.admitted('budget', victim, call.actionId) || !random.chance(0.5)) continue;
        const reserved = call.cost as number;
        await recorder.settle('victim', victim, mode, call.actionId, random.pick([0, random.int(0, reserved), reserved, Math.min(BUDGET, 2 * reserved)]));
      }
      await sleep(random.int(0, 10));
    }
    await sleep(random.pick([5, 30, 100, 300]));
  }
}

async function main(): Promise<void> {
  await recorder.connected();
  process.stdout.write('ready\n');
  // The start, or the end of the input: the test gave up before the run (then nothing runs).
  const input = createInterface({ input: process.stdin });
  const line = await Promise.race([once(input, 'line').then(([text]) => text as string), once(input, 'close').then(() => undefined)]);
  input.close();
  if (line !== undefined) {
    startAt = (JSON.parse(line) as { startAt: number }).startAt;
    await sleep(Math.max(0, startAt - Date.now()));
    await Promise.all([attackerLane(), victimLane(1), victimLane(2)]);
  }
  await recorder.close();
  if (line !== undefined) process.stdout.write(`${JSON.stringify(recorder.log())}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
