// `rolling-window-limiter/fastify`: a store for @fastify/rate-limit that
// counts an exact rolling window, shared by every process on one Redis.
// @fastify/rate-limit takes a store as a class, which it instantiates with its
// options, calls as `incr(key, callback, timeWindow, max)` (and `read` for
// `{ increment: false }`), and derives per route with `child(routeOptions)`.
// Neither Fastify nor the plugin is imported here.

import { localMicroseconds, type MicrosecondClock } from '../../core/clock.js';
import { func, MAX_MILLISECONDS, normalize, numberIn, object, optional, string } from '../../core/check.js';
import { InvalidOptionTypeError } from '../../errors/invalid-option-error.js';
import { UnsupportedError } from '../../errors/unsupported-error.js';
import type { RedisClient } from '../../redis/adapters/client-types.js';
import { createHitLog, HitKeys } from './hit-log/create-hit-log.js';
import type { HitCount, HitRule } from './hit-log/hit-log.js';
import { hitRule, windowCount } from './window-count.js';

export { ipKey, DEFAULT_IPV6_SUBNET, type Ipv6Subnet } from '../ip-key.js';

/** Options of {@link rollingWindowStore}. */
export interface FastifyRollingWindowStoreOptions {
  /**
   * The Redis client that holds the counts, shared by every process that uses
   * it: ioredis (`Redis` or `Cluster`) or node-redis (connected by you).
   * Omitted: this process's memory.
   */
  readonly client?: RedisClient;
  /**
   * Prefix of every key. A route with its own `config.rateLimit` counts under
   * `<namespace><METHOD><url>-`, as @fastify/rate-limit's own stores do, and
   * the routes of one `groupId` together under `<namespace>group:<groupId>-`.
   * @default 'fastify-rate-limit-'
   */
  readonly namespace?: string;
  /**
   * Integer microseconds since the epoch: when a hit is made and what its window is measured from. Tests inject one
   * to walk through time without sleeping; every process sharing a Redis must keep its clock in sync.
   * @default this process's microsecond clock
   */
  readonly clock?: MicrosecondClock;
}

/** A count as @fastify/rate-limit reads it: hits in the window (this one included) and milliseconds until that count next changes. */
export interface FastifyRateLimitCount {
  /** Hits in the window, this one included (above `max` it reads `max + 1`). */
  readonly current: number;
  /** Milliseconds until the count next changes (see {@link RollingWindowFastifyStore.incr} and {@link RollingWindowFastifyStore.read}). */
  readonly ttl: number;
}

/** The callback of {@link RollingWindowFastifyStore.incr}. */
export type FastifyRateLimitCallback = (error: Error | null, result?: FastifyRateLimitCount) => void;

/** What @fastify/rate-limit passes to a store's constructor and `child` (the fields this store reads). */
interface FastifyRateLimitStoreParams {
  /** Exponential backoff on a fixed window's TTL: refused, a rolling window has no TTL to stretch. */
  readonly exponentialBackoff?: boolean;
  /** The route, for a route's own store (`child`). */
  readonly routeInfo?: { readonly method?: string | readonly string[]; readonly url?: string };
  /** The route's group: routes with the same `groupId` share one count per client. */
  readonly groupId?: string;
}

/**
 * The store instances @fastify/rate-limit makes from the class that
 * {@link rollingWindowStore} returns: one for the plugin, one per route with
 * its own limits.
 */
