import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { MICROSECONDS_PER_MILLISECOND } from '../core/clock.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import type { TieredCore, TierSpec } from '../core/tiered-core.js';
import { assembleStack } from '../options/assemble.js';
import { normalizeStackOptions, type RateLimiterStackOptions } from '../options/limiter-options.js';
import { RollingRateLimiter } from './rolling-rate-limiter.js';
import { TieredLimiter } from './tiered-limiter.js';

export type { RateLimiterStackOptions } from '../options/limiter-options.js';

/** One tier's part of a stack's info: its own numbers, and which limiter it is. */
export interface TierRateLimitInfo extends RateLimitInfo {
  /** The tier's namespace, which tells the tiers apart. */
  readonly namespace: string;
  /** The tier's window length, in milliseconds. */
  readonly interval: number;
  /** The tier's maximum of actions per window; absent on a tier that counts cost. */
  readonly maxInInterval?: number;
  /** The tier's maximum of cost per window; present only on a tier that counts cost (with its `costRemaining`). */
  readonly maxCostInInterval?: number;
}

/**
 * The outcome of an attempt across stacked limiters. The top-level fields
 * are the stack's: `blocked` when any tier blocks, `blockedDueToCount` and
 * `blockedDueToMinDifference` when any tier blocks for that reason,
 * `actionsRemaining` the smallest of the tiers', `costRemaining` (with
 * tiers that count cost) the smallest of theirs, and
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
 * Redis), atomically; what each tier records, docs/semantics.md ("Stacks") says.
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
  /**
   * The most limiters one stack takes (100); more is a `RangeError`. A stack
   * states the limits of one action at a few scales (per second, minute,
   * hour, day, month; with cost tiers beside action tiers, about a dozen),
   * and every decision runs all its tiers in one atomic step, which on Redis
   * holds the server for every other client meanwhile: a stack's work per
   * decision must stay small. A decision of 100 tiers is one script call of
   * about 500 keys and arguments, which a batch still carries 16 to a call.
   */
  static readonly MAX_TIERS = 100;

  readonly #limiters: readonly RollingRateLimiter[];

  /**
   * @param limiters The tiers, at least one. They must keep their state in the
   *   same place (all in memory, or all on the same Redis client), use the
   *   same `clock`, and have distinct namespaces; at most {@link RateLimiterStack.MAX_TIERS} (100).
   * @param options See {@link RateLimiterStackOptions}. The stack waits for the store as long as the longest `timeout`
   *   of its limiters.
   * @throws TypeError when the limiters cannot be stacked, saying why, or an option is unknown or of the wrong type
   *   ({@link InvalidOptionTypeError}, naming it).
   * @throws RangeError ({@link InvalidOptionRangeError}) for more than {@link RateLimiterStack.MAX_TIERS} limiters.
   * @throws {@link UnsupportedError} when their store cannot decide before writing (redis-mock).
   */
  constructor(limiters: readonly RollingRateLimiter[], options: RateLimiterStackOptions<StackRateLimitInfo> = {}) {
    const cores = RateLimiterStack.#coresOf(limiters);
    super(assembleStack(cores, normalizeStackOptions(options), present));
    this.#limiters = [...limiters];
  }

  /** The stacked limiters, in order. */
  get limiters(): readonly RollingRateLimiter[] {
    return this.#limiters;
  }

  /** The cores of `limiters`, checked to be RollingRateLimiters. */
  static #coresOf(limiters: readonly RollingRateLimiter[]): TieredCore<RateLimitInfo>[] {
    if (!Array.isArray(limiters) || limiters.length === 0) {
      throw new InvalidOptionTypeError('Expected `limiters` to be a non-empty array of RollingRateLimiter instances', 'limiters', limiters);
    }
    if (limiters.length > RateLimiterStack.MAX_TIERS) {
      throw new InvalidOptionRangeError(
        `Expected \`limiters\` to hold at most ${RateLimiterStack.MAX_TIERS} limiters, got ${limiters.length}: ` +
          'a stack decides every tier in one atomic step, so its tiers are the few scales of one limit (per second, minute, day)',
        'limiters',
        limiters.length,
      );
    }
    // Array.from, not map(): map() skips the holes of a sparse array.
    return Array.from(limiters, (limiter, i) => {
      const core = limiter instanceof RollingRateLimiter ? TieredLimiter.coreOf(limiter) : undefined;
      if (core === undefined) throw new InvalidOptionTypeError(`Expected \`limiters[${i}]\` to be a RollingRateLimiter instance`, 'limiters', limiter);
      return core;
    });
  }
}

/** A stack's info: each tier's numbers with its rule, and the stack's own from them, in one pass (this runs on every decision). */
function present(infos: readonly RateLimitInfo[], tiers: readonly TierSpec[]): StackRateLimitInfo {
  const tierInfos: TierRateLimitInfo[] = [];
  let blocked = false;
  let blockedDueToCount = false;
  let blockedDueToMinDifference = false;
  let actionsRemaining = Infinity;
  let millisecondsUntilAllowed = 0;
  let costRemaining: number | undefined;
  for (let i = 0; i < infos.length; i += 1) {
    const info = infos[i] as RateLimitInfo;
    const { namespace, rule } = tiers[i] as TierSpec;
    const tierInfo = {
      blocked: info.blocked,
      blockedDueToCount: info.blockedDueToCount,
      blockedDueToMinDifference: info.blockedDueToMinDifference,
      actionsRemaining: info.actionsRemaining,
      millisecondsUntilAllowed: info.millisecondsUntilAllowed,
      namespace,
      interval: rule.intervalUs / MICROSECONDS_PER_MILLISECOND,
    };
    if (rule.countsCost) {
      const remaining = info.costRemaining ?? 0;
      tierInfos.push({ ...tierInfo, maxCostInInterval: rule.maxInInterval, costRemaining: remaining });
      costRemaining = Math.min(costRemaining ?? Infinity, remaining);
    } else {
      tierInfos.push({ ...tierInfo, maxInInterval: rule.maxInInterval });
    }
    blocked ||= info.blocked;
    blockedDueToCount ||= info.blockedDueToCount;
    blockedDueToMinDifference ||= info.blockedDueToMinDifference;
    actionsRemaining = Math.min(actionsRemaining, info.actionsRemaining);
    millisecondsUntilAllowed = Math.max(millisecondsUntilAllowed, info.millisecondsUntilAllowed);
  }
  const stackInfo = { blocked, blockedDueToCount, blockedDueToMinDifference, actionsRemaining, millisecondsUntilAllowed, tiers: tierInfos };
  return costRemaining === undefined ? stackInfo : { ...stackInfo, costRemaining };
}
