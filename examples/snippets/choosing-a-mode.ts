import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

{
  // docs:begin count-blocked
  const start = Date.now() * 1000; // microseconds since the epoch
  let now = start;
  const limiter = new RollingRateLimiter({ interval: 60_000, maxInInterval: 10, countBlocked: false, clock: () => now });
  for (let second = 0; second <= 70; second += 5) {
    now = start + second * 1_000_000;
    process.stdout.write(`${(await limiter.limit('user')) ? 'B' : 'a'}  `);
  }
  // docs:end
  console.log();
}

{
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  // docs:begin clock
  const limiter = new RollingRateLimiter({ client: redis, namespace: 'api', interval: 1_000, maxInInterval: 5, clock: 'redis' });
  // docs:end
  console.log('clock redis:', await limiter.limit('user'));
  await redis.quit();
}

{
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  // docs:begin batch
  const limiter = new RollingRateLimiter({ client: redis, namespace: 'api', interval: '1m', maxInInterval: 600, batch: true });
  // docs:end
  console.log('batch:', await limiter.limit('user'));
  await redis.quit();
}
