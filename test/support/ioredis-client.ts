// One redis-server for the calling describe block (see useRedis) and one
// ioredis client on it: started in a `before` hook, closed in an `after`.

import { Redis } from 'ioredis';
import { useRedis, type UsedRedis } from './redis-server.js';

export interface IORedisConnection {
  /** The client (once the `before` hook has run). */
  readonly client: Redis;
  /** The server's `redis://` URL, for more connections. */
  readonly url: string;
}

export function useIORedisClient(): IORedisConnection {
  let redis: UsedRedis | undefined;
  let client: Redis | undefined;
  before(async () => {
    redis = await useRedis();
    client = new Redis(redis.url);
  });
  after(async () => {
    await client?.quit();
    await redis?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the redis-server of this describe block has not started yet');
    return value;
  };
  return {
    get client(): Redis {
      return started(client);
    },
    get url(): string {
      return started(redis).url;
    },
  };
}
