// The reference model of docs/semantics.md (the steps), as pure functions that
// every store uses: from samples of S and S', in compact form, to a decision.

import { microsecondsToWholeMillisecondsUp } from './clock.js';
import type { RateLimitInfo } from './rate-limit-info.js';

/** One limiter's rules, in microseconds. */
export interface WindowRule {
  /** Length of the rolling window; a timestamp exactly this old no longer counts. */
  readonly intervalUs: number;
  /** At most this many recorded actions in any window. */
  readonly maxInInterval: number;
  /** At least this long between consecutive actions (0: no gap rule). */
  readonly minDifferenceUs: number;
  /** Whether blocked attempts are recorded too. */
  readonly countBlocked: boolean;
  /**
   * How long a call may be in flight between its stamp and the store running it (the limiter's `timeout`):
   * records are kept, and keys live, this much longer than the window, so that a call stamped inside a record's
   * window still finds it when it arrives late or out of stamp order (docs/semantics.md, "Time in flight").
   */
  readonly inFlightUs: number;
}

/**
 * How long a record is kept after its stamp, and a key lives after its last write: the window and the time a call
 * stamped inside it may still be in flight.
 */
export function retentionUs(rule: WindowRule): number {
  return rule.intervalUs + rule.inFlightUs;
}

/**
 * The stamp at or before which a decision at `now` may forget records: no call that runs within `inFlightUs` of
 * its stamp can count them any more. Records after it but at or before `now - interval` are kept and not counted.
 */
export function forgetUpTo(rule: WindowRule, now: number): number {
  return now - retentionUs(rule);
}

/** The recorded set S' after the attempt (S' = S when the attempt was not recorded). */
export interface RecordedWindow {
  /** |S'|; exact below `maxInInterval`, and at least `maxInInterval` otherwise. */
  readonly count: number;
  /** max(S'), or undefined when S' is empty. */
  readonly newest: number | undefined;
  /** S'[|S'| - maxInInterval] with S' ascending, i.e. the `maxInInterval`-th newest; undefined when |S'| < maxInInterval. */
  readonly maxthNewest: number | undefined;
}

/** Which rules block an attempt: the first three fields of its info. */
export type Verdict = Pick<RateLimitInfo, 'blocked' | 'blockedDueToCount' | 'blockedDueToMinDifference'>;

/** docs/semantics.md steps 2 to 4: whether an attempt at `now` is blocked, and why. */
export function judge(rule: WindowRule, now: number, prior: Pick<WindowSample, 'count' | 'newest'>): Verdict {
  const blockedDueToCount = prior.count >= rule.maxInInterval;
  const blockedDueToMinDifference = rule.minDifferenceUs > 0 && prior.newest !== undefined && now - prior.newest < rule.minDifferenceUs;
  return { blocked: blockedDueToCount || blockedDueToMinDifference, blockedDueToCount, blockedDueToMinDifference };
}

/** docs/semantics.md steps 6 and 7: the info returned for an attempt at `now`. */
export function describeOutcome(rule: WindowRule, now: number, verdict: Verdict, after: RecordedWindow): RateLimitInfo {
  let waitUs = 0;
  if (rule.minDifferenceUs > 0 && after.newest !== undefined) {
    waitUs = Math.max(waitUs, after.newest + rule.minDifferenceUs - now);
  }
  if (after.count >= rule.maxInInterval && after.maxthNewest !== undefined) {
    waitUs = Math.max(waitUs, after.maxthNewest + rule.intervalUs - now);
  }
  return {
    blocked: verdict.blocked,
    blockedDueToCount: verdict.blockedDueToCount,
    blockedDueToMinDifference: verdict.blockedDueToMinDifference,
    actionsRemaining: Math.max(0, rule.maxInInterval - after.count),
    millisecondsUntilAllowed: microsecondsToWholeMillisecondsUp(waitUs),
  };
}

/**
 * The `k`-th newest (k >= 1) of S ∪ {now}, from |S| and the (k-1)-th and k-th
 * newest of S alone (undefined when S has fewer): what a dry run needs to
 * describe an attempt it does not record.
 */
export function kthNewestAfterInsert(
  k: number,
  now: number,
  count: number,
  kMinus1thNewest: number | undefined,
  kthNewest: number | undefined,
): number | undefined {
  if (count + 1 < k) return undefined;
  if (k === 1) return kthNewest === undefined ? now : Math.max(now, kthNewest);
  if (kMinus1thNewest !== undefined && now >= kMinus1thNewest) return kMinus1thNewest;
  return kthNewest === undefined ? now : Math.max(now, kthNewest);
}

/**
 * The newest timestamps of S (after dropping what left the window) that
 * decide an attempt completely, with k = `maxInInterval`.
 */
export interface WindowSample {
  /** |S|, after dropping timestamps `<= now - interval` (or min(|S|, maxInInterval) for a store that keeps only the newest). */
  readonly count: number;
  /** max(S), when S is not empty. */
  readonly newest: number | undefined;
  /** The (k-1)-th newest of S, when k >= 2 and |S| >= k - 1. */
  readonly kMinus1thNewest: number | undefined;
  /** The k-th newest of S, when |S| >= k. */
  readonly kthNewest: number | undefined;
}

/** One tier's part of a decision: why it blocks, whether it records the attempt, and S' in compact form. */
export interface TierDecision {
  readonly verdict: Verdict;
  readonly recorded: boolean;
  readonly after: RecordedWindow;
}

/** A decision across one or more tiers (stacked limiters) that guard the same action. */
export interface StackDecision {
  /** The action is allowed only when every tier allows it. */
  readonly allowed: boolean;
  readonly tiers: readonly TierDecision[];
}

/** S' in compact form: S, with `now` inserted when the attempt is recorded. */
function recordedWindow(rule: WindowRule, now: number, sample: WindowSample, recorded: boolean): RecordedWindow {
  if (!recorded) return { count: sample.count, newest: sample.newest, maxthNewest: sample.kthNewest };
  return {
    count: sample.count + 1,
    newest: sample.newest === undefined ? now : Math.max(sample.newest, now),
    maxthNewest: kthNewestAfterInsert(rule.maxInInterval, now, sample.count, sample.kMinus1thNewest, sample.kthNewest),
  };
}

/**
 * docs/semantics.md steps 2 to 5 ("Stacks" for several tiers) for one attempt
 * at `now`, from a sample of each tier's S, without writing anything.
 */
export function decideTiers(rules: readonly WindowRule[], now: number, samples: readonly WindowSample[]): StackDecision {
  const verdicts = rules.map((rule, i) => judge(rule, now, samples[i] as WindowSample));
  const allowed = verdicts.every((verdict) => !verdict.blocked);
  const tiers = rules.map((rule, i): TierDecision => {
    const recorded = rule.countBlocked || allowed; // docs/semantics.md step 5
    return { verdict: verdicts[i] as Verdict, recorded, after: recordedWindow(rule, now, samples[i] as WindowSample, recorded) };
  });
  return { allowed, tiers };
}
