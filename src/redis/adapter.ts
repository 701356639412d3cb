import type { RedisCommand } from './client-types.js';

/**
 * The small interface through which the Redis store talks to any client. An
 * adapter sends commands and hands back raw replies; it never interprets
 * them. A reply may be a number, a string, null, or an array of replies.
 */
export interface RedisAdapter {
  /**
   * Runs the commands atomically in one MULTI/EXEC round trip and resolves to
   * one reply per command; rejects when any command fails.
   */
  transaction(commands: readonly RedisCommand[]): Promise<unknown[]>;
}
