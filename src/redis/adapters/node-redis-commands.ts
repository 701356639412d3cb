// Commands as node-redis sends them: every argument a string.

import type { RedisCommand } from './client-types.js';

/**
 * node-redis takes every argument as a string (or Buffer): the command as it
 * is when it holds only strings (as the MULTI path of `limit()` builds it),
 * else a copy with numbers spelled out.
 */
export function stringsOf(command: RedisCommand): string[] {
  for (const arg of command) if (typeof arg !== 'string') return command.map(String);
  return command as readonly string[] as string[];
}

/** `EVALSHA <sha1> <numkeys> <keys…> <args…>` (or `EVAL`), as the strings node-redis sends, built in one pass. */
export function scriptCommand(verb: 'EVALSHA' | 'EVAL', script: string, keys: readonly string[], args: readonly (string | number)[]): string[] {
  const command = [verb, script, String(keys.length), ...keys];
  for (const arg of args) command.push(typeof arg === 'string' ? arg : String(arg));
  return command;
}
