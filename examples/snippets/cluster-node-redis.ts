import { createCluster } from 'redis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const client = createCluster({ rootNodes: [{ url: process.env.REDIS_CLUSTER_URL ?? 'redis://127.0.0.1:7000' }] });
await client.connect(); // node-redis clients are connected by you
const limiter = new RollingRateLimiter({ client, namespace: 'api', interval: 1_000, maxInInterval: 5 });
console.log(await limiter.limit('user-1')); // false: allowed
await client.close();
