// The reference model of docs/semantics.md (the steps), as pure functions that
// every store uses: from samples of S and S', in compact form, to a decision.

import { microsecondsToWholeMillisecondsUp } from './clock.js';
import type { RateLimitInfo } from './rate-limit-info.js';

/** One limiter's rules, in microseconds. */
export interface WindowRule {
  /** Length of the rolling window; a timestamp exactly this old no longer counts. */
  readonly intervalUs: number;
  /**
   * At most this much recorded weight in any window: actions (each record weighs 1), or units of cost when the rule
   * `countsCost` (each record weighs its attempt's cost).
   */
  readonly maxInInterval: number;
  /** Whether records weigh their attempt's cost (`maxCostInInterval`) rather than 1 each (`maxInInterval`). */
  readonly countsCost: boolean;
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
 * The least time in flight a limiter keeps records for, whatever its `timeout` (the default `timeout`, 2 s): limiters
 * on one namespace with timeouts up to it keep records for one horizon, so that a writer with a shorter timeout never
 * lets a key expire, or forgets records, that another's call still in flight must count (docs/semantics.md, "Bounds
 * and shared namespaces"). A key's mark carries longer horizons to its other writers.
 */
export const LEAST_IN_FLIGHT_MS = 2_000;

/** The time in flight a limiter with `timeoutMs` keeps records for, in microseconds: its timeout, at least {@link LEAST_IN_FLIGHT_MS}. */
export function inFlightUsOf(timeoutMs: number): number {
  return Math.max(timeoutMs, LEAST_IN_FLIGHT_MS) * 1_000;
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

/**
 * The weight an attempt of `cost` adds to a tier (docs/semantics.md, "Costs"): its cost on a rule that counts cost,
 * 1 on one that counts actions.
 */
export function weightOn(rule: WindowRule, cost: number): number {
  return rule.countsCost ? cost : 1;
}

/** The recorded set S' after the attempt (S' = S when the attempt was not recorded). */
export interface RecordedWindow {
  /**
   * W(S'), the weight of S': |S'| on a rule that counts actions; exact while an attempt of the same cost would
   * fit, and at least enough to block one otherwise (a flood bound may have dropped what no decision can tell).
   */
  readonly count: number;
  /** max(S'), or undefined when S' is empty. */
  readonly newest: number | undefined;
  /**
   * The stamp of S' whose leaving the window lets an attempt of the same cost fit by count: walking S' from its
   * oldest, the record at which the rest weighs at most `maxInInterval - weight` (on a rule that counts actions,
   * the `maxInInterval`-th newest). Undefined when such an attempt fits now.
   */
  readonly fitsAfter: number | undefined;
}

/** Which rules block an attempt: the first three fields of its info. */
export type Verdict = Pick<RateLimitInfo, 'blocked' | 'blockedDueToCount' | 'blockedDueToMinDifference'>;

/** docs/semantics.md steps 2 to 4: whether an attempt of `cost` at `now` is blocked, and why. */
export function judge(rule: WindowRule, now: number, prior: Pick<WindowSample, 'count' | 'newest'>, cost = 1): Verdict {
  const blockedDueToCount = prior.count + weightOn(rule, cost) > rule.maxInInterval;
  const blockedDueToMinDifference = rule.minDifferenceUs > 0 && prior.newest !== undefined && now - prior.newest < rule.minDifferenceUs;
  return { blocked: blockedDueToCount || blockedDueToMinDifference, blockedDueToCount, blockedDueToMinDifference };
}

/** docs/semantics.md steps 6 and 7 ("Costs" on a rule that counts cost): the info returned for an attempt of `cost` at `now`. */
export function describeOutcome(rule: WindowRule, now: number, verdict: Verdict, after: RecordedWindow, cost = 1): RateLimitInfo {
  let waitUs = 0;
  if (rule.minDifferenceUs > 0 && after.newest !== undefined) {
    waitUs = Math.max(waitUs, after.newest + rule.minDifferenceUs - now);
  }
  if (after.count + weightOn(rule, cost) > rule.maxInInterval && after.fitsAfter !== undefined) {
    waitUs = Math.max(waitUs, after.fitsAfter + rule.intervalUs - now);
  }
  const info: RateLimitInfo = {
    blocked: verdict.blocked,
    blockedDueToCount: verdict.blockedDueToCount,
    blockedDueToMinDifference: verdict.blockedDueToMinDifference,
    actionsRemaining: Math.max(0, rule.countsCost ? Math.floor((rule.maxInInterval - after.count) / cost) : rule.maxInInterval - after.count),
    millisecondsUntilAllowed: microsecondsToWholeMillisecondsUp(waitUs),
  };
  return rule.countsCost ? { ...info, costRemaining: Math.max(0, rule.maxInInterval - after.count) } : info;
}

/**
 * S' of a rule that counts cost, from its records in the window (stamps ascending, each with its weight), with an
 * attempt of `cost` at `now` inserted (after records of the same stamp) when `recorded`: what a store that holds the
 * weights computes, and what a dry run describes.
 */
export function weighedWindow(
  rule: WindowRule,
  stamps: readonly number[],
  weights: readonly number[],
  now: number,
  cost: number,
  recorded: boolean,
): RecordedWindow {
  let total = recorded ? cost : 0;
  for (const weight of weights) total += weight;
  let newest = stamps.length > 0 ? (stamps[stamps.length - 1] as number) : undefined;
  if (recorded && (newest === undefined || now > newest)) newest = now;
  const target = rule.maxInInterval - cost;
  let fitsAfter: number | undefined;
  if (total > target) {
    // Drop records from the oldest until the rest weighs at most max - cost; the attempt's own goes after its equals.
    let rest = total;
    let pending = recorded;
    for (let i = 0; i < stamps.length && fitsAfter === undefined; i += 1) {
      const stamp = stamps[i] as number;
      if (pending && now < stamp) {
        pending = false;
        rest -= cost;
        if (rest <= target) fitsAfter = now;
      }
      if (fitsAfter === undefined) {
        rest -= weights[i] as number;
        if (rest <= target) fitsAfter = stamp;
      }
    }
    if (fitsAfter === undefined && pending) fitsAfter = now;
  }
  return { count: total, newest, fitsAfter };
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
  /**
   * On a rule that counts cost, where ranks cannot say what S' weighs: S' as it would be with the attempt recorded,
   * and without (see {@link weighedWindow}); `count` is then W(S).
   */
  readonly weighed?: { readonly recorded: RecordedWindow; readonly notRecorded: RecordedWindow };
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
  if (sample.weighed !== undefined) return recorded ? sample.weighed.recorded : sample.weighed.notRecorded;
  if (!recorded) return { count: sample.count, newest: sample.newest, fitsAfter: sample.kthNewest };
  return {
    count: sample.count + 1,
    newest: sample.newest === undefined ? now : Math.max(sample.newest, now),
    fitsAfter: kthNewestAfterInsert(rule.maxInInterval, now, sample.count, sample.kMinus1thNewest, sample.kthNewest),
  };
}

/**
 * docs/semantics.md steps 2 to 5 ("Stacks" for several tiers) for one attempt
 * of `cost` at `now`, from a sample of each tier's S, without writing anything.
 */
export function decideTiers(rules: readonly WindowRule[], now: number, samples: readonly WindowSample[], cost = 1): StackDecision {
  const verdicts = rules.map((rule, i) => judge(rule, now, samples[i] as WindowSample, cost));
  const allowed = verdicts.every((verdict) => !verdict.blocked);
  const tiers = rules.map((rule, i): TierDecision => {
    const recorded = rule.countBlocked || allowed; // docs/semantics.md step 5
    return { verdict: verdicts[i] as Verdict, recorded, after: recordedWindow(rule, now, samples[i] as WindowSample, recorded) };
  });
  return { allowed, tiers };
}
