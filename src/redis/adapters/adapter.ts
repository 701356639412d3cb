import type { ConnectionProblem } from '../../errors/timeout-error.js';
import type { RedisCommand } from './client-types.js';

/**
 * The small interface through which the Redis store talks to any client: an
 * adapter sends commands and hands back raw replies, never interpreting them.
 * There is one per client (see `adapterFor`); the batcher of `batch: true`
 * is found by script-store.ts, in a WeakMap by the client.
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
   * Sends one command that names no key (`CONFIG GET`, `INFO`), outside any
   * transaction, and resolves to its reply as the client gives it; on a
   * Cluster it goes to the node the client picks for such a command. Absent
   * for a client that is no server (redis-mock).
   */
  serverCommand?(command: RedisCommand): Promise<unknown>;
  /** What the client shows is wrong with its connection, read (nothing sent) to explain a {@link TimeoutError}; undefined when it looks connected or cannot tell. */
  connectionProblem?(): ConnectionProblem | undefined;
  /**
   * On a Cluster: the master (`host:port`) that holds `key`'s hash slot by the
   * client's slot map, never sent, or undefined while the map has no entry
   * for it (see `Store.slotOwner`). Undefined or absent for one server.
   */
  slotOwner?(key: string): string | undefined;
}
