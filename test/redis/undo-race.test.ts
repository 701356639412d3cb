// Action ids, undo and retries racing across processes on real Redis. Four
// processes (test/support/undo-race-worker.ts), each with its own client and
// clock, share one id limited to 20 per window with countBlocked: true, and
// run cycles of: new attempts with action ids (and a retry of one admitted),
// undo of every other action just admitted, then a retry of the blocked ones.
//
// Over-admission would look like this: a blocked attempt's record trims an
// admitted one out of the key, so the key holds fewer records than the window
// does; an undo, or a blocked record replaced by its retry, then frees a slot
// that was never free, and the window ends up with more than 20 actions
// admitted and not undone (before the fix: 143 and 118 of 20 here), or an
// admitted action is admitted a second time. So the test checks, from the
// decision times the processes read from their injected clocks and from the
// key itself, that no window of `interval` holds more than 20 actions
// admitted and not undone, that the key holds exactly those, and that no
// admitted action was admitted again or missing at its undo.

import { expect } from 'chai';
import { startChild, type Child } from '../support/child-process.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { keyOf } from '../support/redis-keys.js';
import { useIORedisClient } from '../support/ioredis-client.js';
import type { UndoRaceResult } from '../support/undo-race-worker.js';

const PROCESSES = 4;
const MAX = 20;
/** Longer than a run, so that every admission of a run shares one window, where over-admission would pile up. */
const INTERVAL_MS = 60_000;
const CYCLES = 60;
const ID = 'shared';
/** A worker still running after this long is killed (by its own PID). */
const WORKER_LIMIT_MS = 20_000;

/** The most admissions in any window (t - interval, t] over these decision times (µs). */
function busiestWindow(times: readonly number[], intervalUs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let oldest = 0;
  sorted.forEach((t, newest) => {
    while ((sorted[oldest] as number) <= t - intervalUs) oldest += 1;
    most = Math.max(most, newest - oldest + 1);
  });
  return most;
}

describe('undo and retries racing across processes on real Redis', function () {
  this.timeout(40_000);
  const namespaces = uniqueNamespaces('undo-race');
  const connection = useIORedisClient();

  /** Starts the processes, lets them go together once all are connected, and collects their results. */
  async function race(namespace: string, batch: boolean): Promise<UndoRaceResult[]> {
    const url = connection.url;
    const args = (worker: number): string[] => [
      url,
      namespace,
      ID,
      String(worker),
      batch ? 'batch' : 'single',
      String(CYCLES),
      String(INTERVAL_MS),
      String(MAX),
    ];
    const children: Child[] = Array.from({ length: PROCESSES }, (_, worker) => startChild('undo-race-worker.ts', args(worker), WORKER_LIMIT_MS));
    try {
      const ready = await Promise.all(children.map((child) => child.nextLine()));
      expect(ready, 'every process connected').to.deep.equal(Array<string>(PROCESSES).fill('ready'));
      for (const child of children) child.send('go');
    } finally {
      for (const child of children) child.closeInput(); // without a go first, a worker exits at once
    }
    const runs = await Promise.all(children.map((child) => child.exited));
    return runs.map((run) => {
      expect(run.code, `a worker failed: ${run.stderr}`).to.equal(0);
      return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as UndoRaceResult;
    });
  }

  for (const batch of [false, true]) {
    it(`never holds more than ${MAX} admitted and not undone in a window, ${PROCESSES} processes${batch ? ', batch: true' : ''}`, async () => {
      const namespace = namespaces.next(batch ? 'batch' : 'single');
      const results = await race(namespace, batch);
      const admissions = results.flatMap((result) => result.admissions);
      const sum = (field: 'attempts' | 'undone' | 'undoMissed' | 'alreadyAdmitted' | 'blockedAnswers'): number =>
        results.reduce((total, result) => total + result[field], 0);
      const busiest = busiestWindow(
        admissions.map(([, t]) => t),
        INTERVAL_MS * 1000,
      );
      const key = keyOf(namespace, ID);
      const held = await connection.client.zrange(key, 0, -1, 'WITHSCORES');
      const inKey = new Map<string, number>();
      for (let i = 0; i < held.length; i += 2) if (held[i]?.startsWith('+') === true) inKey.set((held[i] as string).slice(1), Number(held[i + 1]));
      console.log(
        `      ${PROCESSES} processes × ${CYCLES} cycles: ${sum('attempts')} attempts, ${sum('blockedAnswers')} blocked, ` +
          `${sum('undone')} undone, ${sum('alreadyAdmitted')} answered alreadyAdmitted; admitted and not undone: ` +
          `${admissions.length} (busiest window ${busiest}), the key holds ${inKey.size}`,
      );
      expect(busiest, 'admitted and not undone in one window').to.be.at.most(MAX);
      expect(
        admissions.filter(([actionId]) => actionId.endsWith('#again')),
        'admitted twice',
      ).to.deep.equal([]);
      expect(sum('undoMissed'), 'undos of an admitted action that found nothing').to.equal(0);
      expect(new Map(admissions), 'the key holds exactly the admitted actions not undone, at their decision times').to.deep.equal(inKey);
      await connection.client.del(key, `${key}:a`);
    });
  }
});
