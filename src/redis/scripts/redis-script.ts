import { createHash } from 'node:crypto';

/**
 * A Lua script as a reviewed constant: its text, and the SHA1 that `EVALSHA`
 * names it by, computed once when the module loads. Inputs always travel in
 * KEYS and ARGV, never by editing the text, so the SHA never changes.
 */
export interface RedisScript {
  /** A short name for error messages. */
  readonly name: string;
  readonly lua: string;
  readonly sha1: string;
}

/** Declares a script and computes its SHA1. */
export function defineScript(name: string, lua: string): RedisScript {
  return { name, lua, sha1: createHash('sha1').update(lua).digest('hex') };
}
