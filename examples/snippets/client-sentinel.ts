import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const sentinel = new URL(process.env.REDIS_SENTINEL_URL ?? 'redis://127.0.0.1:26379');
const client = new Redis({ sentinels: [{ host: sentinel.hostname, port: Number(sentinel.port) }], name: 'mymaster' });
// or: const client = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] }); await client.connect();
const limiter = new RollingRateLimiter({ client, namespace: 'api', interval: 1000, maxInInterval: 5 });
console.log(await limiter.limit('user-1')); // false: allowed
await client.quit();
