// Run by test/runtimes/bun.test.ts under Bun, from src/ (the function is not
// exported): isBunRedisClient on Bun's real RedisClient and on the clients the
// library serves. Prints one JSON line; constructs no connection (nothing is
// sent; every client is closed at once).
import { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis5';
import { isBunRedisClient } from '../../../src/redis/adapters/bun-client.js';

const BunRedis = (globalThis as unknown as { Bun: { RedisClient: new (url: string) => { close(): void } } }).Bun.RedisClient;
const bunClient = new BunRedis('redis://127.0.0.1:1');
const ioredis = new Redis({ lazyConnect: true });
const valkey = new Valkey({ lazyConnect: true });
console.log(
  JSON.stringify({
    bun: isBunRedisClient(bunClient),
    ioredis: isBunRedisClient(ioredis),
    iovalkey: isBunRedisClient(valkey),
    nodeRedis: isBunRedisClient(createClient()),
    object: isBunRedisClient({}),
  }),
);
bunClient.close();
ioredis.disconnect();
valkey.disconnect();
