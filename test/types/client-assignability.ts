// Compile-time checks (run by `npm run typecheck`): every supported client's
// own type is accepted by the `client` option without a cast.
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';
import redisMock from 'redis-mock';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5, createSentinel as createSentinel5 } from 'redis5';
import { RollingRateLimiter } from '../../src/index.js';

const rules = { namespace: 'n', interval: 1000, maxInInterval: 1 } as const;

export function acceptsEveryClient(): RollingRateLimiter[] {
  return [
    new RollingRateLimiter({ ...rules, client: new Redis() }),
    new RollingRateLimiter({ ...rules, client: new Cluster([]) }),
    new RollingRateLimiter({ ...rules, client: new Redis6() }),
    new RollingRateLimiter({ ...rules, client: new Cluster6([]) }),
    new RollingRateLimiter({ ...rules, client: new Valkey() }),
    new RollingRateLimiter({ ...rules, client: new ValkeyCluster([]) }),
    new RollingRateLimiter({ ...rules, client: createClient4() }),
    new RollingRateLimiter({ ...rules, client: createCluster4({ rootNodes: [] }) }),
    new RollingRateLimiter({ ...rules, client: createClient5() }),
    new RollingRateLimiter({ ...rules, client: createCluster5({ rootNodes: [] }) }),
    new RollingRateLimiter({ ...rules, client: createSentinel5({ name: 'mymaster', sentinelRootNodes: [] }) }),
    new RollingRateLimiter({ ...rules, client: redisMock.createClient() }),
  ];
}
