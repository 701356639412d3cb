// Bun's built-in Redis client is recognized to be refused at construction
// (docs/guides/deployment.md, "Runtimes"): it always speaks RESP3 (replies shaped unlike those the
// adapters read) and has no Cluster or Sentinel mode.

/** The message of the `UnsupportedError` thrown for Bun's `RedisClient`. */
export const BUN_REDIS_CLIENT_UNSUPPORTED =
  "Bun's built-in `RedisClient` is not supported as `client`: under Bun, pass an ioredis (or iovalkey) `Redis` or `Cluster`, or a node-redis client from `createClient` or `createCluster`, which run there unchanged";

/** Whether `client` is Bun's built-in `RedisClient`; always `false` outside Bun. */
export function isBunRedisClient(client: object): boolean {
  const RedisClient = (globalThis as { Bun?: { RedisClient?: unknown } }).Bun?.RedisClient;
  return typeof RedisClient === 'function' && client instanceof RedisClient;
}
