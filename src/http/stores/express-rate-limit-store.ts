// `rolling-window-limiter/express-rate-limit`: a store for express-rate-limit
// (its `Store` interface: init, increment, decrement, get, resetKey,
// resetAll, shutdown, prefix, localKeys) that counts an exact rolling window,
// shared by every process on one Redis. express-rate-limit is not imported:
// its types are written out here, in the shape it calls, so this entry loads
// nothing but this library.

import { AsyncLocalStorage } from 'node:async_hooks';
import { either, func, integer, MAX_INTEGER, MAX_MILLISECONDS, normalize, numberIn, object, optional, string } from '../../core/check.js';
import { InvalidOptionRangeError } from '../../errors/invalid-option-error.js';
import type { RedisClient } from '../../redis/adapters/client-types.js';
import { createHitLog, HitKeys } from './hit-log/create-hit-log.js';
import type { HitLog, HitRule, RecordedHit } from './hit-log/hit-log.js';
import { hitRule, windowCount, type WindowCount } from './window-count.js';

/** Options of {@link RollingWindowStore}. */
export interface RollingWindowStoreOptions {
  /**
   * The Redis client that holds the counts, shared by every process that uses
   * it: ioredis (`Redis` or `Cluster`) or node-redis (connected by you).
   * Omitted: this process's memory.
   */
  readonly client?: RedisClient;
  /**
   * Prefix of every key. Two rate limiters on one client need distinct
   * prefixes, or they count each other's hits: a second store with the same
   * prefix on the same client in one process is refused.
   * @default 'rl:'
   */
  readonly prefix?: string;
  /**
   * With express-rate-limit's `limit` as a function: the largest limit it
   * returns. The store learns a request's limit only after counting it, so it
   * counts every key up to `maxLimit + 1` hits (and keeps no more): a limit
   * above `maxLimit` is never reached. Ignored when `limit` is a number.
   * @default 1000
   */
  readonly maxLimit?: number;
}

/** What express-rate-limit tells a store about itself in `init` (the fields this store reads). */
export interface ExpressRateLimitOptions {
  /** The window, in milliseconds. */
  readonly windowMs: number;
  /** The most hits per window: a number, or a function of the request (see {@link RollingWindowStoreOptions.maxLimit}). */
  readonly limit: unknown;
  /** Whether failed requests are given back (`decrement`). */
  readonly skipFailedRequests?: boolean;
  /** Whether successful requests are given back (`decrement`). */
  readonly skipSuccessfulRequests?: boolean;
}

/** A key's hits and when their count next changes, as express-rate-limit reads them. */
export interface ClientRateLimitInfo {
  /** Hits in the window, blocked ones too (this one included after `increment`); above the limit it reads `limit + 1`. */
  totalHits: number;
  /**
   * When the count next changes (see {@link RollingWindowStore.increment} and {@link RollingWindowStore.get}): the
   * millisecond of the answer plus the wait rounded up to the millisecond, so that express-rate-limit, which
   * counts from its own `Date.now()` and rounds up to whole seconds, announces the true whole seconds (60 for a
   * fresh hit of a 60 s window).
   */
  resetTime: Date | undefined;
}

/** A hit this store recorded, carried in the request's async context until its `decrement`. */
interface PendingHit {
  readonly store: RollingWindowStore;
  readonly key: string;
  readonly hit: Promise<RecordedHit>;
  givenBack: boolean;
}

