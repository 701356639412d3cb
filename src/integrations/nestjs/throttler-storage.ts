// A storage for @nestjs/throttler 6 (its `ThrottlerStorage`): every named
// throttler counts an exact rolling window on its own key, with its
// `blockDuration` kept beside it. ThrottlerGuard calls `increment` once per
// throttler, awaiting each, and stops at the first that blocks: one hit-log
// call (one Redis round trip) per throttler. RollingWindowThrottlerGuard calls
// `incrementAll` once per request instead: every throttler in one call.

import type { ThrottlerStorage } from '@nestjs/throttler';
import { func, MAX_INTEGER, MAX_MILLISECONDS, normalize, numberIn, object, optional, string } from '../../core/check.js';
import { localMicroseconds, type MicrosecondClock } from '../../core/clock.js';
import { KeyBuilder } from '../../core/identity.js';
import type { RedisClient } from '../../redis/adapters/client-types.js';
import { createHitLog, HitKeys } from '../../http/stores/hit-log/create-hit-log.js';
import type { BlockingCount, BlockingHit, HitLog } from '../../http/stores/hit-log/hit-log.js';
import { hitRule } from '../../http/stores/window-count.js';

/** Options of {@link RollingWindowThrottlerStorage}. */
export interface RollingWindowThrottlerStorageOptions {
  /**
   * The Redis client that holds the counts, shared by every process that uses
   * it: ioredis (`Redis` or `Cluster`) or node-redis (connected by you).
   * Omitted: this process's memory.
   */
  readonly client?: RedisClient | undefined;
  /**
   * Prefix of every key. Two applications (or two storages) on one client
   * that should not share their counts need distinct namespaces.
   * @default 'nest-throttler'
   */
  readonly namespace?: string;
  /**
   * Where the time comes from: a function returning integer microseconds
   * since the epoch (tests inject one). Processes that share a Redis must
   * keep their clocks in sync.
   * @default this process's microsecond clock
   */
  readonly clock?: MicrosecondClock;
}

/**
 * What `increment` answers, as @nestjs/throttler 6 declares it (its
 * `ThrottlerStorageRecord`, which the package does not export): `totalHits`,
 * `timeToExpire` (seconds), `isBlocked`, `timeToBlockExpire` (seconds).
 */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** One throttler's request to {@link RollingWindowThrottlerStorage.incrementAll}: `increment`'s arguments and the client's tracker. */
export interface ThrottlerHit {
  /** The key ThrottlerGuard's `generateKey` made for the route, the throttler and the client. */
  readonly key: string;
  /** The window, in milliseconds. */
  readonly ttl: number;
  /** The most requests the window admits. */
  readonly limit: number;
  /** How long a request over the limit blocks the key, in milliseconds. */
  readonly blockDuration: number;
  /** The throttler's name. */
  readonly throttlerName: string;
  /** The client, as `getTracker` named it: the keys of one tracker share a Redis Cluster slot. */
  readonly tracker: string;
}

/** The defaults of {@link RollingWindowThrottlerStorageOptions}. */
const STORAGE_DEFAULTS = Object.freeze({ namespace: 'nest-throttler', clock: localMicroseconds });
const STORAGE_SCHEMA = {
  client: optional(object<RedisClient>('a Redis client object'), undefined),
  namespace: optional(string, STORAGE_DEFAULTS.namespace),
  clock: optional(func<MicrosecondClock>(), STORAGE_DEFAULTS.clock),
};
/** The checks of what ThrottlerGuard passes to `increment` (milliseconds, and a count). */
const ttlCheck = numberIn(1, MAX_MILLISECONDS);
const limitCheck = numberIn(0, MAX_INTEGER);
const blockCheck = numberIn(0, MAX_MILLISECONDS);

/**
 * A storage for @nestjs/throttler 6 that counts an exact rolling window: a
 * request stops counting exactly `ttl` milliseconds after it was made, so
 * there is no window boundary at which a client gets twice the limit. With a
 * Redis `client`, every process on that Redis shares each count: one Redis
 * round trip per request under {@link RollingWindowThrottlerGuard}, one per
 * throttler and request under ThrottlerGuard. Without one, it counts in this
 * process's memory.
 *
 * Per named throttler and key (ThrottlerGuard's key names the route and the
 * client):
 *
 * - a request is admitted while fewer than `limit` requests were admitted
 *   in the last `ttl` milliseconds: at most `limit` in any rolling window;
 * - a refused request is not counted; one refused by the count starts a
 *   block of `blockDuration` milliseconds (ThrottlerGuard's default: `ttl`),
 *   during which every request is refused; after it, the rolling window
 *   decides again (with a `blockDuration` shorter than `ttl`, a window still
 *   full refuses the next request, which starts a new block);
 * - with `blockDuration: 0` there is no block: a request is admitted as soon
 *   as the oldest admitted one has left the window.
 *
 * @nestjs/throttler's own storage differs there: it counts the request that
 * starts a block, starts the count afresh after the block, and keeps its
 * counts in one process's memory.
 *
 * @example
 * ```ts
 * import { Module } from '@nestjs/common';
 * import { APP_GUARD } from '@nestjs/core';
 * import { ThrottlerModule } from '@nestjs/throttler';
 * import { Redis } from 'ioredis';
 * import { RollingWindowThrottlerGuard, RollingWindowThrottlerStorage } from 'rolling-window-limiter/nestjs';
 *
 * @Module({
 *   imports: [
 *     ThrottlerModule.forRoot({
 *       throttlers: [{ name: 'second', ttl: 1_000, limit: 5 }, { name: 'minute', ttl: 60_000, limit: 100 }],
 *       storage: new RollingWindowThrottlerStorage({ client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), namespace: 'api' }),
 *     }),
 *   ],
 *   providers: [{ provide: APP_GUARD, useClass: RollingWindowThrottlerGuard }], // or ThrottlerGuard: a call per throttler
 * })
 * export class AppModule {}
 * ```
 */
