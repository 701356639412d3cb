import type { MicrosecondClock } from '../core/clock.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import { assembleLimiter } from '../options/assemble.js';
import { normalizeLimiterOptions, type NormalizedOptions, type RollingRateLimiterOptions } from '../options/limiter-options.js';
import { claimNamespace } from '../options/namespace-registry.js';
import { giveWarnings } from '../options/option-warnings.js';
import type { TierSpec } from '../core/tiered-core.js';
import { TieredLimiter } from './tiered-limiter.js';

/**
 * An exact rolling-window rate limiter with a minimum gap between actions:
 * at most `maxInInterval` actions in any window of `interval` ms, and at
 * least `minDifference` ms between consecutive actions, per id. With a Redis
 * `client`, every process that uses the same namespace shares the limit;
 * without one, the limit lives in this process's memory. Limiters on one
 * namespace and client share their keys, so they must share the rule too:
 * another rule on a namespace this process already uses on that client is
 * refused.
 *
 * @example
 * ```ts
 * import { RollingRateLimiter } from 'rolling-window-limiter';
 *
 * const limiter = new RollingRateLimiter({
 *   client: redis,            // an ioredis client; omit it for the in-memory store
 *   namespace: 'push',
 *   interval: 60_000,         // at most 10 per minute...
 *   maxInInterval: 10,
 *   minDifference: 3_000,     // ...and at least 3 s apart
 * });
 *
 * if (await limiter.limit(userId)) return; // blocked: don't send
 * await sendPushNotification(userId);
 * ```
 */
export class RollingRateLimiter extends TieredLimiter<RateLimitInfo> {
  readonly #options: NormalizedOptions;

  /**
   * @param options See {@link RollingRateLimiterOptions}.
   * @throws TypeError when an option has the wrong type, naming it and the value received; or when a limiter on
   *   the same `client` already uses `namespace` with another rule (`interval`, `maxInInterval`, `minDifference`
   *   or `countBlocked`), naming the namespace and both rules; or for `defaultCost` without `maxCostInInterval`.
   * @throws RangeError when an option is out of range, naming it and the value received.
   * @throws {@link UnsupportedError} when the client or the mode is not supported.
   */
  constructor(options: RollingRateLimiterOptions) {
    const normalized = normalizeLimiterOptions(options);
    const core = assembleLimiter(normalized);
    // Claimed once the limiter can be made: one refused for its client or mode claims nothing.
    claimNamespace(normalized.client, normalized.namespace, normalized);
    super(core);
    this.#options = normalized;
    giveWarnings(normalized.warnings, (core.tiers[0] as TierSpec).store.name);
  }

  /** The window length, in milliseconds. */
  get interval(): number {
    return this.#options.interval;
  }

  /** The most actions allowed in one window; undefined on a limiter that counts cost (see {@link maxCostInInterval}). */
  get maxInInterval(): number | undefined {
    return this.#options.countsCost ? undefined : this.#options.maxInInterval;
  }

  /** The most cost allowed in one window; undefined on a limiter that counts actions (see {@link maxInInterval}). */
  get maxCostInInterval(): number | undefined {
    return this.#options.countsCost ? this.#options.maxInInterval : undefined;
  }

  /** The least time between consecutive actions, in milliseconds (0: no gap rule). */
  get minDifference(): number {
    return this.#options.minDifference;
  }

  /** The prefix of this limiter's keys. */
  get namespace(): string {
    return this.#options.namespace;
  }

  /** Whether blocked attempts are recorded too. */
  get countBlocked(): boolean {
    return this.#options.countBlocked;
  }

  /** Where time comes from: `'local'`, `'redis'`, or the function that was given. */
  get clock(): 'local' | 'redis' | MicrosecondClock {
    return this.#options.clock;
  }
}
