// `rolling-window-limiter/express-rate-limit`: a store for express-rate-limit
// (its `Store` interface: init, increment, decrement, resetKey, get, prefix)
// that counts an exact rolling window, shared by every process on one Redis.
// express-rate-limit is not imported: its types are written out here, in the
// shape it calls, so this entry loads nothing but this library.

import { randomUUID } from 'node:crypto';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { describeValue } from '../core/options.js';
import type { RedisClient } from '../redis/adapters/client-types.js';
import { checkClient, RollingCounter } from './rolling-count.js';

/** Options of {@link RollingWindowStore}. */
export interface RollingWindowStoreOptions {
  /**
   * The Redis client that holds the counts, shared by every process that uses
   * it: ioredis (`Redis` or `Cluster`) or node-redis (connected by you).
   * Omitted: this process's memory.
   */
  readonly client?: RedisClient;
  /**
   * Prefix of every key (the limiter's namespace). Two rate limiters on one
   * client need distinct prefixes, or they count each other's hits.
   * @default 'rl:'
   */
  readonly prefix?: string;
}

/** What express-rate-limit tells a store about itself in `init` (the fields this store reads). */
export interface ExpressRateLimitOptions {
  /** The window, in milliseconds. */
  readonly windowMs: number;
  /** The most hits per window: a number (a function is not supported: the store must know the limit). */
  readonly limit: unknown;
  /** Whether failed requests are given back (`decrement`). */
  readonly skipFailedRequests?: boolean;
  /** Whether successful requests are given back (`decrement`). */
  readonly skipSuccessfulRequests?: boolean;
}

/** A key's hits and when their count next drops, as express-rate-limit reads them. */
export interface ClientRateLimitInfo {
  /** Hits in the window, this one included (above the limit it reads `limit + 1`). */
  totalHits: number;
  /** When the count next drops: when a blocked or last-slot client is admitted again, otherwise when the oldest hit leaves. */
  resetTime: Date | undefined;
}

/** How many of a key's admitted hits this process remembers, to give back on `decrement`. */
interface Remembered {
  readonly actionIds: { readonly id: string; readonly at: number }[];
}

const DEFAULT_PREFIX = 'rl:';

/**
 * A store for express-rate-limit (tested with version 8) that counts an exact
 * rolling window: a hit stops counting exactly `windowMs` after it was made,
 * so there is no window boundary at which a client gets twice the limit.
 * With a Redis `client`, every process on that Redis shares each count; one
 * Redis round trip per request (two while the window still has room, to read
 * when the oldest hit leaves).
 *
 * `increment` records every hit, blocked ones too (as express-rate-limit's own
 * stores count), and `resetTime` is when the count next drops: for a client
 * at or over the limit, the moment a request would be admitted again; else
 * when its oldest hit leaves the window. `decrement` (express-rate-limit's
 * `skipFailedRequests` and `skipSuccessfulRequests`) gives back the newest hit
 * this process admitted for the key, which needs the decide script on Redis.
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
 *   store: new RollingWindowStore({ client: new Redis(process.env.REDIS_URL) }),
 * }));
 * ```
 */
export class RollingWindowStore {
  /** The prefix of every key (see {@link RollingWindowStoreOptions.prefix}). */
  readonly prefix: string;
  /** Keys are shared with other processes (on Redis) or private to this one (in memory). */
  readonly localKeys: boolean;
  readonly #client: RedisClient | undefined;
  #counter: RollingCounter | undefined;
  #initError: Error | undefined;
  #rememberAdmitted = false;
  #windowMs = 0;
  readonly #admitted = new Map<string, Remembered>();

