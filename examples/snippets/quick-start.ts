import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
// Without a listener, ioredis reports every failed reconnection as an unhandled error.
redis.on('error', (error) => console.error(`Redis: ${error.message}`));

const limiter = new RollingRateLimiter({
  client: redis, // omit for an in-process memory store
  namespace: 'push', // key prefix: one per limiter on a shared client
  interval: '1m', // at most 10 per minute...
  maxInInterval: 10,
  minDifference: '3s', // ...and at least 3 s apart
});

for (const userId of ['ada', 'ada', 'grace']) {
  const blocked = await limiter.limit(userId); // true = blocked
  console.log(blocked ? `${userId}: blocked, too soon after the last one` : `${userId}: sent`); // send it here
}
await redis.quit(); // the open connection would keep the process running
