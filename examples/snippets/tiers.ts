import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

// 5 a second AND 100 a minute AND 1,000 a day: allowed only if every tier allows it.
const api = new RateLimiterStack([
  new RollingRateLimiter({ client: redis, namespace: 'api:second', interval: '1s', maxInInterval: 5 }),
  new RollingRateLimiter({ client: redis, namespace: 'api:minute', interval: '1m', maxInInterval: 100 }),
  new RollingRateLimiter({ client: redis, namespace: 'api:day', interval: '1d', maxInInterval: 1_000 }),
]);

for (let call = 1; call <= 6; call++) {
  const info = await api.limitWithInfo('customer-42');
  const by = info.tiers.filter((tier) => tier.blocked).map((tier) => tier.namespace);
  console.log(info.blocked ? `call ${call}: blocked by ${by.join(', ')}` : `call ${call}: allowed, ${info.actionsRemaining} left`);
}
await redis.quit();
