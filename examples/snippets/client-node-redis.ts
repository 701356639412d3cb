import { createClient } from 'redis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const client = createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
await client.connect(); // node-redis 4, 5 or 6 (RESP2 or RESP3), connected by you
const limiter = new RollingRateLimiter({ client, namespace: 'api', interval: 1000, maxInInterval: 5 });
console.log(await limiter.limit('user-1')); // false: allowed
await client.quit();