/** The hit of the request being handled: express-rate-limit calls `decrement` in a continuation of its `increment`. */
const pendingHits = new AsyncLocalStorage<PendingHit>();
/** Prefixes in use per Redis client in this process. */
const prefixesInUse = new WeakMap<object, Set<string>>();
/** The defaults of {@link RollingWindowStoreOptions}. */
const STORE_DEFAULTS = Object.freeze({ prefix: 'rl:', maxLimit: 1000 });
const STORE_SCHEMA = {
  client: optional(object<RedisClient>('a Redis client object'), undefined),
  prefix: optional(string, STORE_DEFAULTS.prefix),
  maxLimit: optional(integer(0, MAX_INTEGER), STORE_DEFAULTS.maxLimit),
};
/** The checks of the fields of express-rate-limit's options that the store reads in `init`. */
const windowMsCheck = numberIn(1, MAX_MILLISECONDS);
const limitCheck = either(func<(...args: never[]) => unknown>(), integer(0, MAX_INTEGER), (value) => typeof value === 'function');

/**
 * A store for express-rate-limit (tested with version 8) that counts an exact
 * rolling window: a hit stops counting exactly `windowMs` after it was made,
 * so there is no window boundary at which a client gets twice the limit.
 * With a Redis `client`, every process on that Redis shares each count; one
 * Redis round trip per request.
 *
 * Every hit counts, blocked ones too, as in express-rate-limit's own stores.
 * `decrement` (`skipFailedRequests`, `skipSuccessfulRequests`) removes the
 * hit of the request it is called for, a refused request's own hit included,
 * and no other, however many requests are in flight: admitted hits are kept
 * while in the window, refused ones are bounded apart (see docs/http.md), so
 * a refused request's give-back never frees an admitted request's slot.
 *
 * @example
 * ```ts
 * import { rateLimit } from 'express-rate-limit';
 * import { Redis } from 'ioredis';
 * import { RollingWindowStore } from 'rolling-window-limiter/express-rate-limit';
 *
 * app.use(rateLimit({
 *   windowMs: 60_000,
 *   limit: 100,
 *   standardHeaders: 'draft-8',
 *   legacyHeaders: false,
 *   store: new RollingWindowStore({ client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), prefix: 'api:' }),
 * }));
 * ```
 */
export class RollingWindowStore {
  /** The prefix of every key (see {@link RollingWindowStoreOptions.prefix}). */
  readonly prefix: string;
  /** Keys are shared with other processes (on Redis) or private to this one (in memory). */
  readonly localKeys: boolean;
  readonly #client: RedisClient | undefined;
  readonly #log: HitLog;
  readonly #keys: HitKeys;
  readonly #maxLimit: number;
  #rule: HitRule | undefined;
  #initError: Error | undefined;
  #givesBack = false;

  /**
   * @param options See {@link RollingWindowStoreOptions}.
   * @throws TypeError when an option has the wrong type or is unknown; RangeError for a `maxLimit` out of range (0 to 2^31 - 1), or a
   * prefix that another store in this process already uses on the same client.
   */
  constructor(options: RollingWindowStoreOptions = {}) {
    const { client, prefix, maxLimit } = normalize(options, STORE_SCHEMA, 'the options', { allowMissing: true });
    this.#log = createHitLog(client);
    if (client !== undefined) claimPrefix(client, prefix);
    this.prefix = prefix;
    this.#keys = new HitKeys(prefix);
    this.#maxLimit = maxLimit;
    this.#client = client;
    this.localKeys = client === undefined;
  }

  /**
   * Called by express-rate-limit with its options: takes `windowMs`, and
   * `limit` when it is a number (a function: see {@link RollingWindowStoreOptions.maxLimit}).
   * @throws TypeError for a `windowMs` or `limit` of the wrong type, RangeError for one out of range (express-rate-limit
   * logs it; requests then fail with it).
   */
  init(options: ExpressRateLimitOptions): void {
    try {
      // express-rate-limit's own properties only, as every option is read.
      const own = (name: keyof ExpressRateLimitOptions): unknown => (Object.hasOwn(options, name) ? options[name] : undefined);
      const windowMs = windowMsCheck(own('windowMs'), 'windowMs');
      const limit = limitCheck(own('limit'), 'limit');
      this.#givesBack = own('skipFailedRequests') === true || own('skipSuccessfulRequests') === true;
      this.#rule = hitRule(windowMs, typeof limit === 'number' ? limit : this.#maxLimit);
    } catch (error) {
      this.#initError = error as Error;
      throw error;
    }
  }

