import { Redis } from 'ioredis';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const teacherId = 'teacher-7';

// docs:begin stack
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';

const perMinute = new RollingRateLimiter({ client: redis, namespace: 'push:minute', interval: 60_000, maxInInterval: 10 });
const every3s = new RollingRateLimiter({ client: redis, namespace: 'push:3s', interval: 3_000, maxInInterval: 1 });
const push = new RateLimiterStack([perMinute, every3s]);

const info = await push.limitWithInfo(teacherId);
if (info.blocked) {
  const which = info.tiers.filter((tier) => tier.blocked).map((tier) => tier.namespace);
  console.log(`blocked by ${which.join(', ')}; retry in ${info.millisecondsUntilAllowed} ms`);
} else {
  await sendPushNotification(teacherId);
}
// docs:end

async function sendPushNotification(id: string): Promise<void> {
  console.log(`pushed to ${id}`);
}

{
  // docs:begin count-blocked
  // The daily quota counts only actions that happened; the per-second tier still stops hammering.
  const perSecond = new RollingRateLimiter({ client: redis, namespace: 'api:second', interval: 1_000, maxInInterval: 5 });
  const perDay = new RollingRateLimiter({ client: redis, namespace: 'api:day', interval: 86_400_000, maxInInterval: 1_000, countBlocked: false });
  const api = new RateLimiterStack([perSecond, perDay]);
  // docs:end
  console.log('api:', await api.limit(teacherId));
}

{
  // docs:begin fallback
  const local = new RateLimiterStack([
    new RollingRateLimiter({ namespace: 'push:minute', interval: 60_000, maxInInterval: 10 }),
    new RollingRateLimiter({ namespace: 'push:3s', interval: 3_000, maxInInterval: 1 }),
  ]);
  const push = new RateLimiterStack([perMinute, every3s], { onStoreError: local });
  // docs:end
  console.log('push again:', await push.limit(teacherId));
}

await redis.quit();