  /**
   * @param options See {@link RollingWindowStoreOptions}.
   * @throws TypeError when an option has the wrong type or is unknown.
   */
  constructor(options: RollingWindowStoreOptions = {}) {
    if (typeof options !== 'object' || options === null) {
      throw new InvalidOptionTypeError(`Expected the options to be an object, got ${describeValue(options)}`, 'options', options);
    }
    for (const name of Object.keys(options)) {
      if (name !== 'client' && name !== 'prefix') {
        throw new InvalidOptionTypeError(`Unknown option \`${name}\`; expected client, prefix`, name, options[name as keyof typeof options]);
      }
    }
    checkClient(options.client);
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== 'string') throw new InvalidOptionTypeError(`Expected \`prefix\` to be a string, got ${describeValue(prefix)}`, 'prefix', prefix);
    this.prefix = prefix;
    this.#client = options.client;
    this.localKeys = options.client === undefined;
  }

  /**
   * Called by express-rate-limit with its options: takes `windowMs` and
   * `limit` from them. A `limit` that is a function is refused (the store
   * must know the limit to keep only what it needs); the error is logged by
   * express-rate-limit and every request then fails with it.
   */
  init(options: ExpressRateLimitOptions): void {
    const { windowMs, limit } = options;
    try {
      if (typeof windowMs !== 'number' || !(windowMs >= 1)) {
        throw new InvalidOptionTypeError(`RollingWindowStore needs \`windowMs\` to be a number of milliseconds >= 1, got ${describeValue(windowMs)}`, 'windowMs', windowMs);
      }
      if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0) {
        throw new InvalidOptionTypeError(
          `RollingWindowStore needs \`limit\` to be a whole number, got ${describeValue(limit)}: a rolling window keeps only the newest \`limit\` hits, so the limit must be known to the store`,
          'limit',
          limit,
        );
      }
      this.#windowMs = windowMs;
      this.#rememberAdmitted = options.skipFailedRequests === true || options.skipSuccessfulRequests === true;
      this.#counter = new RollingCounter({ client: this.#client, namespace: this.prefix, windowMs, limit });
    } catch (error) {
      this.#initError = error as Error;
      throw error;
    }
  }

  #counterOrThrow(): RollingCounter {
    if (this.#counter !== undefined) return this.#counter;
    throw this.#initError ?? new TypeError('RollingWindowStore was not initialized: pass it to rateLimit({ store })');
  }

  /** Records a hit for `key`; resolves with the hits in the window (this one included) and when that count next drops. */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    const counter = this.#counterOrThrow();
    const actionId = this.#rememberAdmitted ? randomUUID() : undefined;
    const count = await counter.hit(key, actionId);
    if (actionId !== undefined && count.admitted) this.#remember(key, actionId);
    return { totalHits: count.current, resetTime: new Date(Date.now() + count.resetMs) };
  }

  /** The hits of `key` in the window, and when their count next drops; writes nothing. */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const count = await this.#counterOrThrow().read(key);
    if (count.current === 0) return undefined;
    return { totalHits: count.current, resetTime: new Date(Date.now() + count.resetMs) };
  }

  /**
   * Gives back the newest hit this process admitted for `key` (what
   * `skipFailedRequests` and `skipSuccessfulRequests` ask for); does nothing
   * when there is none in the window.
   */
  async decrement(key: string): Promise<void> {
    const counter = this.#counterOrThrow();
    const remembered = this.#admitted.get(key);
    const last = remembered?.actionIds.pop();
    if (remembered !== undefined && remembered.actionIds.length === 0) this.#admitted.delete(key);
    if (last !== undefined) await counter.undo(key, last.id);
  }

  /** Forgets every hit of `key`. */
  async resetKey(key: string): Promise<void> {
    this.#admitted.delete(key);
    await this.#counterOrThrow().clear(key);
  }

  /** Remembers an admitted hit's action id, keeping only those still in the window, and sweeps a few stale keys. */
  #remember(key: string, id: string): void {
    const now = Date.now();
    const entry = this.#admitted.get(key) ?? { actionIds: [] };
    this.#admitted.delete(key); // re-inserted last: the map stays in order of last use
    entry.actionIds.push({ id, at: now });
    while (entry.actionIds.length > 0 && (entry.actionIds[0]?.at ?? now) <= now - this.#windowMs) entry.actionIds.shift();
    this.#admitted.set(key, entry);
    let swept = 0;
    for (const [staleKey, stale] of this.#admitted) {
      if (swept++ >= 2) break;
      const newest = stale.actionIds.at(-1);
      if (newest === undefined || newest.at <= now - this.#windowMs) this.#admitted.delete(staleKey);
    }
  }
}
