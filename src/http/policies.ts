// What the rate-limit headers describe: the tiers of a limiter or a stack as
// quota policies, and each tier's numbers for one decision (what is left,
// how long to wait), with the tier that binds.

import { describeValue, type Check } from '../core/check.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import type { RateLimiterStack, StackRateLimitInfo, TierRateLimitInfo } from '../limiters/rate-limiter-stack.js';
import type { RollingRateLimiter } from '../limiters/rolling-rate-limiter.js';
import { retryAfterSeconds } from './header-values.js';

/** What the middleware limits with: one limiter, or a stack of tiers decided together. */
export type HttpRateLimiter = RollingRateLimiter | RateLimiterStack;

/** The info a limiter's `limitWithInfo` resolves with: a {@link StackRateLimitInfo} for a stack. */
export type InfoOf<Limiter extends HttpRateLimiter> = Limiter extends RateLimiterStack ? StackRateLimitInfo : RateLimitInfo;

/** One tier as the headers describe it: a quota policy of the draft. */
export interface RateLimitPolicy {
  /** The tier's position in the stack (0 for a single limiter). */
  readonly index: number;
  /** The limiter's namespace (its key prefix), the default policy name. */
  readonly namespace: string;
  /** The window, in milliseconds (advertised as `w`, in seconds rounded up). */
  readonly interval: number;
  /** The most actions per window, on a tier that counts actions; absent on a tier that counts cost. */
  readonly maxInInterval?: number;
  /** The most cost per window, on a tier that counts cost (`maxCostInInterval`); absent on a tier that counts actions. */
  readonly maxCostInInterval?: number;
  /** What the tier allows per window, advertised as `q`: its `maxInInterval`, or its `maxCostInInterval` on a tier that counts cost. */
  readonly quota: number;
  /** The least gap between actions, in milliseconds (0: none). Not advertised: it shows as `r=0;t=...` while it holds. */
  readonly minDifference: number;
}

/** The numbers the headers report for one tier. */
export interface TierStatus {
  /** Which tier (its position; 0 for a single limiter). */
  readonly index: number;
  /** The tier's quota policy. */
  readonly policy: RateLimitPolicy;
  /**
   * Available quota (the draft's `r`), in the tier's units: on a tier that counts actions its `actionsRemaining`, but
   * 0 while the next attempt has to wait; on a tier that counts cost its `costRemaining` (what a request of at most
   * that cost may still use now, even while one of this request's cost has to wait), but 0 while it waits on a tier
   * with a `minDifference` (the gap may be what holds).
   */
  readonly remaining: number;
  /**
   * How many more requests like this one the tier admits now: its `actionsRemaining` (on a tier that counts cost,
   * of this request's cost), 0 while the next attempt has to wait. The binding tier is the one with the fewest.
   */
  readonly actionsRemaining: number;
  /** Seconds until an attempt would be allowed by this tier, rounded up (the draft's `t`); 0 when it would be allowed now. */
  readonly resetSeconds: number;
}

/** True when `limiter` is a stack (it has `limiters`), judged by shape so that another copy of the library works too. */
function isStack(limiter: HttpRateLimiter): limiter is RateLimiterStack {
  return Array.isArray((limiter as Partial<RateLimiterStack>).limiters);
}

/**
 * The check of a `limiter` option: a RollingRateLimiter or a RateLimiterStack,
 * judged by shape (`limitWithInfo`, and each tier's namespace, interval and
 * limit), so that another copy of the library passes too.
 */
export const httpLimiter: Check<HttpRateLimiter> = (value, name) => {
  const limiter = value as Partial<RollingRateLimiter> | null;
  if (typeof limiter !== 'object' || limiter === null || typeof limiter.limitWithInfo !== 'function') {
    throw new InvalidOptionTypeError(`Expected \`${name}\` to be a RollingRateLimiter or a RateLimiterStack, got ${describeValue(value)}`, name, value);
  }
  const tiers: readonly Partial<RollingRateLimiter>[] = isStack(limiter as HttpRateLimiter) ? (limiter as RateLimiterStack).limiters : [limiter];
  tiers.forEach(({ namespace, interval, maxInInterval, maxCostInInterval }, index) => {
    if (typeof namespace !== 'string' || typeof interval !== 'number' || typeof (maxCostInInterval ?? maxInInterval) !== 'number') {
      throw new InvalidOptionTypeError(
        `Expected \`${name}\` to be a RollingRateLimiter or a RateLimiterStack (tier ${index} has no namespace, interval and maxInInterval or maxCostInInterval)`,
        name,
        value,
      );
    }
  });
  return limiter as HttpRateLimiter;
};

