import { InvalidOptionTypeError } from './errors/invalid-option-error.js';
import { UnsupportedError } from './errors/unsupported-error.js';
import type { LimiterId } from './core/ids.js';
import { internalsOf, type LimiterInternals } from './limiter-internals.js';
import type { RateLimitInfo, TierRateLimitInfo } from './core/rate-limit-info.js';
import type { RollingRateLimiter } from './rolling-rate-limiter.js';
import { describeValue, normalizeStoreErrorPolicy } from './core/options.js';
import type { StoreErrorPolicy } from './resilience/store-error-policy.js';
import { waitUntilAllowed, wrapFunction, type WaitOptions, type WrapOptions } from './core/waiting.js';
import { normalizeActionId, type AttemptOptions } from './core/action-ids.js';
import { TieredCore } from './core/tiered-core.js';
import { normalizeCircuitBreakerOption, type CircuitBreakerOptions } from './resilience/circuit-breaker.js';

/** Options of {@link RateLimiterStack}. */
export interface RateLimiterStackOptions {
  /**
   * What to do when the store fails or does not answer in time; see
   * {@link StoreErrorPolicy}. A fallback is a stack (or anything with
   * `limitWithInfo` and `wouldLimitWithInfo` returning a {@link StackRateLimitInfo}).
   * @default 'throw'
   */
  readonly onStoreError?: StoreErrorPolicy<StackRateLimitInfo>;
  /**
   * The stack's own circuit breaker around its store calls; see
   * the `circuitBreaker` option of {@link RollingRateLimiter}.
   * @default { failureThreshold: 5, cooldownMs: 1000 }
   */
  readonly circuitBreaker?: CircuitBreakerOptions | false;
}

export type { TierRateLimitInfo } from './core/rate-limit-info.js';

/**
 * The outcome of an attempt across stacked limiters. The top-level fields
 * are the stack's: `blocked` when any tier blocks, `blockedDueToCount` and
 * `blockedDueToMinDifference` when any tier blocks for that reason,
 * `actionsRemaining` the smallest of the tiers', and
 * `millisecondsUntilAllowed` the wait until every tier allows (the largest
 * of the tiers' waits).
 */
export interface StackRateLimitInfo extends RateLimitInfo {
  /** Each tier's own info, in the order the limiters were stacked; `tiers[i].blocked` says which tiers blocked. */
  readonly tiers: readonly TierRateLimitInfo[];
}

/**
 * Several limiters guarding the same action, decided together: the action is
 * allowed only if every tier allows it, in one round trip (one script call on
 * Redis), atomically. An attempt is recorded in a tier when that tier counts
 * blocked attempts (`countBlocked: true`) or when the action was allowed
 * overall, so a tier that does not count blocked attempts is untouched when
 * another tier blocks.
 *
 * The limiters stay usable on their own; the stack shares their state.
 *
 * @example
 * ```ts
 * const perMinute = new RollingRateLimiter({ client: redis, namespace: 'push:minute', interval: 60_000, maxInInterval: 10 });
 * const spacing = new RollingRateLimiter({ client: redis, namespace: 'push:3s', interval: 3_000, maxInInterval: 1 });
 * const push = new RateLimiterStack([perMinute, spacing]);
 *
 * if (await push.limit(teacherId)) return; // blocked by either tier
 * ```
 */
export class RateLimiterStack {
  readonly #limiters: readonly RollingRateLimiter[];
  readonly #core: TieredCore<StackRateLimitInfo>;

