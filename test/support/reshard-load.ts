// Traffic as a reshard meets it: callers deciding on many ids while the slots
// of some of them move between the masters of a real Redis Cluster. Used by
// test/redis/cluster/resharding.test.ts for every cluster client, batched and
// not, under three kinds of moves: rounds of moves 200 ms apart, moves back to
// back, and `redis-cli --cluster reshard` moving thousands of slots.
//
// Each configuration (a client, `batch` on or off) attempts through its own
// namespaces on the same ids, so one mover serves them all:
//   - a limiter of actions (the default mode) and a 2-tier stack take most calls:
//     `limit`, and now and then `wouldLimit`. Their first interval outlasts the
//     run, so each id must admit exactly its first MAX_IN_INTERVAL attempts on
//     each: the check that every id stays exact.
//   - a budget of cost with `countBlocked: false` takes the rest: an attempt with
//     an action id, then `settle` or `undo` of what it admitted.
// Every id is cleared at the end, while slots still move. A call that rejects is
// counted with its message.

import { RateLimiterStack, RollingRateLimiter, type RedisClient } from '../../src/index.js';
import { escapeIdentifier } from '../../src/core/identity.js';
import { keySlot } from './redis-cluster.js';
import { idsInSlot } from './slot-migration.js';
import { SeededRandom } from './random.js';

/** Actions each id of the limiter of actions admits in the run: fewer than its attempts, so blocked calls write too. */
export const MAX_IN_INTERVAL = 200;

/** The ids of a run: `hot` ones in the slots that move, and the rest anywhere (some of them in those slots' neighbours). */
export interface LoadIds {
  readonly all: readonly string[];
  readonly hot: readonly string[];
  readonly hotSlots: readonly number[];
}

/** `total` ids, `perHotSlot` of them in each of `hotSlots`, the rest named `user-<n>` wherever they hash. */
export function loadIds(hotSlots: readonly number[], perHotSlot: number, total: number): LoadIds {
  const hot = hotSlots.flatMap((slot) => idsInSlot(slot, perHotSlot, `hot-${slot}-`));
  const cold: string[] = [];
  for (let n = 0; hot.length + cold.length < total; n++) {
    const id = `user-${n}`;
    if (!hotSlots.includes(keySlot(escapeIdentifier(id)))) cold.push(id);
  }
  return { all: [...hot, ...cold], hot, hotSlots };
}

/** What one configuration did. */
export interface LoadResult {
  readonly name: string;
  readonly attempts: number;
  readonly rejected: number;
  /** Up to three distinct messages of rejected calls. */
  readonly messages: readonly string[];
  /** Ids whose admitted count is not MAX_IN_INTERVAL, with the count. */
  readonly inexact: readonly string[];
  readonly slowestMs: number;
}

/** How one configuration's callers run. */
export interface LoadOptions {
  readonly name: string;
  readonly client: RedisClient;
  readonly batch: boolean;
  /** The limiters' `timeout`, in ms. */
  readonly timeout: number;
  readonly namespace: string;
  readonly ids: LoadIds;
  /** Calls to make at least; the callers go on while `keepGoing()` says so (a reshard still running). */
  readonly attempts: number;
  readonly keepGoing?: (() => boolean) | undefined;
  readonly callers: number;
  readonly seed: number;
}

/** What one limiter of actions (or stack) admitted per id, decided, and failed to decide. */
class Tally {
  readonly admitted = new Map<string, number>();
  readonly decided = new Map<string, number>();
  /** Calls that failed, each of which may or may not have been recorded. */
  readonly failed = new Map<string, number>();

  constructor(readonly name: string) {}

  async limit(subject: { limit(id: string): Promise<boolean> }, id: string): Promise<void> {
    try {
      if (!(await subject.limit(id))) add(this.admitted, id);
      add(this.decided, id);
    } catch (error) {
      add(this.failed, id);
      throw error;
    }
  }

  /**
   * The ids whose admissions are not exact. Every decided attempt counts (the default mode), so an id admits exactly
   * its first MAX_IN_INTERVAL attempts; a failed call may have been recorded, and so taken the place of a later one.
   */
  inexact(ids: readonly string[]): string[] {
    return ids
      .filter((id) => {
        const most = Math.min(MAX_IN_INTERVAL, this.decided.get(id) ?? 0);
        const count = this.admitted.get(id) ?? 0;
        return count > most || count < most - (this.failed.get(id) ?? 0);
      })
      .map((id) => `${this.name} ${id}: ${this.admitted.get(id) ?? 0} admitted of ${this.decided.get(id) ?? 0} decided, ${this.failed.get(id) ?? 0} failed`);
  }
}

function add(counts: Map<string, number>, id: string): void {
  counts.set(id, (counts.get(id) ?? 0) + 1);
}

/**
 * Runs `attempts` calls from `callers` concurrent callers, each on an id of
 * `ids` picked at random, and clears every id; resolves with what happened.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { client, batch, timeout, namespace, ids, callers } = options;
  const limiter = (name: string, interval: number, maxInInterval: number) =>
    new RollingRateLimiter({ client, batch, timeout, namespace: `${namespace}:${name}`, interval, maxInInterval });
  const single = limiter('actions', 600_000, MAX_IN_INTERVAL);
  const stack = new RateLimiterStack([limiter('ten-minutes', 600_000, MAX_IN_INTERVAL), limiter('hour', 3_600_000, 1_000_000)], { batch });
  const budget = new RollingRateLimiter({
    client,
    batch,
    timeout,
    namespace: `${namespace}:budget`,
    interval: 600_000,
    maxCostInInterval: 1_000_000,
    countBlocked: false,
  });
  const tallies = { single: new Tally('limiter'), stack: new Tally('stack') };
  const random = new SeededRandom(options.seed);
  const failures: unknown[] = [];
  let slowestMs = 0;
  let started = 0;

  const timed = async (call: () => Promise<unknown>): Promise<void> => {
    const startedAt = performance.now();
    try {
      await call();
    } catch (error) {
      failures.push(error);
    }
    slowestMs = Math.max(slowestMs, performance.now() - startedAt);
  };
  const caller = async (index: number): Promise<void> => {
    for (let i = 0; started < options.attempts || (options.keepGoing?.() ?? false); i++) {
      started += 1;
      const id = random.pick(ids.all);
      const roll = random.next();
      if (roll < 0.45) await timed(() => tallies.single.limit(single, id));
      else if (roll < 0.8) await timed(() => tallies.stack.limit(stack, id));
      else if (roll < 0.85) await timed(() => (roll < 0.825 ? single : stack).wouldLimit(id));
      else {
        const actionId = `${index}-${i}`;
        await timed(async () => {
          const info = await budget.limitWithInfo(id, { actionId, cost: 10 });
          if (info.blocked) return;
          if (roll < 0.93) await budget.settle(id, actionId, 7);
          else await budget.undo(id, actionId);
        });
      }
    }
  };
  await Promise.all(Array.from({ length: callers }, (_, index) => caller(index)));
  await Promise.all(ids.all.map((id) => Promise.all([single, stack, budget].map((subject) => timed(() => subject.clear(id))))));

  return {
    name: options.name,
    attempts: started,
    rejected: failures.length,
    messages: [...new Set(failures.map((error) => String(error).slice(0, 160)))].slice(0, 3),
    inexact: [...tallies.single.inexact(ids.all), ...tallies.stack.inexact(ids.all)],
    slowestMs,
  };
}
