// The decide script's reply: per decision a header, then a few values per
// tier, by name. The Lua (decide-script.ts) appends each part from local
// variables of these names, and the codec (decide-codec.ts) reads them back by
// the same lists.

/** What the decide script answers in a decision's `allowed` slot when that decision alone failed. */
export const DECISION_FAILED = {
  /** A key of the decision holds a value that is not a sorted set (Redis WRONGTYPE). */
  wrongType: -1,
  /** An argument of the decision is not what the script expects. */
  badArgument: -2,
} as const;

/** A decision's first values in the reply: the time decided at, allowed (1 or 0, or a negative {@link DECISION_FAILED} code when that decision alone failed and wrote nothing), and already admitted (1 or 0). */
export const REPLY_HEADER = ['now', 'allowed', 'alreadyAdmitted'] as const;

/**
 * A recorded attempt's values per tier: |S| and max(S) of the recorded set S after dropping what left the window
 * (what the decision is made on), then |S'|, max(S') and the k-th newest of S' (k = maxInInterval) as stored
 * afterwards; -1 for a value that does not exist. max(S) and max(S') are read only where the tier has a gap rule
 * or a max of 1 (the only tiers whose decision or info uses them), and are -1 elsewhere.
 */
export const RECORDED_TIER = ['count', 'newest', 'countAfter', 'newestAfter', 'maxthAfter'] as const;

/** A dry run's values per tier: |S|, max(S) (read as for a recorded attempt), the (k-1)-th and the k-th newest of S; -1 for a value that does not exist or is not read, and for the slots a recorded attempt uses and this does not. */
export const DRY_RUN_TIER = ['count', 'newest', 'kMinus1thNewest', 'kthNewest'] as const;

/** How many values each tier adds to the reply, in either mode. */
export const REPLY_VALUES_PER_TIER = Math.max(RECORDED_TIER.length, DRY_RUN_TIER.length);