  /**
   * @param limiters The tiers, at least one. They must keep their state in the
   *   same place (all in memory, or all on the same Redis client), use the
   *   same `clock`, and have distinct namespaces.
   * @param options `onStoreError`: what to do when the store fails or does not
   *   answer in time (see {@link StoreErrorPolicy}; a fallback is a stack, for
   *   example of in-memory limiters with the same rules). Default `'throw'`.
   *   The stack waits for the store as long as the longest `timeout` of its
   *   limiters.
   * @throws TypeError when the limiters cannot be stacked, saying why.
   * @throws {@link UnsupportedError} when their store cannot decide before writing (redis-mock).
   */
  constructor(limiters: readonly RollingRateLimiter[], options: RateLimiterStackOptions = {}) {
    if (!isNonEmptyArray(limiters)) {
      throw new InvalidOptionTypeError('Expected `limiters` to be a non-empty array of RollingRateLimiter instances', 'limiters', limiters);
    }
    // An index loop, not map(): map() skips the holes of a sparse array.
    const tiers: LimiterInternals[] = [];
    for (let i = 0; i < limiters.length; i += 1) {
      const internals = internalsOf(limiters[i]);
      if (internals === undefined) {
        throw new InvalidOptionTypeError(`Expected \`limiters[${i}]\` to be a RollingRateLimiter instance`, 'limiters', limiters[i]);
      }
      tiers.push(internals);
    }
    checkStackable(limiters, tiers);
    this.#limiters = [...limiters];
    if (typeof options !== 'object' || options === null) {
      throw new InvalidOptionTypeError(`Expected the stack's options to be an object, got ${describeValue(options)}`, 'options', options);
    }
    this.#core = new TieredCore(
      tiers.map((internals) => internals.tier),
      {
        readClock: (tiers[0] as LimiterInternals).readClock,
        timeoutMs: Math.max(...tiers.map((tier) => tier.timeout)),
        onStoreError: normalizeStoreErrorPolicy(options.onStoreError),
        present: (infos) => ({ ...combine(infos), tiers: infos }),
        circuitBreaker: normalizeCircuitBreakerOption(options.circuitBreaker),
      },
    );
  }

  /** The stacked limiters, in order. */
  get limiters(): readonly RollingRateLimiter[] {
    return this.#limiters;
  }

  /**
   * Attempts an action for `id` under every tier.
   *
   * @returns `true` when any tier blocks the action, `false` when every tier allows it.
   */
  async limit(id: LimiterId, options?: AttemptOptions): Promise<boolean> {
    return (await this.limitWithInfo(id, options)).blocked;
  }

  /** Like {@link limit}, with the stack's numbers and each tier's. */
  async limitWithInfo(id: LimiterId, options?: AttemptOptions): Promise<StackRateLimitInfo> {
    return this.#core.decide(id, 'attempt', normalizeActionId(options?.actionId));
  }

  /** A dry run of {@link limit}: writes nothing. */
  async wouldLimit(id: LimiterId): Promise<boolean> {
    return (await this.wouldLimitWithInfo(id)).blocked;
  }

  /** A dry run of {@link limitWithInfo}: exactly what it would return now, and writes nothing. */
  async wouldLimitWithInfo(id: LimiterId): Promise<StackRateLimitInfo> {
    return this.#core.decide(id, 'peek');
  }

  /**
   * Resolves once an action for `id` has been admitted by every tier,
   * sleeping the reported wait, with jitter, in between; see
   * {@link RollingRateLimiter.waitUntilAllowed}.
   */
  async waitUntilAllowed(id: LimiterId, options: WaitOptions = {}): Promise<StackRateLimitInfo> {
    return waitUntilAllowed(this, id, this.#anyTierCountsBlocked(), options);
  }

  /** Returns a function that calls `fn` only when every tier admits the call; see {@link RollingRateLimiter.wrap}. */
  wrap<Args extends unknown[], Result>(fn: (...args: Args) => Result, options: WrapOptions<Args>): (...args: Args) => Promise<Awaited<Result>> {
    return wrapFunction(this, this.#anyTierCountsBlocked(), fn, options);
  }

  #anyTierCountsBlocked(): boolean {
    return this.#limiters.some((limiter) => limiter.countBlocked);
  }

  /** Forgets everything every tier recorded for `id`. */
  async clear(id: LimiterId): Promise<void> {
    await this.#core.clear(id);
  }

  /**
   * Gives back an admitted action in every tier; see {@link RollingRateLimiter.undo}.
   *
   * @returns `true` when an admitted action was removed from at least one tier.
   */
  async undo(id: LimiterId, actionId: string): Promise<boolean> {
    const action = normalizeActionId(actionId);
    if (action === undefined) throw new TypeError('Expected `actionId` to be a non-empty string, got undefined');
    return this.#core.undo(id, action);
  }
}

/** The stack's own numbers from its tiers'. */
function combine(infos: readonly RateLimitInfo[]): RateLimitInfo {
  return {
    blocked: infos.some((info) => info.blocked),
    blockedDueToCount: infos.some((info) => info.blockedDueToCount),
    blockedDueToMinDifference: infos.some((info) => info.blockedDueToMinDifference),
    actionsRemaining: Math.min(...infos.map((info) => info.actionsRemaining)),
    millisecondsUntilAllowed: Math.max(...infos.map((info) => info.millisecondsUntilAllowed)),
  };
}

function isNonEmptyArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value) && value.length > 0;
}

/** Throws a TypeError when the tiers cannot be decided together in one atomic step. */
function checkStackable(limiters: readonly RollingRateLimiter[], tiers: readonly LimiterInternals[]): void {
  const first = tiers[0] as LimiterInternals;
  tiers.forEach((tier, i) => {
    const limiter = limiters[i] as RollingRateLimiter;
    // Two tiers clash when their keys are one: the same namespace in one keyspace (in-memory limiters each have their own).
    const clash = limiters.findIndex((other, j) => other.namespace === limiter.namespace && (tiers[j] as LimiterInternals).tier.store.sharesKeysWith(tier.tier.store));
    if (clash < i) {
      throw new InvalidOptionTypeError(
        `Cannot stack two limiters with the namespace \`${limiter.namespace}\` (limiters[${i}]): give each tier its own namespace`,
        'limiters',
        limiter,
      );
    }
    if (!first.tier.store.canDecideWith(tier.tier.store)) {
      throw new InvalidOptionTypeError(
        `Cannot stack limiters[${i}] with limiters[0]: stacked limiters must keep their state in the same place ` +
          '(all in memory, or all on the same Redis client) so that one atomic step decides every tier',
        'limiters',
        limiter,
      );
    }
    if (!tier.tier.store.canDecideBeforeWriting) {
      throw new UnsupportedError(
        `Cannot stack limiters[${i}]: a stack must decide every tier before it writes, which on Redis takes a Lua script, and ${tier.tier.store.name} cannot run scripts`,
      );
    }
    if (tier.tier.useScript === false) {
      throw new UnsupportedError(`Cannot stack limiters[${i}]: a stack decides every tier with the Lua script, and it has \`useScript: false\``);
    }
    if (tier.clockOption !== first.clockOption) {
      throw new InvalidOptionTypeError(`Cannot stack limiters[${i}] with limiters[0]: stacked limiters must use the same \`clock\``, 'limiters', limiter);
    }
  });
}
