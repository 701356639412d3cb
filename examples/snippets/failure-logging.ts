import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const userId = 'user-1';
const logger = { warn: (fields: object, message: string) => console.warn(message, fields) }; // pino, winston...
const metrics = { increment: (name: string) => console.warn(`+1 ${name}`) }; // StatsD, prom-client...

// docs:begin
const local = new RollingRateLimiter({ namespace: 'push', interval: 60_000, maxInInterval: 10 });
const limiter = new RollingRateLimiter({ client: redis, namespace: 'push', interval: 60_000, maxInInterval: 10, timeout: 250, onStoreError: local });

const info = await limiter.limitWithInfo(userId);
if (info.storeFailure) {
  logger.warn({ policy: info.storeFailure.policy, code: info.storeFailure.error.code, err: info.storeFailure.error }, 'rate limit decided without Redis');
  metrics.increment('rate_limiter.store_failure');
}
// docs:end
console.log(info.blocked ? 'blocked' : 'allowed');
await redis.quit();
