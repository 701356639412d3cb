import { UnsupportedError } from '../../errors/unsupported-error.js';
import type { RedisAdapter } from './adapter.js';
import { CallbackRedisAdapter, isCallbackRedisClient } from './callback-adapter.js';
import { IORedisAdapter, isIORedisClient } from './ioredis-adapter.js';
import { NodeRedisAdapter, isNodeRedisClient } from './node-redis-adapter.js';
import { NodeRedisClusterAdapter, isNodeRedisCluster } from './node-redis-cluster-adapter.js';
import { NodeRedisSentinelAdapter, isNodeRedisSentinel } from './node-redis-sentinel-adapter.js';

/** The clients this version supports, as named in error messages. */
export const SUPPORTED_CLIENTS =
  'an ioredis `Redis` (also with sentinels) or `Cluster` (ioredis 5 or 6), a node-redis client from `createClient` or `createCluster` (`redis` 4 or 5) or `createSentinel` (`redis` 5), or a redis-mock client';

/** Picks the adapter for a client, or throws an {@link UnsupportedError} listing what is supported. */
export function createAdapter(client: object): RedisAdapter {
  if (isIORedisClient(client)) return new IORedisAdapter(client);
  if (isNodeRedisSentinel(client)) return new NodeRedisSentinelAdapter(client);
  if (isNodeRedisClient(client)) return isNodeRedisCluster(client) ? new NodeRedisClusterAdapter(client) : new NodeRedisAdapter(client);
  if (isCallbackRedisClient(client)) return new CallbackRedisAdapter(client);
  const name = (client.constructor as { name?: string } | undefined)?.name ?? typeof client;
  throw new UnsupportedError(`Unsupported \`client\` (${name}): expected ${SUPPORTED_CLIENTS}; or no client for the in-memory store`);
}
