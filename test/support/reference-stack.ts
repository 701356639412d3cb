// The one reference model (docs/semantics.md: the steps, "Action ids, undo,
// clear", "Stacks" and "Costs"), written from the text and nothing else:
// plain arrays per tier and id, no trimming, no shortcuts, and no code shared
// with the library. A single limiter is a stack of one tier
// (reference-model.ts).
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
// Costs (docs/semantics.md, "Costs"): a tier counts either actions
// (`maxInInterval`) or cost (`maxCostInInterval`). Each record carries a
// weight: 1 on an action tier, the attempt's cost c on a cost tier; W(X) is
// the sum of the weights of X, and c_tier the weight the attempt would
// record (1 or c). Step 2: blockedDueToCount = W(S) + c_tier > max. Step 6:
// an action tier's actionsRemaining = max(0, max - |S'|); a cost tier's
// actionsRemaining = max(0, floor((max - W(S')) / c)) and costRemaining =
// max(0, max - W(S')). Step 7's count part: the smallest wait w >= 0 such
// that the records of S' stamped after (t + w) - interval weigh at most
// max - c_tier (walk S' by stamp, dropping the oldest until the rest weighs
// that little: the wait is the last dropped record's stamp + interval - t).
// The stack also reports costRemaining = the smallest of its cost tiers'
// (absent when it has none); a cost tier's info has maxCostInInterval and
// costRemaining instead of maxInInterval.
//
// Action ids (docs/semantics.md, "Action ids, undo, clear"): each record keeps its action
// id, if any, and whether it was admitted. A retry of an action id with an
// admitted record in the window of any tier of the decision is answered
// `alreadyAdmitted` (not blocked, nothing recorded; its info is steps 6 and
// 7 on S' = S with the attempt's cost); a retry of one whose record was
// blocked is a new attempt, and each tier that records it drops the earlier
// blocked record (it is recorded once, its weight goes with it). `undo`
// removes the action's admitted records, weight and all; `clear` removes
// everything. `settle(actionId, cost)` at t sets, in each cost tier, the
// weight of the action's admitted record stamped after t - interval (later
// stamps included) to `cost`; action tiers never change.
//
// Time in flight (docs/semantics.md): calls may be applied late and out of
// stamp order. An attempt at t counts every record stamped after t - interval,
// those stamped after t included; it forgets (for good) only the records at or
// before t - interval - inFlight, where inFlight is the limiter's timeout (the
// longest a call may be in flight). Re-admitting an action id whose admitted
// record left the window keeps that record, without its id, with its weight.

export interface ReferenceTierRules {
  /** The tier's namespace, reported back in its info. */
  namespace: string;
  intervalMs: number;
  /** An action tier's maximum per window (exactly one of this and `maxCostInInterval` is given). */
  maxInInterval?: number;
  /** A cost tier's maximum cost per window (exactly one of this and `maxInInterval` is given). */
  maxCostInInterval?: number;
  minDifferenceMs: number;
  countBlocked: boolean;
  /** How long a call may be in flight (the limiter's `timeout`); default 2000, the library's default. */
  inFlightMs?: number;
}

/** The library's default `timeout`: how long a call may be in flight. */
export const DEFAULT_IN_FLIGHT_MS = 2000;

/** Whether a tier counts cost (`maxCostInInterval`) rather than actions. */
export function countsCost(rules: Pick<ReferenceTierRules, 'maxInInterval' | 'maxCostInInterval'>): boolean {
  return rules.maxCostInInterval !== undefined;
}

/** A tier's maximum per window: actions, or cost. */
export function maxOf(rules: Pick<ReferenceTierRules, 'maxInInterval' | 'maxCostInInterval'>): number {
  const max = rules.maxCostInInterval ?? rules.maxInInterval;
  if (max === undefined || (rules.maxCostInInterval !== undefined && rules.maxInInterval !== undefined)) {
    throw new Error(`A reference tier needs exactly one of maxInInterval and maxCostInInterval: ${JSON.stringify(rules)}`);
  }
  return max;
}

/** The RateLimitInfo fields. */
export interface ReferenceLimitInfo {
  blocked: boolean;
  blockedDueToCount: boolean;
  blockedDueToMinDifference: boolean;
  actionsRemaining: number;
  millisecondsUntilAllowed: number;
  /** Present exactly when the limiter (or a tier of the stack) counts cost. */
  costRemaining?: number;
}

