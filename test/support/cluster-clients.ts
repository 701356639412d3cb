// Every Redis Cluster client the library supports, connected to a cluster
// started by test/support/redis-cluster.ts (Valkey GLIDE's is in glide-clients.ts): the cluster tests run each
// scenario once per client.

import { Cluster } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { createCluster as createCluster4 } from 'redis4';
import { createCluster as createCluster5 } from 'redis5';
import { createCluster as createCluster6 } from 'redis6';
import type { RedisClient } from '../../src/index.js';
import type { RedisClusterHandle } from './redis-cluster.js';

/** A connected cluster client and how to close it. */
export interface ConnectedCluster {
  readonly client: RedisClient;
  close(): Promise<void>;
}

/** One cluster client library, as test titles name it, and how to connect it. */
export interface ClusterClientKind {
  readonly name: string;
  connect(cluster: Pick<RedisClusterHandle, 'rootNodes' | 'urls'>): Promise<ConnectedCluster>;
}

/** ioredis `Cluster`, iovalkey `Cluster`, and node-redis 4, 5 and 6 `createCluster`: what the slot-move, resharding and server-check tests run on. */
export const CLUSTER_CLIENTS: readonly ClusterClientKind[] = [
  {
    name: 'ioredis Cluster',
    connect: async (cluster) => {
      const client = new Cluster([...cluster.rootNodes]);
      client.on('error', () => {}); // outages are expected in these tests
      await client.ping();
      return { client, close: async () => void client.disconnect() };
    },
  },
  {
    name: 'iovalkey Cluster',
    connect: async (cluster) => {
      const client = new ValkeyCluster([...cluster.rootNodes]);
      client.on('error', () => {});
      await client.ping();
      return { client, close: async () => void client.disconnect() };
    },
  },
  {
    name: 'node-redis 4 createCluster',
    connect: async (cluster) => {
      const client = createCluster4({ rootNodes: cluster.urls.map((url) => ({ url })) });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => void (await client.disconnect()) };
    },
  },
  {
    name: 'node-redis 5 createCluster',
    connect: async (cluster) => {
      const client = createCluster5({ rootNodes: cluster.urls.map((url) => ({ url })) });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => void client.destroy() };
    },
  },
  {
    name: 'node-redis 6 createCluster',
    connect: async (cluster) => {
      const client = createCluster6({ rootNodes: cluster.urls.map((url) => ({ url })) });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => void client.destroy() };
    },
  },
];

/**
 * The clients the failover tests kill a master under, one master each of the cluster's three: ioredis `Cluster`
 * and node-redis 4 and 5 `createCluster` (iovalkey is ioredis's fork; node-redis 6 keeps node-redis 5's cluster
 * internals, which the adapter reads).
 */
export const FAILOVER_CLUSTER_CLIENTS: readonly ClusterClientKind[] = CLUSTER_CLIENTS.filter((kind) =>
  ['ioredis Cluster', 'node-redis 4 createCluster', 'node-redis 5 createCluster'].includes(kind.name),
);
