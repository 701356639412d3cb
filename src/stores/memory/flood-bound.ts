// The flood bound of the in-memory store, the same rule as the decide
// script's: docs/semantics.md, "Memory per key", says what may be dropped.

/** The records of one key, ascending by time; `members[i]` is the member of `timestamps[i]` once action ids were used. */
export interface RecordedSet {
  readonly timestamps: number[];
  /** `'+id'` (admitted action), `'-id'` (blocked action) or undefined (no action id); undefined as a whole before any action id. */
  members: (string | undefined)[] | undefined;
}

/** Drops what no later decision can tell apart: the records without an action id but the `max` newest, and the blocked actions they bound below. */
export function keepWhatDecisionsNeed(set: RecordedSet, max: number): void {
  const { timestamps, members } = set;
  if (timestamps.length <= max) return;
  if (members === undefined) {
    timestamps.splice(0, timestamps.length - max);
    return;
  }
  // The max-th newest record without an action id: everything it bounds below may go, but admitted actions.
  let seen = 0;
  let floorIndex = -1;
  for (let i = members.length - 1; i >= 0; i -= 1) {
    if (members[i] === undefined && (seen += 1) === max) {
      floorIndex = i;
      break;
    }
  }
  if (floorIndex < 0) return;
  const floor = timestamps[floorIndex] as number;
  let kept = 0;
  for (let i = 0; i < timestamps.length; i += 1) {
    const member = members[i];
    const keep = member === undefined ? i >= floorIndex : member.startsWith('+') || (timestamps[i] as number) > floor;
    if (keep) {
      timestamps[kept] = timestamps[i] as number;
      members[kept] = member;
      kept += 1;
    }
  }
  timestamps.length = kept;
  members.length = kept;
}
