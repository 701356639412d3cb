import { throwFirstErrorReply, type RedisAdapter } from './adapter.js';
import type { NodeRedisLikeClient, NodeRedisLikeCluster, RedisCommand } from './client-types.js';

/**
 * node-redis takes every argument as a string (or Buffer): the command as it
 * is when it holds only strings (as the MULTI path of `limit()` builds it),
 * else a copy with numbers spelled out.
 */
function stringsOf(command: RedisCommand): string[] {
  for (const arg of command) if (typeof arg !== 'string') return command.map(String);
  return command as readonly string[] as string[];
}

/** `EVALSHA <sha1> <numkeys> <keys…> <args…>` (or `EVAL`), as the strings node-redis sends, built in one pass. */
function scriptCommand(verb: 'EVALSHA' | 'EVAL', script: string, keys: readonly string[], args: readonly (string | number)[]): string[] {
  const command = [verb, script, String(keys.length), ...keys];
  for (const arg of args) command.push(typeof arg === 'string' ? arg : String(arg));
  return command;
}

/** EXEC's replies, or the first error among them. */
function checkedReplies(replies: unknown): unknown[] {
  if (!Array.isArray(replies)) throw new Error(`MULTI answered ${String(replies)} instead of a list of replies`);
  throwFirstErrorReply(replies);
  return replies as unknown[];
}

/** {@link RedisAdapter} for a node-redis (`redis` v4 or v5) client made by `createClient`. */
export class NodeRedisAdapter implements RedisAdapter {
  readonly client: NodeRedisLikeClient;
  readonly kind = 'node-redis';
  readonly supportsScripts = true;

  constructor(client: NodeRedisLikeClient) {
    this.client = client;
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    const multi = this.client.multi();
    for (const command of commands) multi.addCommand(stringsOf(command));
    return multi.exec().then(checkedReplies);
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.sendCommand(scriptCommand('EVALSHA', sha1, keys, args));
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.sendCommand(scriptCommand('EVAL', lua, keys, args));
  }
}

/**
 * {@link RedisAdapter} for a node-redis (`redis` v4 or v5) cluster client made
 * by `createCluster`. Every call is routed by its first key, so the client's
 * own MOVED/ASK handling stays in charge.
 */
export class NodeRedisClusterAdapter implements RedisAdapter {
  readonly client: NodeRedisLikeCluster;
  readonly kind = 'node-redis cluster';
  readonly supportsScripts = true;

  constructor(client: NodeRedisLikeCluster) {
    this.client = client;
  }

  async transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    const key = String(commands[0]?.[1]);
    const multi = this.client.multi(key);
    // v4: addCommand(firstKey, args); v5: addCommand(firstKey, isReadonly, args).
    const takesReadonlyFlag = multi.addCommand.length >= 4;
    for (const command of commands) {
      const args = stringsOf(command);
      if (takesReadonlyFlag) multi.addCommand(key, false, args);
      else multi.addCommand(key, args);
    }
    return multi.exec().then(checkedReplies);
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.sendCommand(keys[0], false, scriptCommand('EVALSHA', sha1, keys, args));
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.client.sendCommand(keys[0], false, scriptCommand('EVAL', lua, keys, args));
  }
}

/** True when `client` looks like a node-redis v4/v5 client or cluster client. */
export function isNodeRedisClient(client: object): client is NodeRedisLikeClient | NodeRedisLikeCluster {
  const candidate = client as Partial<Record<'sendCommand' | 'multi' | 'isOpen', unknown>>;
  return typeof candidate.sendCommand === 'function' && typeof candidate.multi === 'function' && typeof candidate.isOpen === 'boolean';
}

/** True when a node-redis client is a cluster client (it knows its masters). */
export function isNodeRedisCluster(client: NodeRedisLikeClient | NodeRedisLikeCluster): client is NodeRedisLikeCluster {
  return 'masters' in client;
}