export class RollingWindowThrottlerStorage implements ThrottlerStorage {
  /** The prefix of every key (see {@link RollingWindowThrottlerStorageOptions.namespace}). */
  readonly namespace: string;
  readonly #log: HitLog;
  readonly #keys: HitKeys;
  readonly #trackers: KeyBuilder;

  /**
   * @param options See {@link RollingWindowThrottlerStorageOptions}.
   * @throws TypeError when an option has the wrong type or is unknown.
   * @throws UnsupportedError for a client that is not supported or cannot run Lua scripts (redis-mock).
   */
  constructor(options: RollingWindowThrottlerStorageOptions = {}) {
    const { client, namespace, clock } = normalize(options, STORAGE_SCHEMA, 'the options', { allowMissing: true });
    this.#log = createHitLog(client, clock);
    this.namespace = namespace;
    this.#keys = new HitKeys(namespace);
    this.#trackers = new KeyBuilder(namespace);
  }

  /**
   * Counts one request of `key` under the throttler `throttlerName`, as
   * ThrottlerGuard calls it, and answers in its units: `totalHits` (the
   * admitted requests in the window, this one included; `limit + 1` when it
   * is refused by the count),
   * `timeToExpire` (seconds until that count next changes), `isBlocked`, and
   * `timeToBlockExpire` (seconds until a request would be admitted again:
   * the end of the block, or without one the moment the window has room;
   * ThrottlerGuard's `Retry-After`). Seconds are rounded up, never early.
   *
   * @param key The key ThrottlerGuard made for the route and the client.
   * @param ttl The window, in milliseconds (a fraction is rounded up).
   * @param limit The most requests the window admits (a fraction is rounded down).
   * @param blockDuration How long a request over the limit blocks the key, in milliseconds (a fraction is rounded up).
   * @param throttlerName The throttler's name; each throttler counts on its own key.
   * @throws TypeError or RangeError (a rejection) for a `ttl`, `limit` or `blockDuration` that is not a number in range.
   * @throws StoreError or TimeoutError (a rejection) when Redis fails or does not answer.
   */
  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const [hit] = await this.#judge([{ key: this.#keys.keyFor(JSON.stringify([throttlerName, key])), ttl, limit, blockDuration }]);
    return hit as ThrottlerStorageRecord;
  }

  /**
   * Counts one request under several throttlers together, as
   * {@link RollingWindowThrottlerGuard} calls it: in one hit-log call (one
   * Redis round trip, one step in memory), atomically. The request is
   * admitted only when every throttler admits it, and then counted by every
   * one; otherwise it is counted by none, each throttler refusing by its
   * count starts its block, and the others answer their count without it.
   * One answer per throttler, in order, as {@link increment} answers.
   *
   * The keys are the tracker's, as the Cluster hash tag (so the throttlers of
   * one client share a slot), and differ from the keys of {@link increment}:
   * ThrottlerGuard and RollingWindowThrottlerGuard on one storage do not share
   * counts. On a Redis Cluster, throttlers whose trackers differ are decided
   * one call per tracker, each atomic on its own throttlers.
   *
   * @param hits The throttlers of one request, each with a distinct name.
   * @throws TypeError or RangeError (a rejection) for a `ttl`, `limit` or `blockDuration` that is not a number in range.
   * @throws StoreError or TimeoutError (a rejection) when Redis fails or does not answer.
   */
  incrementAll(hits: readonly ThrottlerHit[]): Promise<ThrottlerStorageRecord[]> {
    return this.#judge(
      hits.map(({ key, ttl, limit, blockDuration, throttlerName, tracker }) => ({
        key: `${this.#trackers.keyFor(string(tracker, 'tracker'))}${JSON.stringify([throttlerName, key])}`,
        ttl,
        limit,
        blockDuration,
      })),
    );
  }

  /** Checks what ThrottlerGuard resolved, then judges the request on every key in one hit-log call. */
  async #judge(hits: readonly { key: string; ttl: number; limit: number; blockDuration: number }[]): Promise<ThrottlerStorageRecord[]> {
    const judged = hits.map(({ key, ttl, limit, blockDuration }) => {
      const rule = hitRule(ttlCheck(ttl, 'ttl'), limitCheck(limit, 'limit'));
      return { key, rule: { ...rule, blockUs: Math.ceil(blockCheck(blockDuration, 'blockDuration')) * 1000 } };
    });
    const answers = await this.#log.hitOrBlock(judged);
    return answers.map((answer, i) => recordOf(answer, (judged[i] as BlockingHit).rule.limit));
  }
}

/** The hit log's answer in ThrottlerGuard's fields and units. */
function recordOf({ count, changesAtUs, nowUs, blockedUntilUs }: BlockingCount, limit: number): ThrottlerStorageRecord {
  const secondsUntil = (atUs: number | undefined): number => (atUs === undefined ? 0 : Math.max(0, Math.ceil((atUs - nowUs) / 1e6)));
  const isBlocked = blockedUntilUs !== undefined || count > limit;
  return {
    totalHits: count,
    timeToExpire: secondsUntil(changesAtUs),
    isBlocked,
    timeToBlockExpire: isBlocked ? secondsUntil(blockedUntilUs ?? changesAtUs) : 0,
  };
}
