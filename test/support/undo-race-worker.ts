// A child process for test/redis/undo-race.test.ts: one of several processes
// that share one id on one real Redis, each running cycles of: new attempts
// with action ids (and a retry of one admitted), `undo` of every other action
// admitted, then one retry of each blocked one.
//
// Started by startChild('undo-race-worker.ts', [url, namespace, id, worker, batch, cycles, interval, max]).
// Prints `ready` once connected, waits for a `go` line on stdin, runs its
// cycles, and prints one JSON line (an {@link UndoRaceResult}) before it
// exits. Every loop is a fixed number of cycles.
//
// The time of each decision is read from the injected clock as the decision
// is made (the limiter reads its clock synchronously, inside the call), never
// from when an await resumed.

import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { RollingRateLimiter, type RateLimitInfo } from '../../src/index.js';

/** New action ids each cycle attempts. */
const FRESH = 3;
/** Blocked action ids each cycle retries (the oldest first); more are dropped, as a caller would give up on them. */
const RETRIES = 3;

/** What a worker reports. */
export interface UndoRaceResult {
  readonly worker: number;
  /**
   * Each admission it was told of and did not give back, with its decision's time (µs): an action id with its
   * first admission; `<id>#again` for an action id admitted a second time while its first admission counted.
   */
  readonly admissions: readonly (readonly [string, number])[];
  readonly attempts: number;
  readonly undone: number;
  /** Undos of an admitted action that found nothing to remove. */
  readonly undoMissed: number;
  /** Retries of an admitted action answered `alreadyAdmitted`. */
  readonly alreadyAdmitted: number;
  readonly blockedAnswers: number;
}

const [url = '', namespace = '', id = '', workerText = '0', batchText = 'single', cyclesText = '0', intervalText = '0', maxText = '0'] = process.argv.slice(2);
const worker = Number(workerText);
const cycles = Math.min(Number(cyclesText), 1_000);

async function main(): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    await redis.ping();
    let last = 0;
    /** This process's wall clock in µs, strictly increasing; `last` is the time of the decision just asked for. */
    const clock = (): number => (last = Math.max(Date.now() * 1000, last + 1));
    const limiter = new RollingRateLimiter({
      client: redis,
      namespace,
      interval: Number(intervalText),
      maxInInterval: Number(maxText),
      countBlocked: true,
      clock,
      batch: batchText === 'batch',
      timeout: 15_000,
    });
    const attempt = async (actionId: string): Promise<{ actionId: string; t: number; info: RateLimitInfo }> => {
      const decided = limiter.limitWithInfo(id, { actionId });
      const t = last; // read in the call, before anything else can run
      return { actionId, t, info: await decided };
    };

    const input = createInterface({ input: process.stdin });
    console.log('ready');
    const go = await new Promise<boolean>((resolve) => {
      input.once('line', (line) => resolve(line === 'go'));
      input.once('close', () => resolve(false)); // the parent gave up before the start
    });
    input.close();
    if (!go) return;

    const admitted = new Map<string, number>();
    const again: (readonly [string, number])[] = [];
    const tally = { attempts: 0, undone: 0, undoMissed: 0, alreadyAdmitted: 0, blockedAnswers: 0 };
    /** Attempts these action ids at once; answers the ones blocked and the ones newly admitted. */
    const attemptAll = async (actionIds: readonly string[]): Promise<{ blocked: string[]; newlyAdmitted: string[] }> => {
      const answers = await Promise.all(actionIds.map(attempt));
      tally.attempts += answers.length;
      const blocked: string[] = [];
      const newlyAdmitted: string[] = [];
      for (const { actionId, t, info } of answers) {
        if (info.alreadyAdmitted === true) tally.alreadyAdmitted += 1;
        else if (info.blocked) {
          tally.blockedAnswers += 1;
          blocked.push(actionId);
        } else if (admitted.has(actionId)) again.push([`${actionId}#again`, t]);
        else {
          admitted.set(actionId, t);
          newlyAdmitted.push(actionId);
        }
      }
      return { blocked, newlyAdmitted };
    };
    /** Gives these admitted actions back (their pushes could not be sent). */
    const undoAll = async (actionIds: readonly string[]): Promise<void> => {
      const removed = await Promise.all(actionIds.map((actionId) => limiter.undo(id, actionId)));
      actionIds.forEach((actionId, i) => {
        if (removed[i] === true) {
          admitted.delete(actionId);
          tally.undone += 1;
        } else tally.undoMissed += 1; // the action was admitted and could not be given back: it still happened
      });
    };
    let next = 0;
    let toUndo: string[] = [];
    for (let cycle = 0; cycle < cycles; cycle += 1) {
      // New actions, and one already admitted asked for again (answered alreadyAdmitted while it counts).
      const fresh = Array.from({ length: FRESH }, () => `w${worker}-${(next += 1)}`);
      const first = await attemptAll([...fresh, ...[...admitted.keys()].slice(-1)]);
      // Every other admission is given back, then the blocked actions are retried at once, each once.
      await undoAll([...toUndo, ...first.newlyAdmitted].filter((_, i) => i % 2 === 0));
      const retried = await attemptAll(first.blocked.slice(0, RETRIES));
      toUndo = retried.newlyAdmitted;
    }
    const result: UndoRaceResult = { worker, admissions: [...admitted, ...again], ...tally };
    console.log(JSON.stringify(result));
  } finally {
    await redis.quit();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
