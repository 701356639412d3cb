import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'); // ioredis 5 or 6, `Redis` or `Cluster`
const limiter = new RollingRateLimiter({ client: redis, namespace: 'api', interval: 1000, maxInInterval: 5 });
console.log(await limiter.limit('user-1')); // false: allowed
await redis.quit();
