// The decide script's reply: per decision its verdict, then a few values per
// tier, by name, each answered only where the caller reads it. The Lua
// (decide-script.ts) appends each part from local variables of these names,
// and the codec (decide-codec.ts) reads them back by the same lists.

import type { WindowRule } from '../../core/decision-model.js';

/** A decision's first value in the reply: how it was decided, or (negative) why it alone failed and wrote nothing. */
export const VERDICT = {
  blocked: 0,
  allowed: 1,
  /** Allowed because its action id was admitted before (and is still in the window): nothing recorded. */
  alreadyAdmitted: 2,
  /** A key of the decision holds a value that is not a sorted set (Redis WRONGTYPE). */
  wrongType: -1,
} as const;

/**
 * When a value is in the reply. Each is a Lua boolean of the same name where the script appends the value, and a
 * test of the rule, the decision and the values read before it where the codec reads the reply back. A value left
 * out reads as -1, as one that does not exist does.
 */
export type Presence =
  /** Always. */
  | 'always'
  /** The decision read Redis TIME (its header's now was ''): the caller knows any other time. */
  | 'redisClock'
  /** The tier has a gap rule or a max of 1: the only tiers whose decision or info uses max(S) and max(S'). */
  | 'readsNewest'
  /** A recorded attempt left the tier holding maxInInterval records or more: the info then needs the max-th newest. */
  | 'fullAfter'
  /** A dry run found maxInInterval - 1 records or more, with a max above 1: the (k-1)-th newest exists. */
  | 'nearlyFull'
  /** A dry run found maxInInterval records or more: the k-th newest exists. */
  | 'full';

/** A value of the reply: its name, and when it is there. */
export interface ReplyValue<Name extends string = string> {
  readonly name: Name;
  readonly when: Presence;
}

function value<Name extends string>(name: Name, when: Presence = 'always'): ReplyValue<Name> {
  return { name, when };
}

/** A decision's first values in the reply: its {@link VERDICT}, and the time it was decided at where Redis's clock gave it. */
export const REPLY_HEADER = [value('verdict'), value('now', 'redisClock')] as const;

/**
 * A recorded attempt's values per tier: |S| of the recorded set S after dropping what left the window (what the
 * decision is made on) and |S'| as stored afterwards, then max(S) and max(S'), then the k-th newest of S'
 * (k = maxInInterval). The values always there come first, so that the Lua appends them in one statement.
 */
export const RECORDED_TIER = [
  value('count'),
  value('countAfter'),
  value('newest', 'readsNewest'),
  value('newestAfter', 'readsNewest'),
  value('maxthAfter', 'fullAfter'),
] as const;

/** A dry run's values per tier: |S|, max(S) (read as for a recorded attempt), the (k-1)-th and the k-th newest of S. */
export const DRY_RUN_TIER = [value('count'), value('newest', 'readsNewest'), value('kMinus1thNewest', 'nearlyFull'), value('kthNewest', 'full')] as const;

/**
 * A reply of a few small values comes as one integer instead of an array, which costs Redis a good deal more to
 * answer than the values it holds: with `count` values (at most `maxValues`), each from -1 to `largest`, the integer
 * is count + 4 * sum over i of (value_i + 1) * 2^(bits * i), below 2^53 and so exact as a Lua number.
 */
export const PACKED_REPLY = { maxValues: 3, bits: 17, largest: 2 ** 17 - 2 } as const;

/** The values of a reply that came as one integer ({@link PACKED_REPLY}). */
export function unpackReply(packed: number): number[] {
  const count = packed % 4;
  const values: number[] = [];
  let rest = (packed - count) / 4;
  for (let i = 0; i < count; i += 1) {
    const field = rest % 2 ** PACKED_REPLY.bits;
    values.push(field - 1);
    rest = (rest - field) / 2 ** PACKED_REPLY.bits;
  }
  return values;
}

/** The names of a part of the reply. */
export type NamesOf<Part extends readonly ReplyValue[]> = Part[number]['name'];

/** Whether the tier's values max(S) and max(S') are in the reply (Presence `readsNewest`). */
export function readsNewest(rule: WindowRule): boolean {
  return rule.minDifferenceUs > 0 || rule.maxInInterval === 1;
}
