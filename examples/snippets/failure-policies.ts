import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const userId = 'user-1';
const logger = { warn: (fields: object, message: string) => console.warn(message, fields) };

{
  // docs:begin timeout
  const limiter = new RollingRateLimiter({ client: redis, namespace: 'api', interval: 1_000, maxInInterval: 5, timeout: 250 });
  // docs:end
  console.log(await limiter.limit(userId));
}

{
  // docs:begin fallback
  const local = new RollingRateLimiter({ namespace: 'push', interval: 60_000, maxInInterval: 10 });
  const limiter = new RollingRateLimiter({
    client: redis,
    namespace: 'push',
    interval: 60_000,
    maxInInterval: 10,
    timeout: 250,
    onStoreError: local, // decides while Redis cannot
  });

  const info = await limiter.limitWithInfo(userId);
  if (info.storeFailure) {
    logger.warn({ policy: info.storeFailure.policy, code: info.storeFailure.error.code }, 'rate limit decided without Redis');
  }
  // docs:end
  console.log(info.blocked);
}

await redis.quit();
