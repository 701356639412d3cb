import type { RedisAdapter } from './adapter.js';
import { hasMembers, type NodeRedisLikeSentinel, type RedisCommand } from './client-types.js';
import type { ConnectionProblem } from '../../errors/timeout-error.js';
import { watchErrors } from './connection-monitor.js';
import { checkedReplies, scriptCommand, stringsOf } from './node-redis-commands.js';
import { nodeRedisConnectionProblem, notOpenError } from './node-redis-connection.js';

/**
 * {@link RedisAdapter} for a node-redis 5 Sentinel client made by
 * `createSentinel`. Every call goes to the primary (`isReadonly: false`); the
 * client finds the primary through the sentinels and follows a failover
 * itself.
 */
export class NodeRedisSentinelAdapter implements RedisAdapter {
  readonly client: NodeRedisLikeSentinel;
  readonly kind = 'node-redis sentinel';
  readonly isCluster = false;
  readonly supportsScripts = true;
  readonly #lastError: () => Error | undefined;

  constructor(client: NodeRedisLikeSentinel) {
    this.client = client;
    this.#lastError = watchErrors(client);
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    const multi = this.client.multi();
    for (const command of commands) multi.addCommand(false, stringsOf(command));
    return multi.exec().then(checkedReplies);
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    return this.client.sendCommand(false, scriptCommand('EVALSHA', sha1, keys, args));
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    return this.client.sendCommand(false, scriptCommand('EVAL', lua, keys, args));
  }

  connectionProblem(): ConnectionProblem | undefined {
    return nodeRedisConnectionProblem(this.kind, this.client, this.#lastError());
  }
}

/**
 * True when `client` looks like a node-redis Sentinel client: it also has
 * `sendCommand`, `multi` and `isOpen`, but takes a read-only flag first, and
 * knows its sentinels.
 */
export function isNodeRedisSentinel(client: object): client is NodeRedisLikeSentinel {
  return hasMembers(client, { getSentinelNode: 'function', getMasterNode: 'function', sendCommand: 'function', multi: 'function' });
}
