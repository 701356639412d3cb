import { Redis } from 'iovalkey';
import { RollingRateLimiter } from 'rolling-window-limiter';

const valkey = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'); // a Valkey (or Redis) server
const limiter = new RollingRateLimiter({ client: valkey, namespace: 'api', interval: 1000, maxInInterval: 5 });
console.log(await limiter.limit('user-1')); // false: allowed
await valkey.quit();
