import type { ConnectionProblem } from '../../errors/timeout-error.js';
import type { RedisCommand } from './client-types.js';

/**
 * The small interface through which the Redis store talks to any client. An
 * adapter sends commands and hands back raw replies; it never interprets
 * them. A reply may be a number, a string, null, or an array of replies.
 *
 * There is one adapter per client (`adapterFor` in create-adapter.ts), and
 * what the library keeps per client lives on it: its connection monitor, on
 * a node-redis Cluster its stall watch, and the batcher of `batch: true`
 * (the `batcher` member, which decide/decision-batcher.ts declares and makes:
 * the adapters know nothing of batches).
 */
export interface RedisAdapter {
  /** The user's client, to tell whether two limiters share one. */
  readonly client: object;
  /** What the client is, for error messages, e.g. `node-redis cluster`. */
  readonly kind: string;
  /** Whether the client can run Lua scripts (redis-mock cannot). */
  readonly supportsScripts: boolean;
  /** Whether keys live in many hash slots, each on its own node (a Cluster): one script call may only touch one slot. */
  readonly isCluster: boolean;
  /**
   * Runs the commands atomically in one MULTI/EXEC round trip and resolves to
   * one reply per command; rejects when any command fails. All commands
   * address the same key or keys of one hash slot.
   */
  transaction(commands: readonly RedisCommand[]): Promise<unknown[]>;
  /** `EVALSHA sha numkeys ...keys ...args`. */
  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /** `EVAL script numkeys ...keys ...args`. */
  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /**
   * What the client shows is wrong with its connection right now (not
   * connected, and its last connection error), or undefined when it looks
   * connected or cannot tell. Read when a call times out, to explain the
   * {@link TimeoutError}; it never sends anything.
   */
  connectionProblem?(): ConnectionProblem | undefined;
  /**
   * On a Cluster: the master (`host:port`) that holds `key`'s hash slot by the
   * client's slot map at this moment, or undefined while the client has no
   * map entry for it. Each master is its own failure domain: the limiter keeps
   * a circuit breaker per master, so that a dead master stops calls only for
   * the ids it holds. Undefined (or absent) for clients of one server
   * (standalone, Sentinel), whose connection is their one failure domain. It
   * never sends anything.
   */
  slotOwner?(key: string): string | undefined;
}
