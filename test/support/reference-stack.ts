// An independent reference model of stacked limiters (SPEC.md "Exact
// semantics" and "Stacking"), written from the text and nothing else: plain
// arrays per tier and id, no trimming, no shortcuts, and no code shared with
// the library or with reference-model.ts (whose limiter decides recording on
// its own verdict, where a tier of a stack must follow the stack's).
//
// An attempt at t: each tier applies steps 1 to 4 to its own recorded set;
// the action is allowed iff no tier blocks; each tier records t iff it counts
// blocked attempts or the action was allowed overall (step 5); each tier
// reports steps 6 and 7 on its own set. The stack reports blocked = any tier
// blocks, blockedDueToCount / blockedDueToMinDifference = any tier's,
// actionsRemaining = the smallest, millisecondsUntilAllowed = the largest, and
// every tier's info in stacking order. A dry run returns the same and writes
// nothing. A single limiter is a stack of one tier, so the same code answers
// for a tier's limiter used alone (pass `tiers` = [i]).

export interface ReferenceTierRules {
  /** The tier's namespace, reported back in its info. */
  namespace: string;
  intervalMs: number;
  maxInInterval: number;
  minDifferenceMs: number;
  countBlocked: boolean;
}

/** The RateLimitInfo fields. */
export interface ReferenceLimitInfo {
  blocked: boolean;
  blockedDueToCount: boolean;
  blockedDueToMinDifference: boolean;
  actionsRemaining: number;
  millisecondsUntilAllowed: number;
}

/** One tier's part of a stack's info. */
export interface ReferenceTierInfo extends ReferenceLimitInfo {
  namespace: string;
  interval: number;
  maxInInterval: number;
}

/** A stack's info: its own fields and each tier's, in stacking order. */
export interface ReferenceStackInfo extends ReferenceLimitInfo {
  tiers: ReferenceTierInfo[];
}

interface ReferenceTier {
  readonly rules: ReferenceTierRules;
  /** Recorded timestamps (microseconds) per id, in the order they were recorded. */
  readonly recorded: Map<string, number[]>;
}

export class ReferenceStack {
  readonly #tiers: ReferenceTier[];

  constructor(tiers: readonly ReferenceTierRules[]) {
    if (tiers.length === 0) throw new Error('A reference stack needs at least one tier');
    this.#tiers = tiers.map((rules) => ({ rules: { ...rules }, recorded: new Map<string, number[]>() }));
  }

  /** All tier indices, in order. */
  get allTiers(): number[] {
    return this.#tiers.map((_, i) => i);
  }

  /** An attempt at `t` (microseconds) under the given tiers (default: all, in order). */
  attempt(id: string, t: number, tiers: readonly number[] = this.allTiers): ReferenceStackInfo {
    return this.#evaluate(id, t, tiers, false);
  }

  /** A dry run of {@link attempt}: the same result, and nothing written. */
  peek(id: string, t: number, tiers: readonly number[] = this.allTiers): ReferenceStackInfo {
    return this.#evaluate(id, t, tiers, true);
  }

  /** Forgets `id` in the given tiers (default: all). */
  clear(id: string, tiers: readonly number[] = this.allTiers): void {
    for (const index of tiers) this.#tier(index).recorded.delete(id);
  }

  /** What tier `index` holds for `id` (for debugging a failure). */
  recordedIn(index: number, id: string): number[] {
    return [...(this.#tier(index).recorded.get(id) ?? [])];
  }

  #tier(index: number): ReferenceTier {
    const tier = this.#tiers[index];
    if (tier === undefined) throw new Error(`No tier ${index}`);
    return tier;
  }

  #evaluate(id: string, t: number, indices: readonly number[], dryRun: boolean): ReferenceStackInfo {
    if (indices.length === 0) throw new Error('An attempt needs at least one tier');
    const tiers = indices.map((index) => this.#tier(index));

    // Steps 1 to 4, per tier, on its own set.
    const judged = tiers.map(({ rules, recorded }) => {
      const interval = rules.intervalMs * 1000;
      const minDifference = rules.minDifferenceMs * 1000;
      // 1. Drop every recorded timestamp <= t - interval.
      const S = (recorded.get(id) ?? []).filter((x) => x > t - interval);
      // 2.
      const blockedDueToCount = S.length >= rules.maxInInterval;
      // 3. A gap of exactly minDifference is allowed.
      const blockedDueToMinDifference = minDifference > 0 && S.length > 0 && t - Math.max(...S) < minDifference;
      // 4.
      const blocked = blockedDueToCount || blockedDueToMinDifference;
      return { S, blocked, blockedDueToCount, blockedDueToMinDifference };
    });

    // Stacking: allowed only if no tier blocks.
    const allowed = judged.every((tier) => !tier.blocked);

    const infos = tiers.map(({ rules, recorded }, i): ReferenceTierInfo => {
      const { S, blocked, blockedDueToCount, blockedDueToMinDifference } = judged[i] as (typeof judged)[number];
      const interval = rules.intervalMs * 1000;
      const minDifference = rules.minDifferenceMs * 1000;
      const max = rules.maxInInterval;
      // 5. Record t when the tier counts blocked attempts, or when the action was allowed overall.
      const record = rules.countBlocked || allowed;
      const after = record ? [...S, t] : [...S];
      if (!dryRun) {
        if (after.length > 0) recorded.set(id, after);
        else recorded.delete(id);
      }
      const sorted = [...after].sort((a, b) => a - b);
      // 6.
      const actionsRemaining = Math.max(0, max - sorted.length);
      // 7.
      let wait = 0;
      if (minDifference > 0 && sorted.length > 0) wait = Math.max(wait, Math.max(...sorted) + minDifference - t);
      if (sorted.length >= max) wait = Math.max(wait, (sorted[sorted.length - max] as number) + interval - t);
      return {
        blocked,
        blockedDueToCount,
        blockedDueToMinDifference,
        actionsRemaining,
        millisecondsUntilAllowed: Math.ceil(Math.max(0, wait) / 1000),
        namespace: rules.namespace,
        interval: rules.intervalMs,
        maxInInterval: max,
      };
    });

    return {
      blocked: infos.some((info) => info.blocked),
      blockedDueToCount: infos.some((info) => info.blockedDueToCount),
      blockedDueToMinDifference: infos.some((info) => info.blockedDueToMinDifference),
      actionsRemaining: Math.min(...infos.map((info) => info.actionsRemaining)),
      millisecondsUntilAllowed: Math.max(...infos.map((info) => info.millisecondsUntilAllowed)),
      tiers: infos,
    };
  }
}

/** The RateLimitInfo fields of a stack's info: what a tier's limiter used alone returns. */
export function limitInfoOf(info: ReferenceLimitInfo): ReferenceLimitInfo {
  return {
    blocked: info.blocked,
    blockedDueToCount: info.blockedDueToCount,
    blockedDueToMinDifference: info.blockedDueToMinDifference,
    actionsRemaining: info.actionsRemaining,
    millisecondsUntilAllowed: info.millisecondsUntilAllowed,
  };
}
