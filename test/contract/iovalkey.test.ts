// iovalkey, the ioredis fork for Valkey, through the same adapter as ioredis
// (it is recognized by its shape, not by its package name).
import { Cluster, Redis } from 'iovalkey';
import { describeRedisBackend } from './redis-backend.js';

describeRedisBackend(
  {
    name: 'iovalkey (standalone)',
    topology: 'standalone',
    async connect({ url }) {
      const client = new Redis(url);
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 400, stackSchedules: 200, batchSchedules: 150 },
);

describeRedisBackend(
  {
    name: 'iovalkey Cluster (3 masters)',
    topology: 'cluster',
    async connect({ rootNodes }) {
      const client = new Cluster(rootNodes.map((node) => ({ ...node })));
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 200, stackSchedules: 100, batchSchedules: 100 },
);
