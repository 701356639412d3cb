// The flood bound of the in-memory store, the same rule as the decide
// script's: docs/semantics.md, "Memory per key", says what may be dropped.

/** The records of one key, ascending by time; `members[i]` is the member of `timestamps[i]` once action ids were used. */
export interface RecordedSet {
  readonly timestamps: number[];
  /** `'+id'` (admitted action), `'-id'` (blocked action) or undefined (no action id); undefined as a whole before any action id. */
  members: (string | undefined)[] | undefined;
  /** On a rule that counts cost, `weights[i]` is the cost of `timestamps[i]`; undefined on one that counts actions (each weighs 1). */
  readonly weights: number[] | undefined;
}

/**
 * Drops what no later decision can tell apart: the records without an action id older than the newest of them that
 * together weigh `max` (the `max` newest, where each weighs 1), and the blocked actions they bound below. Those
 * records are never undone or settled, so any window that holds a dropped record also holds them, and blocks.
 */
export function keepWhatDecisionsNeed(set: RecordedSet, max: number): void {
  const { timestamps, members, weights } = set;
  if (weights === undefined && timestamps.length <= max) return;
  if (members === undefined && weights === undefined) {
    timestamps.splice(0, timestamps.length - max);
    return;
  }
  // The floor: the newest record without an action id at which those records weigh max. Everything it bounds below
  // may go, but admitted actions.
  let seen = 0;
  let floorIndex = -1;
  for (let i = timestamps.length - 1; i >= 0; i -= 1) {
    if (members?.[i] === undefined && (seen += weights?.[i] ?? 1) >= max) {
      floorIndex = i;
      break;
    }
  }
  if (floorIndex < 0) return;
  const floor = timestamps[floorIndex] as number;
  let kept = 0;
  for (let i = 0; i < timestamps.length; i += 1) {
    const member = members?.[i];
    const keep = member === undefined ? i >= floorIndex : member.startsWith('+') || (timestamps[i] as number) > floor;
    if (keep) {
      timestamps[kept] = timestamps[i] as number;
      if (members !== undefined) members[kept] = member;
      if (weights !== undefined) weights[kept] = weights[i] as number;
      kept += 1;
    }
  }
  timestamps.length = kept;
  if (members !== undefined) members.length = kept;
  if (weights !== undefined) weights.length = kept;
}
