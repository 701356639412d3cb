// The three places the HTTP stores keep their counts, for tests that run the
// same cases on each: this process's memory, ioredis and node-redis on a real
// redis-server started for the describe block.

import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import type { RedisClient } from '../../../src/redis/adapters/client-types.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

/** One backend: its name, and its client once the `before` hook has run (undefined for memory). */
export interface StoreBackend {
  readonly name: string;
  client(): RedisClient | undefined;
  /** `{ client }` for a store's options, or `{}` in memory. */
  clientOption(): { client?: RedisClient };
}

/** Calls `body` inside one describe block per backend, with the backend's client started in a `before` hook. */
export function forEachStoreBackend(title: string, body: (backend: StoreBackend) => void): void {
  describe(`${title}, in memory`, () => body({ name: 'memory', client: () => undefined, clientOption: () => ({}) }));
  for (const name of ['ioredis', 'node-redis'] as const) {
    describe(`${title}, on ${name}`, function () {
      this.timeout(60_000);
      let redis: UsedRedis | undefined;
      let client: Redis | ReturnType<typeof createClient> | undefined;
      before(async () => {
        redis = await useRedis();
        if (name === 'ioredis') {
          client = new Redis(redis.url);
        } else {
          const nodeRedis = createClient({ url: redis.url });
          nodeRedis.on('error', () => undefined);
          await nodeRedis.connect();
          client = nodeRedis;
        }
      });
      after(async () => {
        await client?.quit();
        await redis?.stop();
      });
      const started = (): RedisClient => {
        if (client === undefined) throw new Error('the redis-server of this describe block has not started yet');
        return client;
      };
      body({ name, client: started, clientOption: () => ({ client: started() }) });
    });
  }
}
