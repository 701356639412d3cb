import { Redis } from 'ioredis6';
import type { RedisClient } from '../../src/index.js';
import { describeRedisBackend } from './redis-backend.js';

describeRedisBackend(
  {
    name: 'ioredis 6 (standalone)',
    async connect(url) {
      const client = new Redis(url);
      return { client: client as unknown as RedisClient, close: async () => void (await client.quit()) };
    },
  },
  { modelSchedules: 500 },
);
