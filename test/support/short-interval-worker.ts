// A child process for test/redis/short-interval-fuzz.test.ts: one of several
// processes that share a few ids on one real Redis, each with its own ioredis
// client, deciding at intervals of a few milliseconds on the local clock.
//
// Started by startChild('short-interval-worker.ts', [url, worker]). It prints
// `ready` once connected, then reads one JSON line per scenario (a
// {@link FuzzScenario}), runs it, and prints one JSON line (a
// {@link FuzzLog}); it exits when its stdin closes. Every loop is bounded: a
// scenario is a fixed number of groups of a few calls each.
//
// A scenario's schedule comes from its seed: groups of calls sent at once
// (plain attempts, attempts with this process's own action ids, retries and
// undos of those, attempts with action ids every process shares), then a
// pause (none, a turn of the event loop, a few milliseconds, or now and then
// longer than the key's TTL). An action id of this process is never in two
// calls at once: each call on it is made after the one before it answered,
// so the parent knows which admission an undo removed.
//
// The time of each decision is the limiter's own stamp: the local clock
// (localMicroseconds, the function `clock: 'local'` reads), read through an
// injected clock that keeps the reading the limiter took, synchronously in
// the call. When each call answered is read from the same clock.

import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { localMicroseconds } from '../../src/core/clock.js';
import { RollingRateLimiter, type RateLimitInfo } from '../../src/index.js';
import { LATE_MARGIN_MS } from './admission-windows.js';
import { SeededRandom } from './random.js';

/** One scenario, as the parent sends it to each process. */
export interface FuzzScenario {
  /** Echoed in the log. */
  readonly index: number;
  readonly namespace: string;
  /** The ids every process decides on. */
  readonly ids: readonly string[];
  readonly interval: number;
  readonly maxInInterval: number;
  readonly minDifference: number;
  readonly countBlocked: boolean;
  readonly batch: boolean;
  readonly timeout: number;
  /** This process's seed (the scenario's, mixed with the process's number). */
  readonly seed: number;
  /** How many groups of calls this process sends. */
  readonly groups: number;
  /** How many action ids the processes share (`s0`, `s1`...). */
  readonly sharedActions: number;
  /** The chance that a pause outlasts the key's TTL (interval + timeout). */
  readonly longPauseChance: number;
  /** A planted defect, for the test that the check is not blind: this process's own `maxInInterval`. */
  readonly maxInIntervalHere?: number;
  /** A planted defect: this process's own `minDifference`. */
  readonly minDifferenceHere?: number;
}

/** How a decision ended: admitted, blocked, already admitted, or failed (rejected: a timeout, a store error). */
export type FuzzOutcome = 'admitted' | 'blocked' | 'already' | 'failed';

/**
 * One decision: [id index, action id ('' for none), own (1: this process's action id, undone by it), stamp (µs),
 * answered (µs, this process's local clock when the promise settled), outcome].
 */
export type FuzzDecision = readonly [number, string, 0 | 1, number, number, FuzzOutcome];

/** One undo: [id index, action id, started (µs), answered (µs), removed (1), found nothing (0) or failed (-1)]. */
export type FuzzUndo = readonly [number, string, number, number, 1 | 0 | -1];

/** What a process reports for one scenario: its calls in the order it made them. */
export interface FuzzLog {
  readonly index: number;
  readonly worker: number;
  /** Its decisions and undos, in the order it sent them ('d' then the decision, 'u' then the undo). */
  readonly events: readonly (readonly ['d', ...FuzzDecision] | readonly ['u', ...FuzzUndo])[];
  /** How many times a limiter read the clock; one per decision. */
  readonly clockReads: number;
  readonly wallMs: number;
}

/** The most groups one scenario may ask for, so a bad line cannot run away. */
const MAX_GROUPS = 5_000;

/** The state of one of this process's action ids: which id it is on, and whether its last admission may count. */
interface OwnAction {
  readonly id: number;
  readonly actionId: string;
  /** Admitted and not undone, as far as this process knows. */
  admitted: boolean;
  /** A call on it failed or answered late: what it holds is unknown, so it is left alone. */
  poisoned: boolean;
}

