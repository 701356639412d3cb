import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../src/index.js';
import { useRedis } from '../support/redis-server.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { describeLimiterContract } from './limiter-contract.js';
import { describeStackContract } from './stack-contract.js';

describe('real Redis through ioredis', () => {
  let redis: Awaited<ReturnType<typeof useRedis>>;
  let client: Redis;
  before(async () => {
    redis = await useRedis();
    client = new Redis(redis.url, { lazyConnect: true });
    await client.connect();
  });
  after(async () => {
    await client?.quit();
    await redis?.stop();
  });

  const namespaces = uniqueNamespaces('contract');
  describeLimiterContract(
    'ioredis (standalone)',
    () => (options) => new RollingRateLimiter({ ...options, client, namespace: namespaces.next(options.namespace) }),
    { countBlockedFalse: true, modelSchedules: 1000 },
  );
  describeStackContract('ioredis (standalone)', () => (options) => new RollingRateLimiter({ ...options, client, namespace: namespaces.next(options.namespace) }), { modelSchedules: 500, foreignLimiter: (options) => new RollingRateLimiter(options) });
});
