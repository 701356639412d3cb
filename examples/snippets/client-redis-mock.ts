// For your own unit tests without a server (TypeScript: npm install -D @types/redis-mock).
import redisMock from 'redis-mock';
import { RollingRateLimiter } from 'rolling-window-limiter';

const limiter = new RollingRateLimiter({ client: redisMock.createClient(), namespace: 'api', interval: 1000, maxInInterval: 5 });
console.log(await limiter.limit('user-1')); // false: allowed