async function runScenario(client: Redis, worker: number, scenario: FuzzScenario): Promise<FuzzLog> {
  const started = Date.now();
  const random = new SeededRandom(scenario.seed);
  let clockReads = 0;
  let stamp = 0;
  const limiter = new RollingRateLimiter({
    client,
    namespace: scenario.namespace,
    interval: scenario.interval,
    maxInInterval: scenario.maxInIntervalHere ?? scenario.maxInInterval,
    minDifference: scenario.minDifferenceHere ?? scenario.minDifference,
    countBlocked: scenario.countBlocked,
    batch: scenario.batch,
    timeout: scenario.timeout,
    clock: () => {
      clockReads += 1;
      return (stamp = localMicroseconds());
    },
  });
  const events: FuzzLog['events'][number][] = [];
  const own: OwnAction[] = [];
  /** A call that answered later than this after its stamp may have run past its timeout: its outcome is not trusted. */
  const lateUs = (scenario.timeout - LATE_MARGIN_MS) * 1000;

  /** One attempt: sent now (its stamp read in the call), logged in sending order, filled in when it answers. */
  const attempt = (id: number, actionId: string, ownAction: OwnAction | undefined): Promise<void> => {
    const decided: Promise<RateLimitInfo> = limiter.limitWithInfo(scenario.ids[id] as string, actionId === '' ? undefined : { actionId });
    const entry: ['d', ...FuzzDecision] = ['d', id, actionId, ownAction === undefined ? 0 : 1, stamp, 0, 'failed'];
    events.push(entry);
    return decided.then(
      (info) => {
        entry[5] = localMicroseconds();
        entry[6] = info.alreadyAdmitted === true ? 'already' : info.blocked ? 'blocked' : 'admitted';
        if (ownAction === undefined) return;
        if (entry[5] - entry[4] > lateUs) ownAction.poisoned = true;
        else if (entry[6] === 'admitted') ownAction.admitted = true;
      },
      () => {
        entry[5] = localMicroseconds();
        if (ownAction !== undefined) ownAction.poisoned = true;
      },
    );
  };

  const undo = (action: OwnAction): Promise<void> => {
    const entry: ['u', ...FuzzUndo] = ['u', action.id, action.actionId, localMicroseconds(), 0, -1];
    events.push(entry);
    return limiter.undo(scenario.ids[action.id] as string, action.actionId).then(
      (removed) => {
        entry[4] = localMicroseconds();
        entry[5] = removed ? 1 : 0;
        if (removed) action.admitted = false;
      },
      () => {
        entry[4] = localMicroseconds();
        action.poisoned = true;
      },
    );
  };

  const groups = Math.min(scenario.groups, MAX_GROUPS);
  for (let group = 0; group < groups; group += 1) {
    const calls: Promise<void>[] = [];
    const busy = new Set<OwnAction>();
    const size = random.int(1, 5);
    for (let call = 0; call < size; call += 1) {
      const id = random.int(0, scenario.ids.length - 1);
      const kind = random.next();
      const idle = own.filter((action) => !action.poisoned && !busy.has(action));
      if (kind < 0.45) {
        calls.push(attempt(id, '', undefined));
      } else if (kind < 0.6 || idle.length === 0) {
        const action: OwnAction = { id, actionId: `w${worker}-${own.length}`, admitted: false, poisoned: false };
        own.push(action);
        busy.add(action);
        calls.push(attempt(id, action.actionId, action));
      } else if (kind < 0.72) {
        // A retry of one of the last few: blocked ones are attempted anew, admitted ones answered or admitted again.
        const action = random.pick(idle.slice(-6));
        busy.add(action);
        calls.push(attempt(action.id, action.actionId, action));
      } else if (kind < 0.84) {
        // Mostly an admitted action given back; sometimes one with nothing to remove.
        const admitted = idle.filter((action) => action.admitted).slice(-6);
        const action = admitted.length > 0 && random.chance(0.85) ? random.pick(admitted) : random.pick(idle.slice(-6));
        busy.add(action);
        calls.push(undo(action));
      } else {
        calls.push(attempt(id, `s${random.int(0, scenario.sharedActions - 1)}`, undefined));
      }
    }
    await Promise.all(calls);
    const pause = random.next();
    if (pause < scenario.longPauseChance) await sleep(scenario.interval + scenario.timeout + random.int(0, 3));
    else if (pause < 0.35) await new Promise<void>((resolve) => setImmediate(resolve));
    else if (pause < 0.6) await sleep(random.int(0, 2 * scenario.interval));
    // else: the next group at once
  }
  return { index: scenario.index, worker, events, clockReads, wallMs: Date.now() - started };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function main(): Promise<void> {
  const [url = '', workerText = '0'] = process.argv.slice(2);
  const worker = Number(workerText);
  const client = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    await client.ping();
    console.log('ready');
    const input = createInterface({ input: process.stdin });
    for await (const line of input) {
      if (line.trim() === '') continue;
      const log = await runScenario(client, worker, JSON.parse(line) as FuzzScenario);
      console.log(JSON.stringify(log));
    }
  } finally {
    await client.quit();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1); // stdin, still open, would keep the process alive
});