/**
 * The quota policies of a limiter or stack, one per tier, in order.
 *
 * @throws TypeError when `limiter` is neither a RollingRateLimiter nor a RateLimiterStack.
 */
export function policiesOf(limiter: HttpRateLimiter): RateLimitPolicy[] {
  const checked = httpLimiter(limiter, 'limiter');
  const tiers: readonly RollingRateLimiter[] = isStack(checked) ? checked.limiters : [checked];
  return tiers.map(({ namespace, interval, maxInInterval, maxCostInInterval, minDifference }, index) => {
    const limit =
      typeof maxCostInInterval === 'number'
        ? { maxCostInInterval, quota: maxCostInInterval }
        : { maxInInterval: maxInInterval as number, quota: maxInInterval as number };
    return { index, namespace, interval, ...limit, minDifference: typeof minDifference === 'number' ? minDifference : 0 };
  });
}

/** True when some tier counts cost (`maxCostInInterval`): only then does a request say its cost, or settle it. */
export function countsCost(policies: readonly RateLimitPolicy[]): boolean {
  return policies.some((policy) => policy.maxCostInInterval !== undefined);
}

/** The tiers' own infos: `tiers` of a stack's info, or the info itself for a single limiter. */
function tierInfos(info: RateLimitInfo): readonly RateLimitInfo[] {
  const tiers: unknown = (info as Partial<StackRateLimitInfo>).tiers;
  return Array.isArray(tiers) && tiers.length > 0 ? (tiers as readonly RateLimitInfo[]) : [info];
}

/**
 * Each tier's numbers as the headers report them, and the binding tier: the
 * one with the longest wait (when the request is blocked, that is the tier
 * whose wait `Retry-After` reports), or when no tier makes the next attempt
 * wait, the one that admits the fewest more requests like this one (its
 * `actionsRemaining`, which on a tier that counts cost is of this request's
 * cost, so that tiers of actions and of cost compare); ties go to the tier
 * stacked first.
 */
export function tierStatuses(
  policies: readonly RateLimitPolicy[],
  info: RateLimitInfo,
): {
  /** Each tier's numbers, in stack order. */
  tiers: TierStatus[];
  /** The tier the `RateLimit` and `X-RateLimit-*` headers report. */
  binding: TierStatus;
} {
  const tiers = tierInfos(info).map((tier, index): TierStatus => {
    const resetSeconds = retryAfterSeconds(tier.millisecondsUntilAllowed);
    const policy = policies[index] ?? fallbackPolicy(index, tier);
    const actionsRemaining = resetSeconds > 0 ? 0 : Math.max(0, tier.actionsRemaining);
    const remaining =
      policy.maxCostInInterval === undefined || (resetSeconds > 0 && policy.minDifference > 0) ? actionsRemaining : Math.max(0, tier.costRemaining ?? 0);
    return { index, policy, remaining, actionsRemaining, resetSeconds };
  });
  let binding = tiers[0] as TierStatus;
  for (const tier of tiers) {
    if (tier.resetSeconds > binding.resetSeconds || (tier.resetSeconds === binding.resetSeconds && tier.actionsRemaining < binding.actionsRemaining)) {
      binding = tier;
    }
  }
  return { tiers, binding };
}

/** A tier the limiter did not announce (a fallback stack with more tiers): described by its own info. */
function fallbackPolicy(index: number, tier: RateLimitInfo): RateLimitPolicy {
  const described = tier as Partial<TierRateLimitInfo>;
  const number = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);
  const maxCostInInterval = number(described.maxCostInInterval);
  const maxInInterval = number(described.maxInInterval) ?? 0;
  return {
    index,
    namespace: typeof described.namespace === 'string' ? described.namespace : `tier-${index}`,
    interval: number(described.interval) ?? 0,
    ...(maxCostInInterval === undefined ? { maxInInterval, quota: maxInInterval } : { maxCostInInterval, quota: maxCostInInterval }),
    minDifference: 0,
  };
}