export interface RollingWindowFastifyStore {
  /**
   * Records a hit for `key` in a rolling window of `timeWindow` ms and calls
   * back with `current`, the hits in the window this one included (the
   * plugin blocks when it exceeds `max`), and `ttl`, the milliseconds until
   * that count next changes: with the window full, until a request would be
   * admitted again (the plugin's `Retry-After`); else until the oldest hit leaves.
   */
  incr(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void;
  /**
   * Reads the count of `key` without recording a hit (the plugin's
   * `{ increment: false }`): `current` is the hits in the window, capped at
   * `max + 1` (so `isExceeded` is true once a request was refused), and `ttl`
   * as `incr` would have answered: with the window full (or over), the
   * milliseconds until a request would be admitted again (every hit counts,
   * refused ones too), so a client that waits it is admitted; else until the
   * oldest hit leaves.
   */
  read(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void;
  /**
   * The store of one route with its own `config.rateLimit` (the plugin passes the route's merged options): its own
   * keys, or with a `groupId` the keys of its group, shared by every route of that group.
   */
  child(routeOptions: object): RollingWindowFastifyStore;
}

/** The class @fastify/rate-limit's `store` option takes. */
export type RollingWindowFastifyStoreClass = new (pluginOptions?: object) => RollingWindowFastifyStore;

/** The defaults of {@link FastifyRollingWindowStoreOptions}. */
const FASTIFY_STORE_DEFAULTS = Object.freeze({ namespace: 'fastify-rate-limit-', clock: localMicroseconds });
const FASTIFY_STORE_SCHEMA = {
  client: optional(object<RedisClient>('a Redis client object'), undefined),
  namespace: optional(string, FASTIFY_STORE_DEFAULTS.namespace),
  clock: optional(func<MicrosecondClock>(), FASTIFY_STORE_DEFAULTS.clock),
};
/** The checks of the window (ms) and `max` the plugin hands the store with each request. */
const timeWindowCheck = numberIn(0, MAX_MILLISECONDS);
const maxCheck = numberIn(0, Number.MAX_SAFE_INTEGER);

/**
 * Makes a store for @fastify/rate-limit (tested with version 11 on Fastify 5) that counts an
 * exact rolling window: a hit stops counting exactly `timeWindow` after it was
 * made, so no window boundary lets a client through twice. With a Redis
 * `client`, every process on that Redis shares each count; one Redis round
 * trip per request. Like the plugin's own stores, it keeps one count per key
 * and judges each request by the `timeWindow` and `max` the plugin hands it
 * for that request (functions of the request included), whatever other rules
 * did on the key. Every hit counts, blocked ones too, so `continueExceeding`
 * is what it does anyway; a client that keeps sending while blocked stays
 * blocked. `exponentialBackoff` is refused. Over the limit the count reads
 * `max + 1` whatever the number of requests, so the plugin's `ban` takes
 * effect only as `ban: 0`. Keys are counted as the plugin hands them (its
 * `ipv6Subnet` groups IPv6 clients).
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import rateLimit from '@fastify/rate-limit';
 * import { Redis } from 'ioredis';
 * import { rollingWindowStore } from 'rolling-window-limiter/fastify';
 *
 * const fastify = Fastify({ trustProxy: '10.0.0.2' }); // your reverse proxy's address: request.ip is then the client's
 * await fastify.register(rateLimit, {
 *   max: 100,
 *   timeWindow: '1 minute',
 *   store: rollingWindowStore({ client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') }),
 * });
 * ```
 *
 * @throws TypeError when an option has the wrong type or is unknown.
 */
export function rollingWindowStore(options: FastifyRollingWindowStoreOptions = {}): RollingWindowFastifyStoreClass {
  // A former option, refused with where it belongs rather than as merely unknown.
  const ipv6Subnet = (options as { ipv6Subnet?: unknown } | null | undefined)?.ipv6Subnet;
  if (ipv6Subnet !== undefined) {
    throw new InvalidOptionTypeError(
      'rollingWindowStore no longer takes `ipv6Subnet`: the store counts the key the plugin hands it. Give `ipv6Subnet` to @fastify/rate-limit instead (its default key cuts IPv6 to a /64)',
      'ipv6Subnet',
      ipv6Subnet,
    );
  }
  const { client, namespace, clock } = normalize(options, FASTIFY_STORE_SCHEMA, 'the options', { allowMissing: true });
  const log = createHitLog(client, clock);

  class Store implements RollingWindowFastifyStore {
    readonly #namespace: string;
    readonly #keys: HitKeys;

    constructor(pluginOptions: object = {}, keyNamespace: string = namespace) {
      if ((pluginOptions as FastifyRateLimitStoreParams).exponentialBackoff === true) {
        throw new UnsupportedError(
          "`exponentialBackoff` stretches a fixed window's TTL; a rolling window has none to stretch. Leave it out with rollingWindowStore",
        );
      }
      this.#namespace = keyNamespace;
      this.#keys = new HitKeys(keyNamespace);
    }

    incr(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void {
      answer((rule) => log.hit(this.#keys.keyFor(key), rule), timeWindow, max, callback);
    }

    read(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void {
      answer((rule) => log.read(this.#keys.keyFor(key), rule), timeWindow, max, callback);
    }

    child(routeOptions: object): RollingWindowFastifyStore {
      const { groupId, routeInfo } = routeOptions as FastifyRateLimitStoreParams;
      // Routes of one group share their keys, whichever route asks (the plugin appends the group to the client's key).
      if (typeof groupId === 'string' && groupId !== '') return new Store(routeOptions, `${namespace}group:${groupId}-`);
      const { method = '', url = '' } = routeInfo ?? {};
      return new Store(routeOptions, `${this.#namespace}${String(method)}${url}-`);
    }
  }
  return Store;
}

/** Counts under the request's rule and hands the outcome to a Node-style callback, as the plugin expects. */
function answer(count: (rule: HitRule) => Promise<HitCount>, timeWindow: number, max: number, callback: FastifyRateLimitCallback): void {
  let promise: Promise<HitCount>;
  try {
    promise = count(hitRule(timeWindowCheck(timeWindow, 'timeWindow'), maxCheck(max, 'max')));
  } catch (error) {
    callback(error as Error);
    return;
  }
  promise.then(
    (result) => {
      // @fastify/rate-limit's view of an answer: the reset as a wait.
      const { count: current, reset } = windowCount(result);
      callback(null, { current, ttl: reset?.inMs ?? 0 });
    },
    (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
  );
}
