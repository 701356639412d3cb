// The behavioural contract under Deno (run by test/runtimes/deno.test.ts through
// run-mocha.ts, against the installed package): the in-memory store; ioredis,
// iovalkey and node-redis 5 on a redis-server started on loopback, each also
// with `batch: true`; and @upstash/redis through the Upstash-REST-compatible
// test endpoint (Deno's node:http serving it, Deno's fetch calling it). Fewer
// random schedules than on Node, the same scenarios.

import { Redis as UpstashRedis } from '@upstash/redis';
import { RollingRateLimiter } from '../../../src/index.js';
import { describeActionIdContract } from '../../contract/action-ids-contract.js';
import { describeCostContract } from '../../contract/cost-contract.js';
import { describeLimiterContract } from '../../contract/limiter-contract.js';
import { describeRedisBackend } from '../../contract/redis-backend.js';
import { IOREDIS_5, IOVALKEY, NODE_REDIS_5 } from '../../contract/redis-backends.js';
import { describeStackContract } from '../../contract/stack-contract.js';
import { startUpstashRestEndpoint } from '../../support/upstash-rest-endpoint.js';

const memory = () => (options: ConstructorParameters<typeof RollingRateLimiter>[0]) => new RollingRateLimiter(options);
describeLimiterContract('the in-memory store', memory, { countBlockedFalse: true, actionIds: true, modelSchedules: 1000 });
describeStackContract('the in-memory store', memory, { modelSchedules: 400, ownStatePerLimiter: true });
describeActionIdContract('the in-memory store', memory);
describeCostContract('the in-memory store', memory);

for (const backend of [IOREDIS_5.standalone, IOVALKEY.standalone, NODE_REDIS_5.standalone]) {
  describeRedisBackend(backend, { modelSchedules: 150, stackSchedules: 80, batchSchedules: 80 });
}
describeRedisBackend(
  {
    name: '@upstash/redis (HTTP)',
    topology: 'standalone',
    async connect({ url }) {
      const endpoint = await startUpstashRestEndpoint({ redisUrl: url });
      return { client: new UpstashRedis({ url: endpoint.url, token: endpoint.token, enableTelemetry: false }), close: () => endpoint.close() };
    },
  },
  { modelSchedules: 150, stackSchedules: 80, batchSchedules: 80 },
);
