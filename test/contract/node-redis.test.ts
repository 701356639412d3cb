import { createClient as createClient4 } from 'redis4';
import { createClient as createClient5 } from 'redis5';
import type { RedisClient } from '../../src/index.js';
import { describeRedisBackend } from './redis-backend.js';

describeRedisBackend(
  {
    name: 'node-redis 4 (standalone)',
    async connect(url) {
      const client = createClient4({ url });
      await client.connect();
      return { client: client as unknown as RedisClient, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 500 },
);

describeRedisBackend(
  {
    name: 'node-redis 5 (standalone)',
    async connect(url) {
      const client = createClient5({ url });
      await client.connect();
      return { client: client as unknown as RedisClient, close: async () => void client.destroy() };
    },
  },
  { modelSchedules: 500 },
);

describeRedisBackend(
  {
    name: 'node-redis 5 with RESP3 (standalone)',
    async connect(url) {
      const client = createClient5({ url, RESP: 3 });
      await client.connect();
      return { client: client as unknown as RedisClient, close: async () => void client.destroy() };
    },
  },
  { modelSchedules: 300 },
);
