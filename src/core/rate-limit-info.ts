import type { RateLimiterError } from '../errors/rate-limiter-error.js';

/** Why a decision was made by the `onStoreError` policy instead of the store. */
export interface StoreFailure {
  /** Which policy decided: `'allow'` (fail open), `'block'` (fail closed) or `'fallback'` (the fallback limiter). */
  readonly policy: 'allow' | 'block' | 'fallback';
  /** The store's failure: a {@link StoreError} or a {@link TimeoutError}. */
  readonly error: RateLimiterError;
}

/**
 * The outcome of one attempt (or of a dry run), with the numbers a caller
 * needs to tell the user when to try again.
 */
export interface RateLimitInfo {
  /** True when the action must not happen: blocked by the count, by the gap, or by both. */
  readonly blocked: boolean;
  /** True when `maxInInterval` actions were already recorded in the rolling window. */
  readonly blockedDueToCount: boolean;
  /** True when the previous recorded action was less than `minDifference` ms ago. */
  readonly blockedDueToMinDifference: boolean;
  /**
   * How many more actions fit in the current window after this attempt (0 when full); on a limiter that counts cost,
   * how many more attempts of this same cost fit.
   */
  readonly actionsRemaining: number;
  /**
   * Present only on a limiter with `maxCostInInterval` (a stack: with at least one such tier, the smallest of
   * theirs): how many more units of cost fit in the current window after this attempt (0 when full).
   */
  readonly costRemaining?: number;
  /**
   * How long, in milliseconds rounded up, until an attempt would be allowed if
   * nothing else happened in between; 0 when the next attempt would be allowed
   * now.
   */
  readonly millisecondsUntilAllowed: number;
  /**
   * Present only when the store failed and the `onStoreError` policy decided
   * instead: which policy, and the failure. Log and alert on it.
   */
  readonly storeFailure?: StoreFailure;
  /**
   * Present (and `true`) only when the attempt's `actionId` had already been
   * admitted: the attempt was answered as admitted again, and nothing was
   * recorded.
   */
  readonly alreadyAdmitted?: true;
}
