// What the stores for express-rate-limit and @fastify/rate-limit have in
// common: those libraries count hits and compare the count with their limit
// themselves, so a store answers "how many hits are in the window now, this
// one included, and when does that change". Here that count is an exact
// rolling window, decided by a RollingRateLimiter (every hit recorded, as
// those libraries count blocked requests too), so many processes on one Redis
// share it.

import { microsecondsToWholeMillisecondsUp } from '../core/clock.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import type { LimiterId } from '../core/ids.js';
import { internalsOf } from '../limiter-internals.js';
import { describeValue } from '../core/options.js';
import type { RedisClient } from '../redis/adapters/client-types.js';
import { RollingRateLimiter } from '../rolling-rate-limiter.js';
import { callStore } from '../resilience/store-call.js';

/** The count of one key's window, as the HTTP limiters read it. */
export interface RollingCount {
  /** Hits in the window, this one included; above the limit it reads `limit + 1` (nothing past that matters). */
  readonly current: number;
  /**
   * Milliseconds until the count next drops: when the window is full or over,
   * until a hit would be admitted again; otherwise until the oldest hit leaves
   * the window (0 when the window is empty).
   */
  readonly resetMs: number;
}

/** The options every rolling counter shares. */
export interface RollingCounterOptions {
  readonly client: RedisClient | undefined;
  readonly namespace: string;
  readonly windowMs: number;
  readonly limit: number;
}

/** Checks the `client` of a store's options: a Redis client object, or undefined for memory. */
export function checkClient(client: unknown): void {
  if (client !== undefined && (typeof client !== 'object' || client === null)) {
    throw new InvalidOptionTypeError(`Expected \`client\` to be a Redis client object, got ${describeValue(client)}`, 'client', client);
  }
}

/** An exact rolling-window hit counter for one (window, limit) pair, in one namespace. */
export class RollingCounter {
  readonly #limiter: RollingRateLimiter;
  readonly #limit: number;

  constructor(options: RollingCounterOptions) {
    // A limit of 0 blocks every hit in the caller's library; a window of one still counts them.
    this.#limit = Math.max(1, options.limit);
    this.#limiter = new RollingRateLimiter({
      ...(options.client === undefined ? {} : { client: options.client }),
      namespace: options.namespace,
      interval: Math.max(1, Math.ceil(options.windowMs)),
      maxInInterval: this.#limit,
    });
  }

  /** The limiter that decides, for undo and clear. */
  get limiter(): RollingRateLimiter {
    return this.#limiter;
  }

  /** Records a hit for `key`, with an action id when it may be given back later. */
  async hit(key: LimiterId, actionId?: string): Promise<RollingCount & { readonly admitted: boolean }> {
    const info = await this.#limiter.limitWithInfo(key, actionId === undefined ? undefined : { actionId });
    if (info.blockedDueToCount) return { current: this.#limit + 1, resetMs: info.millisecondsUntilAllowed, admitted: false };
    const current = this.#limit - info.actionsRemaining;
    const resetMs = info.millisecondsUntilAllowed > 0 ? info.millisecondsUntilAllowed : await this.#untilOldestLeaves(key, current);
    return { current, resetMs, admitted: !info.blocked };
  }

  /** Reads the count of `key` without recording anything. */
  async read(key: LimiterId): Promise<RollingCount> {
    const info = await this.#limiter.wouldLimitWithInfo(key);
    if (info.blockedDueToCount) return { current: this.#limit, resetMs: info.millisecondsUntilAllowed };
    // The dry run counts the hit it would record; the window holds one fewer.
    const current = this.#limit - info.actionsRemaining - 1;
    return { current, resetMs: current === 0 ? 0 : await this.#untilOldestLeaves(key, current + 1) };
  }

  /**
   * Milliseconds until the oldest of `count` hits leaves the window: a dry
   * run of the same key under a rule of `count + 1` actions, whose wait is
   * exactly that (its `maxInInterval`-th newest is the oldest hit).
   */
  async #untilOldestLeaves(key: LimiterId, count: number): Promise<number> {
    const internals = internalsOf(this.#limiter);
    if (internals === undefined || count < 1) return 0;
    const { keys, rule, store } = internals.tier;
    const tier = { key: keys.keyFor(String(key)), rule: { ...rule, maxInInterval: count + 1 }, store };
    const now = internals.readClock?.();
    const decision = await callStore(() => store.peek([tier], now), internals.timeout, 'Reading the window');
    const oldest = decision.tiers[0]?.after.maxthNewest;
    if (oldest === undefined) return 0;
    return Math.max(0, microsecondsToWholeMillisecondsUp(oldest + rule.intervalUs - decision.now));
  }
}
