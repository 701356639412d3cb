import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const perSecond = new RollingRateLimiter({ client: redis, namespace: 'route:second', interval: '1s', maxInInterval: 10 });
const perMinute = new RollingRateLimiter({ client: redis, namespace: 'route:minute', interval: '1m', maxInInterval: 100 });

// docs:begin
const api = new RollingRateLimiter({ client: redis, namespace: 'api', interval: '1m', maxInInterval: 600, batch: true });
const perRoute = new RateLimiterStack([perSecond, perMinute], { batch: true });
// docs:end

// Asked in the same turn of the event loop: one script call for all of them.
const answers = await Promise.all([...Array(5).keys()].map((n) => (n % 2 === 0 ? api.limit(`user-${n}`) : perRoute.limit(`user-${n}`))));
console.log(answers.join(' '));
await redis.quit();
