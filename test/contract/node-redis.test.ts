import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { describeRedisBackend } from './redis-backend.js';

describeRedisBackend(
  {
    name: 'node-redis 4 (standalone)',
    topology: 'standalone',
    async connect({ url }) {
      const client = createClient4({ url });
      await client.connect();
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 500, stackSchedules: 200, batchSchedules: 150 },
);

describeRedisBackend(
  {
    name: 'node-redis 5 (standalone)',
    topology: 'standalone',
    async connect({ url }) {
      const client = createClient5({ url });
      await client.connect();
      return { client, close: async () => void client.destroy() };
    },
  },
  { modelSchedules: 500, stackSchedules: 200, batchSchedules: 300 },
);

describeRedisBackend(
  {
    name: 'node-redis 5 with RESP3 (standalone)',
    topology: 'standalone',
    async connect({ url }) {
      const client = createClient5({ url, RESP: 3 });
      await client.connect();
      return { client, close: async () => void client.destroy() };
    },
  },
  { modelSchedules: 300, stackSchedules: 100, batchSchedules: 100 },
);

describeRedisBackend(
  {
    name: 'node-redis 4 cluster (3 masters)',
    topology: 'cluster',
    async connect({ urls }) {
      const client = createCluster4({ rootNodes: urls.map((url) => ({ url })) });
      await client.connect();
      return { client, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 300, stackSchedules: 100, batchSchedules: 100 },
);

describeRedisBackend(
  {
    name: 'node-redis 5 cluster (3 masters)',
    topology: 'cluster',
    async connect({ urls }) {
      const client = createCluster5({ rootNodes: urls.map((url) => ({ url })) });
      await client.connect();
      return { client, close: async () => void client.destroy() };
    },
  },
  { modelSchedules: 300, stackSchedules: 100, batchSchedules: 100 },
);
