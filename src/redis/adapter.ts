import type { RedisCommand } from './client-types.js';

/**
 * The small interface through which the Redis store talks to any client. An
 * adapter sends commands and hands back raw replies; it never interprets
 * them. A reply may be a number, a string, null, or an array of replies.
 */
export interface RedisAdapter {
  /** The user's client, to tell whether two limiters share one. */
  readonly client: object;
  /**
   * Runs the commands atomically in one MULTI/EXEC round trip and resolves to
   * one reply per command; rejects when any command fails.
   */
  transaction(commands: readonly RedisCommand[]): Promise<unknown[]>;
  /** `EVALSHA sha numkeys ...keys ...args`. */
  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /** `EVAL script numkeys ...keys ...args`. */
  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}
