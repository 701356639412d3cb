import { UnsupportedError } from '../../errors/unsupported-error.js';
import type { RedisAdapter } from './adapter.js';
import { hasMembers, type CallbackRedisLikeClient, type RedisCommand } from './client-types.js';
import { execReplies } from './exec-replies.js';

/**
 * {@link RedisAdapter} for the callback API of node_redis v3, as redis-mock
 * implements it, for users' unit tests: the MULTI path only (no Lua).
 */
export class CallbackRedisAdapter implements RedisAdapter {
  readonly client: CallbackRedisLikeClient;
  readonly kind = 'redis-mock (node_redis v3 callback API)';
  readonly isCluster = false;
  readonly supportsScripts = false;

  constructor(client: CallbackRedisLikeClient) {
    this.client = client;
  }

  transaction(commands: readonly RedisCommand[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.client.multi(commands.map((command) => [...command])).exec((error, replies) => (error ? reject(error) : resolve(replies)));
    }).then(execReplies);
  }

  async evalsha(): Promise<unknown> {
    return this.eval();
  }

  async eval(): Promise<unknown> {
    throw new UnsupportedError(`${this.kind} cannot run Lua scripts`);
  }
}

/** True when `client` looks like a node_redis v3 / redis-mock client (callback API). */
export function isCallbackRedisClient(client: object): client is CallbackRedisLikeClient {
  return hasMembers(client, { connected: 'boolean', multi: 'function', zadd: 'function', sendCommand: 'undefined' });
}
