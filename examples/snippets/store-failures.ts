import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
redis.on('error', (error) => console.error(`Redis: ${error.message}`));

const rules = { namespace: 'push', interval: '1m', maxInInterval: 10 } as const;
const limiter = new RollingRateLimiter({
  ...rules,
  client: redis,
  timeout: '250ms', // default 2 s; a store that has not answered by then has failed
  // 'throw' (the default), 'allow' (fail open), 'block' (fail closed), or a fallback limiter:
  // here the same rules in this process's memory.
  onStoreError: new RollingRateLimiter(rules),
});

const info = await limiter.limitWithInfo('teacher-7');
if (info.storeFailure) {
  // Decided without Redis: log and count it, or nobody notices that the limits are local.
  console.warn(`decided by the ${info.storeFailure.policy} policy: ${info.storeFailure.error.code}`);
}
console.log(info.blocked ? 'blocked' : 'allowed');
await redis.quit();
