// The client libraries and topologies the contract runs on, each a RedisBackend
// (see redis-backend.ts). The files that run them (ioredis.test.ts,
// iovalkey.test.ts, node-redis.test.ts and, under Bun, runtimes/bun/contract.ts)
// choose how many random schedules each gets; valkey.test.ts runs some of them on
// valkey-server (onValkey).

import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import type { RedisClient } from '../../src/index.js';
import type { RedisBackend } from './redis-backend.js';

/** A library's standalone client and its cluster client. */
export interface BackendPair {
  readonly standalone: RedisBackend;
  readonly cluster: RedisBackend;
}

type Quittable = RedisClient & { quit(): Promise<unknown> };

/** An ioredis-shaped library's `Redis` and `Cluster`: `ioredis 5 (standalone)`, `ioredis 5 Cluster (3 masters)`. */
function ioredisBackends(
  name: string,
  RedisClass: new (url: string) => Quittable,
  ClusterClass: new (nodes: { host: string; port: number }[]) => Quittable,
): BackendPair {
  const closing = (client: Quittable) => ({ client, close: async () => void (await client.quit()) });
  return {
    standalone: { name: `${name} (standalone)`, topology: 'standalone', connect: async ({ url }) => closing(new RedisClass(url)) },
    cluster: {
      name: `${name} Cluster (3 masters)`,
      topology: 'cluster',
      connect: async ({ rootNodes }) => closing(new ClusterClass(rootNodes.map((node) => ({ ...node })))),
    },
  };
}

export const IOREDIS_5 = ioredisBackends('ioredis 5', Redis, Cluster);
export const IOREDIS_6 = ioredisBackends('ioredis 6', Redis6, Cluster6);
/** iovalkey, the ioredis fork for Valkey: the same adapter as ioredis (it is recognized by its shape). */
export const IOVALKEY = ioredisBackends('iovalkey', Valkey, ValkeyCluster);

/** A node-redis client or cluster: connected by the caller, as the library expects. */
interface NodeRedisConnectable {
  connect(): Promise<unknown>;
}

/** A node-redis backend: `make` builds the client from the target, `close` ends it (`quit` in v4, `destroy` in v5). */
function nodeRedisBackend<C extends NodeRedisConnectable & RedisClient>(
  name: string,
  topology: RedisBackend['topology'],
  make: (urls: readonly string[]) => C,
  close: (client: C) => Promise<void>,
): RedisBackend {
  return {
    name,
    topology,
    async connect({ urls }) {
      const client = make(urls);
      await client.connect();
      return { client, close: () => close(client) };
    },
  };
}

const rootNodes = (urls: readonly string[]) => ({ rootNodes: urls.map((url) => ({ url })) });
const first = (urls: readonly string[]): string => urls[0] as string;

export const NODE_REDIS_4: BackendPair = {
  standalone: nodeRedisBackend(
    'node-redis 4 (standalone)',
    'standalone',
    (urls) => createClient4({ url: first(urls) }),
    async (client) => void (await client.quit()),
  ),
  cluster: nodeRedisBackend(
    'node-redis 4 cluster (3 masters)',
    'cluster',
    (urls) => createCluster4(rootNodes(urls)),
    async (client) => void (await client.quit()),
  ),
};
export const NODE_REDIS_5: BackendPair = {
  standalone: nodeRedisBackend(
    'node-redis 5 (standalone)',
    'standalone',
    (urls) => createClient5({ url: first(urls) }),
    async (client) => client.destroy(),
  ),
  cluster: nodeRedisBackend(
    'node-redis 5 cluster (3 masters)',
    'cluster',
    (urls) => createCluster5(rootNodes(urls)),
    async (client) => client.destroy(),
  ),
};
export const NODE_REDIS_5_RESP3 = nodeRedisBackend(
  'node-redis 5 with RESP3 (standalone)',
  'standalone',
  (urls) => createClient5({ url: first(urls), RESP: 3 }),
  async (client) => client.destroy(),
);

/** `backend` on valkey-server (the harness starts Valkey, or uses VALKEY_URL / VALKEY_CLUSTER_URLS): `ioredis 5 (standalone) on Valkey`. */
export function onValkey(backend: RedisBackend): RedisBackend {
  return { ...backend, name: `${backend.name} on Valkey`, server: 'valkey' };
}

/** The clients the contract runs on Valkey (test/contract/valkey.test.ts): ioredis standalone and Cluster, node-redis 5 with RESP3. */
export const ON_VALKEY = {
  ioredis: { standalone: onValkey(IOREDIS_5.standalone), cluster: onValkey(IOREDIS_5.cluster) },
  nodeRedisResp3: onValkey(NODE_REDIS_5_RESP3),
} as const;
