// Commands as node-redis and GLIDE send them: every argument a string.

import type { RedisCommand } from './client-types.js';

/** The command itself when it holds only strings (as the MULTI path of `limit()` builds it), else a copy with numbers spelled out. */
export function stringsOf(command: RedisCommand): string[] {
  for (const arg of command) if (typeof arg !== 'string') return command.map(String);
  return command as readonly string[] as string[];
}

/** `EVALSHA <sha1> <numkeys> <keys…> <args…>` (or `EVAL`), every argument a string. */
export function scriptCommand(verb: 'EVALSHA' | 'EVAL', script: string, keys: readonly string[], args: readonly (string | number)[]): string[] {
  return [verb, script, String(keys.length), ...keys, ...args.map(String)];
}
