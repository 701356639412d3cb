// The one reference model (docs/semantics.md: the steps, "Action ids, undo,
// clear" and "Stacks"), written from the text and nothing else: plain arrays
// per tier and id, no trimming, no shortcuts, and no code shared with the
// library. A single limiter is a stack of one tier (reference-model.ts).
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
//
// Action ids (docs/semantics.md, "Action ids, undo, clear"): each record keeps its action
// id, if any, and whether it was admitted. A retry of an action id with an
// admitted record in the window of any tier of the decision is answered
// `alreadyAdmitted` (not blocked, nothing recorded); a retry of one whose
// record was blocked is a new attempt, and each tier that records it drops
// the earlier blocked record (it is recorded once). `undo` removes the
// action's admitted records; `clear` removes everything.
//
// Time in flight (docs/semantics.md): calls may be applied late and out of
// stamp order. An attempt at t counts every record stamped after t - interval,
// those stamped after t included; it forgets (for good) only the records at or
// before t - interval - inFlight, where inFlight is the limiter's timeout (the
// longest a call may be in flight). Re-admitting an action id whose admitted
// record left the window keeps that record, without its id.

export interface ReferenceTierRules {
  /** The tier's namespace, reported back in its info. */
  namespace: string;
  intervalMs: number;
  maxInInterval: number;
  minDifferenceMs: number;
  countBlocked: boolean;
  /** How long a call may be in flight (the limiter's `timeout`); default 2000, the library's default. */
  inFlightMs?: number;
}

/** The library's default `timeout`: how long a call may be in flight. */
export const DEFAULT_IN_FLIGHT_MS = 2000;

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
  /** Present (true) when the attempt's action id had already been admitted. */
  alreadyAdmitted?: true;
}

/** One recorded attempt. */
interface ReferenceRecord {
  /** Microseconds. */
  readonly t: number;
  actionId: string | undefined;
  readonly admitted: boolean;
}

interface ReferenceTier {
  readonly rules: ReferenceTierRules;
  /** Records per id, in the order they were recorded. */
  readonly recorded: Map<string, ReferenceRecord[]>;
}

export class ReferenceStack {
  readonly #tiers: ReferenceTier[];

  constructor(tiers: readonly ReferenceTierRules[]) {
    if (tiers.length === 0) throw new Error('A reference stack needs at least one tier');
    this.#tiers = tiers.map((rules) => ({ rules: { ...rules }, recorded: new Map<string, ReferenceRecord[]>() }));
  }

  /** All tier indices, in order. */
  get allTiers(): number[] {
    return this.#tiers.map((_, i) => i);
  }

  /** An attempt at `t` (microseconds) under the given tiers (default: all, in order), with an action id or not. */
  attempt(id: string, t: number, tiers: readonly number[] = this.allTiers, actionId?: string): ReferenceStackInfo {
    return this.#evaluate(id, t, tiers, false, actionId);
  }

  /** Removes the admitted records of `actionId` from the given tiers (default: all); true when there was one. */
  undo(id: string, actionId: string, tiers: readonly number[] = this.allTiers): boolean {
    let removed = false;
    for (const index of tiers) {
      const { recorded } = this.#tier(index);
      const records = recorded.get(id) ?? [];
      const kept = records.filter((record) => !(record.admitted && record.actionId === actionId));
      if (kept.length !== records.length) removed = true;
      recorded.set(id, kept);
    }
    return removed;
  }

