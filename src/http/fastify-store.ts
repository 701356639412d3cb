// `rolling-window-limiter/fastify`: a store for @fastify/rate-limit that
// counts an exact rolling window, shared by every process on one Redis.
// @fastify/rate-limit takes a store as a class, which it instantiates with its
// options, calls as `incr(key, callback, timeWindow, max)` (and `read` for
// `{ increment: false }`), and derives per route with `child(routeOptions)`.
// Neither Fastify nor the plugin is imported here.

import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { UnsupportedError } from '../errors/unsupported-error.js';
import { describeValue } from '../core/options.js';
import type { RedisClient } from '../redis/adapters/client-types.js';
import { ipKey, normalizeIpv6Subnet, type Ipv6Subnet } from './ip-key.js';
import { checkClient, RollingCounter, type RollingCount } from './rolling-count.js';

export { ipKey, DEFAULT_IPV6_SUBNET, type Ipv6Subnet } from './ip-key.js';

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
   * `<namespace><METHOD><url>-`, as @fastify/rate-limit's own stores do.
   * @default 'fastify-rate-limit-'
   */
  readonly namespace?: string;
  /**
   * How much of an IPv6 address is one client: a key that is an IPv6
   * address (what the plugin's default key generator makes, already cut to
   * its `ipv6Subnet`, a /64 by default) is reduced further to this prefix
   * length, 32 to 64, as {@link ipKey} does. One IPv6 client often holds a
   * whole /56. `false` leaves keys as they are.
   * @default 56
   */
  readonly ipv6Subnet?: Ipv6Subnet;
}

/** A count as @fastify/rate-limit reads it: hits in the window (this one included) and milliseconds until that count next drops. */
export interface FastifyRateLimitCount {
  /** Hits in the window, this one included (above `max` it reads `max + 1`). */
  readonly current: number;
  /** Milliseconds until the count next drops (see {@link RollingWindowFastifyStore.incr}). */
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
   * that count next drops: over the limit, until a request would be admitted
   * again (the plugin's `Retry-After`); else until the oldest hit leaves.
   */
  incr(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void;
  /** Reads the count of `key` without recording a hit (the plugin's `{ increment: false }`). */
  read(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void;
  /** The store of one route with its own `config.rateLimit` (the plugin passes the route's merged options): its own keys. */
  child(routeOptions: object): RollingWindowFastifyStore;
}

/** The class @fastify/rate-limit's `store` option takes. */
export type RollingWindowFastifyStoreClass = new (pluginOptions?: object) => RollingWindowFastifyStore;

const DEFAULT_NAMESPACE = 'fastify-rate-limit-';
/** Counters kept per store for distinct (timeWindow, max) pairs, when `max` or `timeWindow` is a function. */
const MAX_COUNTERS = 64;

/**
 * Makes a store for @fastify/rate-limit (tested with version 11 on Fastify 5) that counts an
 * exact rolling window: a hit stops counting exactly `timeWindow` after it was
 * made, so no window boundary lets a client through twice. With a Redis
 * `client`, every process on that Redis shares each count; one Redis round
 * trip per request (two while the window still has room, to read when the
 * oldest hit leaves). Every hit counts, blocked ones too, as in the plugin's
 * own stores, so `continueExceeding` is what it does anyway; a client that
 * keeps sending while blocked stays blocked. `exponentialBackoff` is refused.
 * Over the limit the count reads `max + 1` whatever the number of requests,
 * so the plugin's `ban` takes effect only as `ban: 0`.
 * A key that is an IPv6 address is reduced to its /56 (see
 * {@link FastifyRollingWindowStoreOptions.ipv6Subnet}).
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
 *   store: rollingWindowStore({ client: new Redis(process.env.REDIS_URL) }),
 * });
 * ```
 *
 * @throws TypeError when an option has the wrong type or is unknown.
 */
export function rollingWindowStore(options: FastifyRollingWindowStoreOptions = {}): RollingWindowFastifyStoreClass {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionTypeError(`Expected the options to be an object, got ${describeValue(options)}`, 'options', options);
  }
  for (const name of Object.keys(options)) {
    if (name !== 'client' && name !== 'namespace' && name !== 'ipv6Subnet') {
      throw new InvalidOptionTypeError(`Unknown option \`${name}\`; expected client, namespace, ipv6Subnet`, name, options[name as keyof typeof options]);
    }
  }
  checkClient(options.client);
  const { client } = options;
  const ipv6Subnet = normalizeIpv6Subnet(options.ipv6Subnet);
  const keyOf = (key: string): string => (ipv6Subnet === false ? key : ipKey(key, ipv6Subnet));
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  if (typeof namespace !== 'string') {
    throw new InvalidOptionTypeError(`Expected \`namespace\` to be a string, got ${describeValue(namespace)}`, 'namespace', namespace);
  }

  class Store implements RollingWindowFastifyStore {
    readonly #namespace: string;
    readonly #counters = new Map<string, RollingCounter>();

    constructor(pluginOptions: object = {}, keyNamespace: string = namespace) {
      if ((pluginOptions as FastifyRateLimitStoreParams).exponentialBackoff === true) {
        throw new UnsupportedError('`exponentialBackoff` stretches a fixed window\'s TTL; a rolling window has none to stretch. Leave it out with rollingWindowStore');
      }
      this.#namespace = keyNamespace;
    }

    #counter(timeWindow: number, max: number): RollingCounter {
      const id = `${timeWindow}/${max}`;
      let counter = this.#counters.get(id);
      if (counter === undefined) {
        if (this.#counters.size >= MAX_COUNTERS) this.#counters.delete(this.#counters.keys().next().value as string);
        counter = new RollingCounter({ client, namespace: this.#namespace, windowMs: timeWindow, limit: max });
        this.#counters.set(id, counter);
      }
      return counter;
    }

    incr(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void {
      answer(() => this.#counter(timeWindow, max).hit(keyOf(key)), callback);
    }

    read(key: string, callback: FastifyRateLimitCallback, timeWindow: number, max: number): void {
      answer(() => this.#counter(timeWindow, max).read(keyOf(key)), callback);
    }

    child(routeOptions: object): RollingWindowFastifyStore {
      const { method = '', url = '' } = (routeOptions as FastifyRateLimitStoreParams).routeInfo ?? {};
      return new Store(routeOptions, `${this.#namespace}${String(method)}${url}-`);
    }
  }
  return Store;
}

/** Runs `count` and hands its outcome to a Node-style callback, as the plugin expects. */
function answer(count: () => Promise<RollingCount>, callback: FastifyRateLimitCallback): void {
  let promise: Promise<RollingCount>;
  try {
    promise = count();
  } catch (error) {
    callback(error as Error);
    return;
  }
  promise.then(
    ({ current, resetMs }) => callback(null, { current, ttl: resetMs }),
    (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
  );
}
