import type { RedisAdapter } from './adapter.js';
import { hasMembers, type NodeRedisLikeClient, type NodeRedisLikeCluster, type RedisCommand } from './client-types.js';
import type { ConnectionProblem } from '../../errors/timeout-error.js';
import { watchErrors } from './connection-monitor.js';
import { checkedReplies, scriptCommand, stringsOf } from './node-redis-commands.js';
import { nodeRedisConnectionProblem, notOpenError } from './node-redis-connection.js';

/** {@link RedisAdapter} for a node-redis (`redis` v4 or v5) client made by `createClient`. */
export class NodeRedisAdapter implements RedisAdapter {
  readonly client: NodeRedisLikeClient;
  readonly kind = 'node-redis';
  readonly isCluster = false;
  readonly supportsScripts = true;
  readonly #lastError: () => Error | undefined;

  constructor(client: NodeRedisLikeClient) {
    this.client = client;
    this.#lastError = watchErrors(client);
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    const multi = this.client.multi();
    for (const command of commands) multi.addCommand(stringsOf(command));
    return multi.exec().then(checkedReplies);
  }

  evalsha(sha1: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    return this.client.sendCommand(scriptCommand('EVALSHA', sha1, keys, args));
  }

  eval(lua: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    if (!this.client.isOpen) return Promise.reject(notOpenError(this.kind));
    return this.client.sendCommand(scriptCommand('EVAL', lua, keys, args));
  }

  connectionProblem(): ConnectionProblem | undefined {
    return nodeRedisConnectionProblem(this.kind, this.client, this.#lastError());
  }
}

/** True when `client` looks like a node-redis v4/v5 client or cluster client. */
export function isNodeRedisClient(client: object): client is NodeRedisLikeClient | NodeRedisLikeCluster {
  return hasMembers(client, { sendCommand: 'function', multi: 'function', isOpen: 'boolean' });
}
