// What the stores for express-rate-limit and @fastify/rate-limit have in
// common: those libraries count hits and compare the count with their limit
// themselves, so a store answers "how many hits are in the window now, this
// one included, and when does that change". Here that count is an exact
// rolling window, decided by a RollingRateLimiter (every hit recorded, as
// those libraries count blocked requests too), so many processes on one Redis
// share it.

import { microsecondsToWholeMillisecondsUp } from '../core/clock.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import type { LimiterId } from '../core/identity.js';
import { describeValue, normalizeOptions } from '../core/options.js';
import { limiterCore } from '../core/limiter-core.js';
import type { TieredCore, TierSpec } from '../core/tiered-core.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import type { RedisClient } from '../redis/adapters/client-types.js';

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
  readonly #core: TieredCore<RateLimitInfo>;
  readonly #limit: number;

  constructor(options: RollingCounterOptions) {
    // A limit of 0 blocks every hit in the caller's library; a window of one still counts them.
    this.#limit = Math.max(1, options.limit);
    this.#core = limiterCore(
      normalizeOptions({
        ...(options.client === undefined ? {} : { client: options.client }),
        namespace: options.namespace,
        interval: Math.max(1, Math.ceil(options.windowMs)),
        maxInInterval: this.#limit,
      }),
    );
  }

  /** Records a hit for `key`, with an action id when it may be given back later. */
  async hit(key: LimiterId, actionId?: string): Promise<RollingCount & { readonly admitted: boolean }> {
    const info = await this.#core.decide(key, 'attempt', actionId);
    if (info.blockedDueToCount) return { current: this.#limit + 1, resetMs: info.millisecondsUntilAllowed, admitted: false };
    const current = this.#limit - info.actionsRemaining;
    const resetMs = info.millisecondsUntilAllowed > 0 ? info.millisecondsUntilAllowed : await this.#untilOldestLeaves(key, current);
    return { current, resetMs, admitted: !info.blocked };
  }

  /** Reads the count of `key` without recording anything. */
  async read(key: LimiterId): Promise<RollingCount> {
    const info = await this.#core.decide(key, 'peek');
    if (info.blockedDueToCount) return { current: this.#limit, resetMs: info.millisecondsUntilAllowed };
    // The dry run counts the hit it would record; the window holds one fewer.
    const current = this.#limit - info.actionsRemaining - 1;
    return { current, resetMs: current === 0 ? 0 : await this.#untilOldestLeaves(key, current + 1) };
  }

  /** Gives back the hit recorded under `actionId`; true when there was one. */
  async undo(key: LimiterId, actionId: string): Promise<boolean> {
    return this.#core.undo(key, actionId);
  }

  /** Forgets every hit of `key`. */
  async clear(key: LimiterId): Promise<void> {
    await this.#core.clear(key);
  }

  /**
   * Milliseconds until the oldest of `count` hits leaves the window: a dry
   * run of the same key under a rule of `count + 1` actions, whose
   * `maxInInterval`-th newest (after the hit it would record) is the oldest hit.
   */
  async #untilOldestLeaves(key: LimiterId, count: number): Promise<number> {
    if (count < 1) return 0;
    const { now, maxthNewest } = await this.#core.peekNewest(key, count + 1);
    if (maxthNewest === undefined) return 0;
    const { intervalUs } = (this.#core.tiers[0] as TierSpec).rule;
    return Math.max(0, microsecondsToWholeMillisecondsUp(maxthNewest + intervalUs - now));
  }
}
