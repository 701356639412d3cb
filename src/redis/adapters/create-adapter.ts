import { UnsupportedError } from '../../errors/unsupported-error.js';
import type { RedisAdapter } from './adapter.js';
import { BUN_REDIS_CLIENT_UNSUPPORTED, isBunRedisClient } from './bun-client.js';
import { CallbackRedisAdapter, isCallbackRedisClient } from './callback-adapter.js';
import { GlideAdapter, isGlideClient } from './glide-adapter.js';
import { IORedisAdapter, isIORedisClient } from './ioredis-adapter.js';
import { NodeRedisAdapter, isNodeRedisClient, isNodeRedisSentinel } from './node-redis-adapter.js';
import { NodeRedisClusterAdapter, isNodeRedisCluster } from './node-redis-cluster-adapter.js';
import { UpstashAdapter, isUpstashClient } from './upstash-adapter.js';

/** The clients this version supports, as named in error messages. */
export const SUPPORTED_CLIENTS =
  'an ioredis `Redis` (also with sentinels) or `Cluster` (ioredis 5 or 6, or iovalkey), a node-redis client from `createClient` or `createCluster` (`redis` 4, 5 or 6) or `createSentinel` (`redis` 5 or 6), a Valkey GLIDE 2 `GlideClient` or `GlideClusterClient`, an @upstash/redis `Redis` (HTTP), or a redis-mock client';

/** The adapter of each client seen so far; weak, so that a client the application drops is collected with its adapter. */
const adapters = new WeakMap<object, RedisAdapter>();

/**
 * The adapter of `client`: the same object for the same client, however many
 * limiters, stacks and stores use it, so that they share what the library
 * keeps per client (its connection monitor, batcher, a Cluster's stall watch).
 * @throws UnsupportedError listing what is supported, for a client of no supported kind.
 */
export function adapterFor(client: object): RedisAdapter {
  let adapter = adapters.get(client);
  if (adapter === undefined) {
    adapter = createAdapter(client);
    adapters.set(client, adapter);
  }
  return adapter;
}

/** A new adapter for a client, of the kind it is. */
function createAdapter(client: object): RedisAdapter {
  if (isBunRedisClient(client)) throw new UnsupportedError(BUN_REDIS_CLIENT_UNSUPPORTED);
  if (isIORedisClient(client)) return new IORedisAdapter(client);
  if (isNodeRedisSentinel(client)) return new NodeRedisAdapter(client, true);
  if (isNodeRedisClient(client)) return isNodeRedisCluster(client) ? new NodeRedisClusterAdapter(client) : new NodeRedisAdapter(client);
  if (isGlideClient(client)) return new GlideAdapter(client);
  if (isUpstashClient(client)) return new UpstashAdapter(client);
  if (isCallbackRedisClient(client)) return new CallbackRedisAdapter(client);
  throw new UnsupportedError(`Unsupported \`client\` (${describeClient(client)}): expected ${SUPPORTED_CLIENTS}; or no client for the in-memory store`);
}

/**
 * The client as the refusal names it, never blank: `an instance of Foo` by
 * its class (read from its prototype, not from a `constructor` key of its
 * own), else what kind of object it is (`a plain object`, `an instance of an
 * anonymous class`).
 */
function describeClient(client: object): string {
  const prototype: unknown = Object.getPrototypeOf(client);
  if (prototype === null) return 'an object without a prototype';
  if (prototype === Object.prototype) return 'a plain object';
  const constructor: unknown = (prototype as { constructor?: unknown }).constructor;
  const name: unknown = typeof constructor === 'function' ? constructor.name : undefined;
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an instance of an anonymous class';
}
