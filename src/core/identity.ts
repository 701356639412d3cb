// The only place where what the caller names (an id, an action id) becomes
// what a store holds (a key, a sorted-set member). A key is
// `<namespace>:{<id>}`, both parts escaped as docs/guides/how-it-works-on-redis.md, "Key format", says:
// injective, and the Redis Cluster hash tag is exactly the id, so several
// tiers of one id are decided in one script.

/**
 * What a limiter limits: usually a user id. A string (not empty), or a finite
 * number that stands for its decimal string (`42` and `'42'` are the same id).
 */
export type LimiterId = string | number;

/** Normalizes an id to its string form, or throws a `TypeError` naming what was received. */
export function normalizeId(id: unknown): string {
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  const received =
    typeof id === 'string' ? 'an empty string' : typeof id === 'number' ? `\`${id}\` (number)` : `a value of type ${id === null ? 'null' : typeof id}`;
  throw new TypeError(`Expected the id to be a non-empty string or a finite number, got ${received}`);
}

/** Anything that needs escaping: the four delimiters and any surrogate (checked further below). */
const NEEDS_ESCAPE = /[%{}:\uD800-\uDFFF]/;
const ESCAPABLE = /[%{}:]|[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]/g;

const ESCAPES: Readonly<Record<string, string>> = { '%': '%25', '{': '%7B', '}': '%7D', ':': '%3A' };

/** A delimiter's escape; a well-formed surrogate pair as it is; a lone surrogate spelled out. */
function escapeChar(match: string): string {
  return ESCAPES[match] ?? (match.length === 2 ? match : `%u${match.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Escapes one part of a key, or an action id, injectively: two different
 * strings never escape to the same one, even when they differ only in a lone
 * surrogate (which clients send to Redis as U+FFFD). Returns the input itself
 * when nothing needs escaping (the common case).
 */
export function escapeIdentifier(part: string): string {
  return NEEDS_ESCAPE.test(part) ? part.replace(ESCAPABLE, escapeChar) : part;
}

/**
 * Builds keys for one namespace. The namespace is escaped once, here; each
 * call then escapes only the id.
 */
export class KeyBuilder {
  readonly #prefix: string;

  /** @param namespace The limiter's namespace, as the user gave it. */
  constructor(namespace: string) {
    this.#prefix = `${escapeIdentifier(namespace)}:{`;
  }

  /** The Redis key of one id (already normalized to a string). */
  keyFor(id: string): string {
    return `${this.#prefix}${escapeIdentifier(id)}}`;
  }
}

// Sorted-set members must be unique per attempt, even when two attempts share
// a microsecond, and short, because every byte is paid for in Redis memory.
// A member is a random tag fixed for this process (or isolate: 8 base-36
// characters, about 41 bits) followed by a counter in base 36: typically 9 to
// 12 bytes, against 36 for a UUID. Within a process the counter makes members
// unique; across processes the tag does, with overwhelming probability. The
// tag is drawn from the web's `crypto.getRandomValues` (Node 20 has it too) at
// the first member, not at import: workerd forbids random values in the
// global scope.

let processTag: string | undefined;
let counter = 0;

/** Draws this process's tag: 8 random base-36 characters. */
function drawProcessTag(): string {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(8)), (byte) => (byte % 36).toString(36)).join('');
}

/** A new member for a sorted set: unique within this process, and across processes with high probability. */
export function nextMember(): string {
  counter += 1;
  return (processTag ??= drawProcessTag()) + counter.toString(36);
}

// Action ids (docs/semantics.md, "Action ids, undo, clear") are stored escaped
// as key parts are, marked with whether the action was admitted; the members
// of attempts without one (see nextMember) never start with a mark.

/**
 * The companion of a Redis key, in its hash slot: a sorted set of the key's
 * records that carry an action id, so that the flood bound can tell them
 * apart without reading the whole key (the decide script's second tier key).
 */
export function actionRecordsKey(key: string): string {
  return `${key}:a`;
}

/**
 * The weights of a cost tier's Redis key, in its hash slot: a hash of each record's cost by its member, and the sums
 * `live`, `anon` and `pastAt` (the decide script's third key of a tier that counts cost). Since 0.6.0 under `:c`: the
 * hash under `:w`, with the sums of 0.5 and earlier, is never read.
 */
export function recordWeightsKey(key: string): string {
  return `${key}:c`;
}

/** The member of an admitted action (its id as stored). */
export function admittedMember(actionId: string): string {
  return `+${actionId}`;
}

/** The member of an action (its id as stored) that was recorded while blocked (with `countBlocked: true`). */
export function blockedMember(actionId: string): string {
  return `-${actionId}`;
}

/** Options of one attempt. */
export interface AttemptOptions {
  /**
   * Makes the attempt idempotent: an action id already admitted (and still in
   * the window) is answered as admitted and counted once; an earlier blocked
   * attempt with it is replaced. `undo` gives an admitted action back. Needs
   * the decide script on Redis (not redis-mock).
   */
  readonly actionId?: string;
  /**
   * What the attempt costs (tokens, bytes, credits): a positive safe integer, on a limiter with `maxCostInInterval`
   * (a stack: with such a tier; its action tiers count the attempt once). An action id's cost is a reservation that
   * `settle` can set to what it used. Given to a limiter without a budget of cost it is a `TypeError`; above a
   * tier's `maxCostInInterval`, a `RangeError`; left out on a budget, the limiter's `defaultCost`, and without one a
   * `TypeError`.
   * @default the limiter's `defaultCost` on a budget of cost (required without one); 1 on a limit of actions
   */
  readonly cost?: number;
  /**
   * The `actionId` is used once and never retried, as an id made for one HTTP request is (the Express and Hono
   * middleware set this for the ids they make): a blocked attempt is then recorded as one without an action id, so
   * that a flood of blocked attempts, each with an id of its own, keeps no more records than one without ids (the
   * flood bound of docs/semantics.md, "Memory per key"). An admitted one keeps its id for `settle` and `undo`. Only
   * with `actionId`; a retry of a single-use id is not recognised as one.
   * @default false
   */
  readonly singleUse?: boolean;
}

/** Options of a dry run (`wouldLimit`, `wouldLimitWithInfo`). */
export interface DryRunOptions {
  /** What the attempt would cost, as {@link AttemptOptions.cost} says (required on a budget without `defaultCost`). */
  readonly cost?: number;
}

/** Validates an action id: a non-empty string. */
export function normalizeActionId(actionId: unknown): string {
  if (typeof actionId === 'string' && actionId !== '') return actionId;
  throw new TypeError(`Expected \`actionId\` to be a non-empty string, got ${typeof actionId === 'string' ? 'an empty string' : typeof actionId}`);
}
