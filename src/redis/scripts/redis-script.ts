/**
 * A Lua script as a reviewed constant: its text and the SHA1 that `EVALSHA` names it by, pinned beside it (a test
 * checks it against what `SCRIPT LOAD` answers). Inputs always travel in KEYS and ARGV, never by editing the text,
 * so the SHA never changes.
 */
export interface RedisScript {
  /** A short name for error messages. */
  readonly name: string;
  readonly lua: string;
  readonly sha1: string;
}

/** Declares a script with its pinned SHA1. */
export function defineScript(name: string, lua: string, sha1: string): RedisScript {
  return { name, lua, sha1 };
}