/** One tier's part of a stack's info: an action tier has `maxInInterval`, a cost tier `maxCostInInterval` and `costRemaining`. */
export interface ReferenceTierInfo extends ReferenceLimitInfo {
  namespace: string;
  interval: number;
  maxInInterval?: number;
  maxCostInInterval?: number;
}

/** A stack's info: its own fields and each tier's, in stacking order. */
export interface ReferenceStackInfo extends ReferenceLimitInfo {
  tiers: ReferenceTierInfo[];
  /** Present (true) when the attempt's action id had already been admitted. */
  alreadyAdmitted?: true;
}

/** What a call with these options would reject with, or undefined when it is a valid call. */
export type ReferenceRejection = { error: 'TypeError' | 'RangeError'; why: string } | undefined;

/** One recorded attempt. */
interface ReferenceRecord {
  /** Microseconds. */
  readonly t: number;
  actionId: string | undefined;
  readonly admitted: boolean;
  /** 1 on an action tier; the attempt's cost (then what it was settled to) on a cost tier. */
  weight: number;
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
    for (const rules of tiers) maxOf(rules);
    this.#tiers = tiers.map((rules) => ({ rules: { ...rules }, recorded: new Map<string, ReferenceRecord[]>() }));
  }

  /** All tier indices, in order. */
  get allTiers(): number[] {
    return this.#tiers.map((_, i) => i);
  }

  /** The tiers' rules, in order. */
  get rules(): ReferenceTierRules[] {
    return this.#tiers.map((tier) => ({ ...tier.rules }));
  }

  /** Whether any of the given tiers (default: all) counts cost. */
  countsCost(tiers: readonly number[] = this.allTiers): boolean {
    return tiers.some((index) => countsCost(this.#tier(index).rules));
  }

  /**
   * What an attempt or a dry run with `cost` (undefined: none given) on the given tiers rejects with, if anything:
   * a cost given where no tier counts cost is a TypeError; a cost that is not a number a TypeError, one that is not a
   * positive safe integer a RangeError; a cost above a cost tier's maximum a RangeError.
   */
  rejectsCost(cost: unknown, tiers: readonly number[] = this.allTiers): ReferenceRejection {
    // A budget weighs what each attempt says: none given is a TypeError (there is no `defaultCost` here).
    if (cost === undefined) return this.countsCost(tiers) ? { error: 'TypeError', why: 'no cost where a tier counts cost' } : undefined;
    if (!this.countsCost(tiers)) return { error: 'TypeError', why: 'a cost given where no tier counts cost' };
    if (typeof cost !== 'number') return { error: 'TypeError', why: 'a cost that is not a number' };
    if (!Number.isSafeInteger(cost) || cost < 1) return { error: 'RangeError', why: 'a cost that is not a positive safe integer' };
    for (const index of tiers) {
      const { rules } = this.#tier(index);
      if (countsCost(rules) && cost > maxOf(rules)) return { error: 'RangeError', why: `a cost above maxCostInInterval ${maxOf(rules)}` };
    }
    return undefined;
  }

  /** What `settle` with `cost` on the given tiers rejects with, if anything. */
  rejectsSettle(cost: unknown, tiers: readonly number[] = this.allTiers): ReferenceRejection {
    if (!this.countsCost(tiers)) return { error: 'TypeError', why: 'settle where no tier counts cost' };
    if (typeof cost !== 'number') return { error: 'TypeError', why: 'a settled cost that is not a number' };
    if (!Number.isSafeInteger(cost) || cost < 0) return { error: 'RangeError', why: 'a settled cost that is not a safe integer >= 0' };
    for (const index of tiers) {
      const { rules } = this.#tier(index);
      if (countsCost(rules) && cost > maxOf(rules)) return { error: 'RangeError', why: `a settled cost above maxCostInInterval ${maxOf(rules)}` };
    }
    return undefined;
  }

  /**
   * An attempt at `t` (microseconds) under the given tiers (default: all, in order), with an action id or not, and
   * with a cost (default 1; a valid one: see {@link rejectsCost}).
   */
  attempt(id: string, t: number, tiers: readonly number[] = this.allTiers, actionId?: string, cost = 1): ReferenceStackInfo {
    return this.#evaluate(id, t, tiers, false, actionId, this.#validCost(cost, tiers));
  }

  /** A dry run of {@link attempt}: the same result, and nothing written. */
  peek(id: string, t: number, tiers: readonly number[] = this.allTiers, cost = 1): ReferenceStackInfo {
    return this.#evaluate(id, t, tiers, true, undefined, this.#validCost(cost, tiers));
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

  /**
   * Settles `actionId` at `t` to `cost` in each cost tier among `tiers` (default: all) that holds its admitted record
   * stamped after t - interval; returns the tiers that did (settle() resolves true iff there is one).
   */
  settleIn(id: string, actionId: string, cost: number, t: number, tiers: readonly number[] = this.allTiers): number[] {
    const rejection = this.rejectsSettle(cost, tiers);
    if (rejection !== undefined) throw new Error(`The reference settles no invalid call: ${rejection.why}`);
    const settled: number[] = [];
    for (const index of tiers) {
      const { rules, recorded } = this.#tier(index);
      if (!countsCost(rules)) continue;
      const windowStart = t - rules.intervalMs * 1000;
      const records = (recorded.get(id) ?? []).filter((record) => record.admitted && record.actionId === actionId && record.t > windowStart);
      for (const record of records) record.weight = cost;
      if (records.length > 0) settled.push(index);
    }
    return settled;
  }

  /** {@link settleIn}'s answer: whether at least one tier held the admitted action to settle. */
  settle(id: string, actionId: string, cost: number, t: number, tiers: readonly number[] = this.allTiers): boolean {
    return this.settleIn(id, actionId, cost, t, tiers).length > 0;
  }

  /** The admitted records, not undone, of `id` in tier `index` (for the window invariant). */
  admittedIn(index: number, id: string): number[] {
    return (this.#tier(index).recorded.get(id) ?? []).filter((record) => record.admitted).map((record) => record.t);
  }

  /** Forgets `id` in the given tiers (default: all). */
  clear(id: string, tiers: readonly number[] = this.allTiers): void {
    for (const index of tiers) this.#tier(index).recorded.delete(id);
  }

  /** What tier `index` holds for `id` (for debugging a failure). */
  recordedIn(index: number, id: string): number[] {
    return (this.#tier(index).recorded.get(id) ?? []).map((record) => record.t);
  }

  /** What tier `index` holds for `id`, with weights, action ids and verdicts (for debugging a failure). */
  describeRecords(index: number, id: string): string {
    return (this.#tier(index).recorded.get(id) ?? [])
      .map((record) => `${record.t}${record.admitted ? '+' : '-'}${record.actionId ?? ''}*${record.weight}`)
      .join(' ');
  }

  #tier(index: number): ReferenceTier {
    const tier = this.#tiers[index];
    if (tier === undefined) throw new Error(`No tier ${index}`);
    return tier;
  }

  #validCost(cost: number, tiers: readonly number[]): number {
    // A cost of 1 is the default: valid everywhere (an explicit cost on a stack with no cost tier is the caller's to reject).
    if (cost === 1) return cost;
    const rejection = this.rejectsCost(cost, tiers);
    if (rejection !== undefined) throw new Error(`The reference decides no invalid call: ${rejection.why}`);
    return cost;
  }

  #evaluate(id: string, t: number, indices: readonly number[], dryRun: boolean, actionId: string | undefined, cost: number): ReferenceStackInfo {
    if (indices.length === 0) throw new Error('An attempt needs at least one tier');
    const tiers = indices.map((index) => this.#tier(index));
    /** The weight the attempt records in a tier: 1 on an action tier, its cost on a cost tier. */
    const weightIn = (rules: ReferenceTierRules): number => (countsCost(rules) ? cost : 1);

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
      const infos = tiers.map(({ rules }, i) => describe(rules, t, windows[i] as ReferenceRecord[], false, false, cost));
      return { ...combine(infos), alreadyAdmitted: true };
    }

    // Steps 2 to 4, per tier, on its own set.
    const judged = tiers.map(({ rules }, i) => {
      const S = windows[i] as ReferenceRecord[];
      const minDifference = rules.minDifferenceMs * 1000;
      // 2. W(S) + c > max (on an action tier, |S| >= max).
      const blockedDueToCount = weightOf(S) + weightIn(rules) > maxOf(rules);
      // 3. A gap of exactly minDifference is allowed.
      const blockedDueToMinDifference = minDifference > 0 && S.length > 0 && t - Math.max(...S.map((record) => record.t)) < minDifference;
      return { blockedDueToCount, blockedDueToMinDifference };
    });

    // Stacking: allowed only if no tier blocks.
    const allowed = judged.every((tier) => !tier.blockedDueToCount && !tier.blockedDueToMinDifference);

    const infos = tiers.map(({ rules, recorded }, i): ReferenceTierInfo => {
      // 5. Record (t, c) when the tier counts blocked attempts, or when the action was allowed overall; an action's
      // earlier blocked record is replaced.
      const record = rules.countBlocked || allowed;
      const all = kept[i] as ReferenceRecord[];
      const keptAfter = record
        ? [
            ...all.filter((earlier) => actionId === undefined || earlier.admitted || earlier.actionId !== actionId),
            { t, actionId, admitted: allowed, weight: weightIn(rules) },
          ]
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
      return describe(rules, t, after, blockedDueToCount, blockedDueToMinDifference, cost);
    });
    return combine(infos);
  }
}

/** W(X): the sum of the records' weights. */
function weightOf(records: readonly ReferenceRecord[]): number {
  return records.reduce((sum, record) => sum + record.weight, 0);
}

/** Steps 6 and 7 on S' (`after`, in recording order), with the verdict of steps 2 to 4, for an attempt of `cost`. */
function describe(
  rules: ReferenceTierRules,
  t: number,
  after: readonly ReferenceRecord[],
  blockedDueToCount: boolean,
  blockedDueToMinDifference: boolean,
  cost: number,
): ReferenceTierInfo {
  const interval = rules.intervalMs * 1000;
  const minDifference = rules.minDifferenceMs * 1000;
  const max = maxOf(rules);
  const byCost = countsCost(rules);
  const c = byCost ? cost : 1;
  const total = weightOf(after);
  // 6.
  const actionsRemaining = byCost ? Math.max(0, Math.floor((max - total) / c)) : Math.max(0, max - after.length);
  // 7. The gap part: from the latest record.
  let wait = 0;
  if (minDifference > 0 && after.length > 0) wait = Math.max(wait, Math.max(...after.map((record) => record.t)) + minDifference - t);
  // The count part: drop the oldest records (ties in recording order: a stable sort) until the rest weigh at most
  // max - c; the attempt fits once the last one dropped has left the window.
  const ascending = [...after].sort((a, b) => a.t - b.t);
  let remaining = total;
  let lastDropped: ReferenceRecord | undefined;
  for (const record of ascending) {
    if (remaining <= max - c) break;
    remaining -= record.weight;
    lastDropped = record;
  }
  if (remaining > max - c) throw new Error('unreachable: an attempt never costs more than its tier’s maximum');
  if (lastDropped !== undefined) wait = Math.max(wait, lastDropped.t + interval - t);
  return {
    blocked: blockedDueToCount || blockedDueToMinDifference,
    blockedDueToCount,
    blockedDueToMinDifference,
    actionsRemaining,
    millisecondsUntilAllowed: Math.ceil(Math.max(0, wait) / 1000),
    ...(byCost ? { costRemaining: Math.max(0, max - total) } : {}),
    namespace: rules.namespace,
    interval: rules.intervalMs,
    ...(byCost ? { maxCostInInterval: max } : { maxInInterval: max }),
  };
}

/** A stack's info from its tiers. (docs/semantics.md, "Stacks"). */
function combine(infos: ReferenceTierInfo[]): ReferenceStackInfo {
  const costs = infos.filter((info) => info.costRemaining !== undefined).map((info) => info.costRemaining as number);
  return {
    blocked: infos.some((info) => info.blocked),
    blockedDueToCount: infos.some((info) => info.blockedDueToCount),
    blockedDueToMinDifference: infos.some((info) => info.blockedDueToMinDifference),
    actionsRemaining: Math.min(...infos.map((info) => info.actionsRemaining)),
    millisecondsUntilAllowed: Math.max(...infos.map((info) => info.millisecondsUntilAllowed)),
    ...(costs.length > 0 ? { costRemaining: Math.min(...costs) } : {}),
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
    ...(info.costRemaining !== undefined ? { costRemaining: info.costRemaining } : {}),
    ...(info.alreadyAdmitted === true ? { alreadyAdmitted: true as const } : {}),
  };
}
