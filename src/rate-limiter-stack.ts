import { InvalidOptionTypeError } from './errors/invalid-option-error.js';
import { UnsupportedError } from './errors/unsupported-error.js';
import type { RateLimitInfo, TierRateLimitInfo } from './core/rate-limit-info.js';
import { RollingRateLimiter } from './rolling-rate-limiter.js';
import { normalizeBatchOption, normalizeStoreErrorPolicy, rejectUnknownOptions } from './core/options.js';
import { describeValue } from './core/describe-value.js';
import { checkBatch } from './core/limiter-core.js';
import type { StoreErrorPolicy } from './resilience/store-error-policy.js';
import { TieredCore, type TierSpec } from './core/tiered-core.js';
import { TieredLimiter } from './core/tiered-limiter.js';
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
  /**
   * Sends the stack's decisions to Redis in batches, as the `batch` option of
   * {@link RollingRateLimiter} describes: the stack's own setting, whatever
   * its limiters'. Each decision still covers every tier atomically.
   * @default false
   */
  readonly batch?: boolean;
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
export class RateLimiterStack extends TieredLimiter<StackRateLimitInfo> {
  readonly #limiters: readonly RollingRateLimiter[];

  /**
   * @param limiters The tiers, at least one. They must keep their state in the
   *   same place (all in memory, or all on the same Redis client), use the
   *   same `clock`, and have distinct namespaces.
   * @param options `onStoreError`: what to do when the store fails or does not
   *   answer in time (see {@link StoreErrorPolicy}; a fallback is a stack, for
   *   example of in-memory limiters with the same rules). Default `'throw'`.
   *   The stack waits for the store as long as the longest `timeout` of its
   *   limiters.
   * @throws TypeError when the limiters cannot be stacked, saying why, or an option is unknown or of the wrong type
   *   ({@link InvalidOptionTypeError}, naming it).
   * @throws {@link UnsupportedError} when their store cannot decide before writing (redis-mock).
   */
  constructor(limiters: readonly RollingRateLimiter[], options: RateLimiterStackOptions = {}) {
    const cores = RateLimiterStack.#coresOf(limiters);
    if (typeof options !== 'object' || options === null) {
      throw new InvalidOptionTypeError(`Expected the stack's options to be an object, got ${describeValue(options)}`, 'options', options);
    }
    rejectUnknownOptions(options, STACK_OPTIONS);
    const first = cores[0] as LimiterCore;
    const batch = normalizeBatchOption(options.batch);
    const firstTier = first.tiers[0] as TierSpec;
    checkBatch(batch, firstTier.store, undefined);
    super(
      new TieredCore(
        cores.map((core) => core.tiers[0] as TierSpec),
        {
          clock: first.options.clock,
          readClock: first.options.readClock,
          timeoutMs: Math.max(...cores.map((core) => core.options.timeoutMs)),
          batch,
          onStoreError: normalizeStoreErrorPolicy(options.onStoreError),
          present: (infos, tiers) => {
            const tierInfos = infos.map((info, i): TierRateLimitInfo => {
              const { namespace, interval, maxInInterval } = tiers[i] as TierSpec;
              return { ...info, namespace, interval, maxInInterval };
            });
            return { ...combine(tierInfos), tiers: tierInfos };
          },
          circuitBreaker: normalizeCircuitBreakerOption(options.circuitBreaker),
        },
      ),
    );
    this.#limiters = [...limiters];
  }

  /** The stacked limiters, in order. */
  get limiters(): readonly RollingRateLimiter[] {
    return this.#limiters;
  }

  /** The cores of `limiters`, checked to be RollingRateLimiters that can be decided together. */
  static #coresOf(limiters: readonly RollingRateLimiter[]): LimiterCore[] {
    if (!Array.isArray(limiters) || limiters.length === 0) {
      throw new InvalidOptionTypeError('Expected `limiters` to be a non-empty array of RollingRateLimiter instances', 'limiters', limiters);
    }
    // An index loop, not map(): map() skips the holes of a sparse array.
    const cores: LimiterCore[] = [];
    for (let i = 0; i < limiters.length; i += 1) {
      const core = limiters[i] instanceof RollingRateLimiter ? TieredLimiter.coreOf(limiters[i]) : undefined;
      if (core === undefined) {
        throw new InvalidOptionTypeError(`Expected \`limiters[${i}]\` to be a RollingRateLimiter instance`, 'limiters', limiters[i]);
      }
      cores.push(core);
    }
    checkStackable(limiters, cores);
    return cores;
  }
}

type LimiterCore = TieredCore<RateLimitInfo>;

/** The options a stack takes (the keys of {@link RateLimiterStackOptions}). */
const STACK_OPTIONS: ReadonlySet<string> = new Set(['onStoreError', 'circuitBreaker', 'batch']);

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

/** Throws a TypeError when the tiers cannot be decided together in one atomic step. */
function checkStackable(limiters: readonly RollingRateLimiter[], cores: readonly LimiterCore[]): void {
  const tiers = cores.map((core) => core.tiers[0] as TierSpec);
  const first = tiers[0] as TierSpec;
  tiers.forEach((tier, i) => {
    const limiter = limiters[i] as RollingRateLimiter;
    // Two tiers clash when their keys are one: the same namespace in one keyspace (in-memory limiters each have their own).
    const clash = tiers.findIndex((other) => other.namespace === tier.namespace && other.store.sharesKeysWith(tier.store));
    if (clash < i) {
      throw new InvalidOptionTypeError(
        `Cannot stack two limiters with the namespace \`${tier.namespace}\` (limiters[${i}]): give each tier its own namespace`,
        'limiters',
        limiter,
      );
    }
    if (!first.store.canDecideWith(tier.store)) {
      throw new InvalidOptionTypeError(
        `Cannot stack limiters[${i}] with limiters[0]: stacked limiters must keep their state in the same place ` +
          '(all in memory, or all on the same Redis client) so that one atomic step decides every tier',
        'limiters',
        limiter,
      );
    }
    if (!tier.store.canDecideBeforeWriting) {
      throw new UnsupportedError(
        `Cannot stack limiters[${i}]: a stack must decide every tier before it writes, which on Redis takes a Lua script, and ${tier.store.name} cannot run scripts`,
      );
    }
    if (tier.useScript === false) {
      throw new UnsupportedError(`Cannot stack limiters[${i}]: a stack decides every tier with the Lua script, and it has \`useScript: false\``);
    }
    if ((cores[i] as LimiterCore).options.clock !== (cores[0] as LimiterCore).options.clock) {
      throw new InvalidOptionTypeError(`Cannot stack limiters[${i}] with limiters[0]: stacked limiters must use the same \`clock\``, 'limiters', limiter);
    }
  });
}
