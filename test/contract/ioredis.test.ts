import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { describeRedisBackend } from './redis-backend.js';

describeRedisBackend(
  {
    name: 'ioredis 5 (standalone)',
    topology: 'standalone',
    async connect({ url }) {
      const client = new Redis(url);
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 1000, stackSchedules: 500, batchSchedules: 400 },
);

describeRedisBackend(
  {
    name: 'ioredis 6 (standalone)',
    topology: 'standalone',
    async connect({ url }) {
      const client = new Redis6(url);
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 400, stackSchedules: 200, batchSchedules: 150 },
);

describeRedisBackend(
  {
    name: 'ioredis 5 Cluster (3 masters)',
    topology: 'cluster',
    async connect({ rootNodes }) {
      const client = new Cluster(rootNodes.map((node) => ({ ...node })));
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 400, stackSchedules: 200, batchSchedules: 200 },
);

describeRedisBackend(
  {
    name: 'ioredis 6 Cluster (3 masters)',
    topology: 'cluster',
    async connect({ rootNodes }) {
      const client = new Cluster6(rootNodes.map((node) => ({ ...node })));
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 200, stackSchedules: 100, batchSchedules: 100 },
);