  /** The admitted records, not undone, of `id` in tier `index` (for the window invariant). */
  admittedIn(index: number, id: string): number[] {
    return (this.#tier(index).recorded.get(id) ?? []).filter((record) => record.admitted).map((record) => record.t);
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
    return (this.#tier(index).recorded.get(id) ?? []).map((record) => record.t);
  }

  #tier(index: number): ReferenceTier {
    const tier = this.#tiers[index];
    if (tier === undefined) throw new Error(`No tier ${index}`);
    return tier;
  }

  #evaluate(id: string, t: number, indices: readonly number[], dryRun: boolean, actionId?: string): ReferenceStackInfo {
    if (indices.length === 0) throw new Error('An attempt needs at least one tier');
    const tiers = indices.map((index) => this.#tier(index));

    // 1. Forget every recorded timestamp <= t - interval - inFlight (an attempt keeps the drop; a dry run writes
    // nothing); count those > t - interval, later stamps included.
    const kept = tiers.map(({ rules, recorded }) => {
      const inFlightUs = (rules.inFlightMs ?? DEFAULT_IN_FLIGHT_MS) * 1000;
      const records = (recorded.get(id) ?? []).filter((record) => record.t > t - rules.intervalMs * 1000 - inFlightUs);
      if (!dryRun) recorded.set(id, records);
      return records;
    });
    const windows = tiers.map(({ rules }, i) => (kept[i] as ReferenceRecord[]).filter((record) => record.t > t - rules.intervalMs * 1000));

    // An action id already admitted (its record still in the window) in any tier: answered as admitted, nothing recorded.
    if (!dryRun && actionId !== undefined && windows.some((S) => S.some((record) => record.admitted && record.actionId === actionId))) {
      const infos = tiers.map(({ rules }, i) => describe(rules, t, windows[i] as ReferenceRecord[], false, false));
      return { ...combine(infos), alreadyAdmitted: true };
    }

    // Steps 2 to 4, per tier, on its own set.
    const judged = tiers.map(({ rules }, i) => {
      const S = windows[i] as ReferenceRecord[];
      const minDifference = rules.minDifferenceMs * 1000;
      // 2.
      const blockedDueToCount = S.length >= rules.maxInInterval;
      // 3. A gap of exactly minDifference is allowed.
      const blockedDueToMinDifference = minDifference > 0 && S.length > 0 && t - Math.max(...S.map((record) => record.t)) < minDifference;
      return { blockedDueToCount, blockedDueToMinDifference };
    });

    // Stacking: allowed only if no tier blocks.
    const allowed = judged.every((tier) => !tier.blockedDueToCount && !tier.blockedDueToMinDifference);

    const infos = tiers.map(({ rules, recorded }, i): ReferenceTierInfo => {
      // 5. Record t when the tier counts blocked attempts, or when the action was allowed overall; an action's
      // earlier blocked record is replaced.
      const record = rules.countBlocked || allowed;
      const all = kept[i] as ReferenceRecord[];
      const keptAfter = record
        ? [...all.filter((earlier) => actionId === undefined || earlier.admitted || earlier.actionId !== actionId), { t, actionId, admitted: allowed }]
        : all;
      const after = keptAfter.filter((later) => later.t > t - rules.intervalMs * 1000);
      if (!dryRun) {
        // An earlier admitted record of a re-admitted action id (it left the window) keeps counting, without its id.
        if (record && allowed && actionId !== undefined) {
          for (const earlier of all) if (earlier.admitted && earlier.actionId === actionId) earlier.actionId = undefined;
        }
        recorded.set(id, keptAfter);
      }
      const { blockedDueToCount, blockedDueToMinDifference } = judged[i] as (typeof judged)[number];
      return describe(rules, t, after, blockedDueToCount, blockedDueToMinDifference);
    });
    return combine(infos);
  }
}

/** Steps 6 and 7 on S' (`after`), with the verdict of steps 2 to 4. */
function describe(
  rules: ReferenceTierRules,
  t: number,
  after: readonly ReferenceRecord[],
  blockedDueToCount: boolean,
  blockedDueToMinDifference: boolean,
): ReferenceTierInfo {
  const interval = rules.intervalMs * 1000;
  const minDifference = rules.minDifferenceMs * 1000;
  const max = rules.maxInInterval;
  const sorted = after.map((record) => record.t).sort((a, b) => a - b);
  // 6.
  const actionsRemaining = Math.max(0, max - sorted.length);
  // 7.
  let wait = 0;
  if (minDifference > 0 && sorted.length > 0) wait = Math.max(wait, Math.max(...sorted) + minDifference - t);
  if (sorted.length >= max) wait = Math.max(wait, (sorted[sorted.length - max] as number) + interval - t);
  return {
    blocked: blockedDueToCount || blockedDueToMinDifference,
    blockedDueToCount,
    blockedDueToMinDifference,
    actionsRemaining,
    millisecondsUntilAllowed: Math.ceil(Math.max(0, wait) / 1000),
    namespace: rules.namespace,
    interval: rules.intervalMs,
    maxInInterval: max,
  };
}

/** A stack's info from its tiers. (docs/semantics.md, "Stacks"). */
function combine(infos: ReferenceTierInfo[]): ReferenceStackInfo {
  return {
    blocked: infos.some((info) => info.blocked),
    blockedDueToCount: infos.some((info) => info.blockedDueToCount),
    blockedDueToMinDifference: infos.some((info) => info.blockedDueToMinDifference),
    actionsRemaining: Math.min(...infos.map((info) => info.actionsRemaining)),
    millisecondsUntilAllowed: Math.max(...infos.map((info) => info.millisecondsUntilAllowed)),
    tiers: infos,
  };
}

/** The RateLimitInfo fields of a stack's info: what a tier's limiter used alone returns (with `alreadyAdmitted` when set). */
export function limitInfoOf(info: ReferenceLimitInfo & { alreadyAdmitted?: true }): ReferenceLimitInfo & { alreadyAdmitted?: true } {
  return {
    blocked: info.blocked,
    blockedDueToCount: info.blockedDueToCount,
    blockedDueToMinDifference: info.blockedDueToMinDifference,
    actionsRemaining: info.actionsRemaining,
    millisecondsUntilAllowed: info.millisecondsUntilAllowed,
    ...(info.alreadyAdmitted === true ? { alreadyAdmitted: true as const } : {}),
  };
}
