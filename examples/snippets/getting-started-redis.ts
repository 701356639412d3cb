import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const limiter = new RollingRateLimiter({
  client: redis,
  namespace: 'push', // key prefix: limiters that share a client need distinct namespaces
  interval: 60_000,
  maxInInterval: 10,
  minDifference: 3_000,
});

console.log(await limiter.limit('ada'), await limiter.limit('ada')); // false true: the second is too soon
await redis.quit();
