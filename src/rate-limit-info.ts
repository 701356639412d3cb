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
  /** How many more actions fit in the current window after this attempt (0 when full). */
  readonly actionsRemaining: number;
  /**
   * How long, in milliseconds rounded up, until an attempt would be allowed if
   * nothing else happened in between; 0 when the next attempt would be allowed
   * now.
   */
  readonly millisecondsUntilAllowed: number;
}
