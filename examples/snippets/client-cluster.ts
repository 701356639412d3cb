import { Cluster } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const node = new URL(process.env.REDIS_CLUSTER_URL ?? 'redis://127.0.0.1:7000'); // any node of the cluster
const client = new Cluster([{ host: node.hostname, port: Number(node.port) }]);
// or, with node-redis: const client = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }); await client.connect();
const limiter = new RollingRateLimiter({ client, namespace: 'api', interval: 1000, maxInInterval: 5 });
console.log(await limiter.limit('user-1')); // false: allowed
await client.quit();