  #ruleOrThrow(): HitRule {
    if (this.#rule !== undefined) return this.#rule;
    throw this.#initError ?? new TypeError('RollingWindowStore was not initialized: pass it to rateLimit({ store })');
  }

  /**
   * Records a hit for `key`; resolves with the hits in the window (this one
   * included) and `resetTime`: while the window has room, when the oldest
   * hit leaves; over the limit, when a request would be admitted again.
   */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    const rule = this.#ruleOrThrow();
    // Made outside any request's context: a promise keeps the context it was made in, and the previous request's
    // hit in it would chain every hit of a caller that increments in one context (a loop, a test) into the heap.
    const hit = pendingHits.exit(() => this.#log.hit(this.#keys.keyFor(key), rule));
    if (this.#givesBack) pendingHits.enterWith({ store: this, key, hit, givenBack: false });
    return infoOf(windowCount(await hit));
  }

  /**
   * The hits of `key` in the window and `resetTime` as {@link RollingWindowStore.increment} would have answered
   * without this hit; writes nothing. A key with no hit in its window (never seen, reset, given back, or every hit
   * gone from the window) reads `{ totalHits: 0, resetTime: undefined }`, never `undefined`: every key has a rolling
   * window, so `(await limiter.getKey(ip)).totalHits` is always a count.
   */
  async get(key: string): Promise<ClientRateLimitInfo> {
    return infoOf(windowCount(await this.#log.read(this.#keys.keyFor(key), this.#ruleOrThrow())));
  }

  /**
   * Removes the hit of the request this is called for (express-rate-limit
   * calls it while handling that request): a refused request gives back its
   * own hit, never an admitted one. Does nothing when called outside a
   * request this store counted, or twice for one request, or when the hit is
   * gone already (it left the window, or it was a refused hit dropped under a
   * flood of them, which freed no admitted slot).
   */
  async decrement(key: string): Promise<void> {
    const pending = pendingHits.getStore();
    if (pending === undefined || pending.store !== this || pending.key !== key || pending.givenBack) return;
    pending.givenBack = true;
    const { member } = await pending.hit;
    await this.#log.remove(this.#keys.keyFor(key), member);
  }

  /** Forgets every hit of `key`. */
  async resetKey(key: string): Promise<void> {
    await this.#log.clear(this.#keys.keyFor(key));
  }

  /** Forgets every hit under this store's prefix (on Redis: a SCAN, not atomic; not on a Cluster). */
  async resetAll(): Promise<void> {
    await this.#log.clearAll(this.#keys.prefix);
  }

  /** Releases the prefix for another store in this process; in memory, forgets every hit. The client stays open. */
  async shutdown(): Promise<void> {
    if (this.#client === undefined) await this.#log.clearAll(this.#keys.prefix);
    else prefixesInUse.get(this.#client)?.delete(this.prefix);
  }
}

/** express-rate-limit's view of an answer: the reset as a moment. */
function infoOf({ count, reset }: WindowCount): ClientRateLimitInfo {
  return { totalHits: count, resetTime: reset === undefined ? undefined : new Date(reset.atMs) };
}

/** Refuses a second store with `prefix` on `client` in this process: two limiters would count each other's hits. */
function claimPrefix(client: object, prefix: string): void {
  const used = prefixesInUse.get(client) ?? new Set<string>();
  if (used.has(prefix)) {
    throw new InvalidOptionRangeError(
      `Another RollingWindowStore in this process already uses the prefix ${JSON.stringify(prefix)} on this Redis client: two rateLimit() instances would count each other's hits. Give each its own \`prefix\` (or call shutdown() on the old store first)`,
      'prefix',
      prefix,
    );
  }
  used.add(prefix);
  prefixesInUse.set(client, used);
}
