// The only place where Redis keys are built, and where ids are escaped.
//
// A key is `<namespace>:{<id>}` with both parts escaped so that the key is
// injective and the Redis Cluster hash tag is exactly the id:
//   - `%`, `{`, `}` and `:` become `%25`, `%7B`, `%7D`, `%3A`, so the first `:`
//     ends the namespace, the first `{` opens the tag and the first `}` closes it;
//   - a lone UTF-16 surrogate (which UTF-8 cannot encode, and which clients
//     would all turn into U+FFFD) becomes `%uD800`-style text.
// Every key of one id therefore hashes to one Cluster slot, whatever the
// namespace, which lets several tiers of one id be decided in one script.

/** Anything that needs escaping: the four delimiters and any surrogate (checked further below). */
const NEEDS_ESCAPE = /[%{}:\uD800-\uDFFF]/;
const ESCAPABLE = /[%{}:]|[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]/g;

function escapeChar(match: string): string {
  switch (match) {
    case '%':
      return '%25';
    case '{':
      return '%7B';
    case '}':
      return '%7D';
    case ':':
      return '%3A';
    default:
      // A well-formed surrogate pair stays as it is; a lone surrogate is spelled out.
      return match.length === 2 ? match : `%u${match.charCodeAt(0).toString(16).toUpperCase()}`;
  }
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

/** How a limiter turns an id into the key its store holds it under. */
export interface KeyScheme {
  /** The key of one id (already normalized to a string). */
  keyFor(id: string): string;
}

/**
 * The in-memory store's keys: the id itself. Each in-memory limiter has a
 * store of its own, so no namespace is needed to keep limiters apart, and the
 * caller's id string (whose hash the engine has usually computed already) is
 * looked up as it is.
 */
export const ID_AS_KEY: KeyScheme = { keyFor: (id) => id };

/**
 * Builds keys for one namespace. The namespace is escaped once, here; each
 * call then escapes only the id.
 */
export class KeyBuilder implements KeyScheme {
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
