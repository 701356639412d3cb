// The behavioural contract under Bun (run by test/runtimes/bun.test.ts through
// run-mocha.ts, against the installed package): the in-memory store, and
// ioredis, iovalkey, node-redis 5 and Valkey GLIDE's GlideClient (its native
// core loads under Bun) on a redis-server started on loopback, each also with
// `batch: true`; fewer random schedules than on Node, the same scenarios. And
// Bun's own RedisClient, which the library refuses.

import { expect } from 'chai';
import { RollingRateLimiter, UnsupportedError, type RedisClient } from '../../../src/index.js';
import { describeActionIdContract } from '../../contract/action-ids-contract.js';
import { describeCostContract } from '../../contract/cost-contract.js';
import { describeLimiterContract } from '../../contract/limiter-contract.js';
import { describeRedisBackend } from '../../contract/redis-backend.js';
import { IOREDIS_5, IOVALKEY, NODE_REDIS_5 } from '../../contract/redis-backends.js';
import { describeStackContract } from '../../contract/stack-contract.js';
import { GLIDE_STANDALONE } from '../../support/glide-clients.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

const memory = () => (options: ConstructorParameters<typeof RollingRateLimiter>[0]) => new RollingRateLimiter(options);
describeLimiterContract('the in-memory store', memory, { countBlockedFalse: true, actionIds: true, modelSchedules: 1000 });
describeStackContract('the in-memory store', memory, { modelSchedules: 400, ownStatePerLimiter: true });
describeActionIdContract('the in-memory store', memory);
describeCostContract('the in-memory store', memory);

for (const backend of [IOREDIS_5.standalone, IOVALKEY.standalone, NODE_REDIS_5.standalone]) {
  describeRedisBackend(backend, { modelSchedules: 150, stackSchedules: 80, batchSchedules: 80 });
}
// Every scenario, fewer schedules: what is in question under Bun is GLIDE's native core, not the decisions.
describeRedisBackend(GLIDE_STANDALONE, { modelSchedules: 120, stackSchedules: 60, batchSchedules: 100 });

interface BunRedisClient {
  send(command: string, args: string[]): Promise<unknown>;
  close(): void;
}
const BunRedis = (globalThis as unknown as { Bun: { RedisClient: new (url: string) => BunRedisClient } }).Bun.RedisClient;

describe('Bun’s built-in RedisClient', () => {
  let server: UsedRedis | undefined;
  let client: BunRedisClient | undefined;
  before(async () => {
    server = await useRedis();
    client = new BunRedis(server.url);
    expect(await client.send('PING', [])).to.equal('PONG');
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('is refused at construction with an UnsupportedError that names the clients to use', () => {
    const construct = (): RollingRateLimiter =>
      new RollingRateLimiter({ client: client as unknown as RedisClient, namespace: 'bun', interval: 1000, maxInInterval: 1 });
    expect(construct).to.throw(UnsupportedError).with.property('code', 'ERR_RATE_LIMITER_UNSUPPORTED');
    expect(construct).to.throw(/RedisClient/);
    expect(construct).to.throw(/ioredis/);
    expect(construct).to.throw(/node-redis/);
  });
});
