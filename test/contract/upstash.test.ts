// @upstash/redis, Redis over HTTP, through the same contract as every other
// client: every mode, stacks, action ids, costs, dry runs, batch: true, the
// model tests and concurrent clients; and `clock: 'redis'`, which the shared
// contract leaves to each client. Its requests go to an Upstash-REST-compatible
// endpoint on loopback (test/support/upstash-rest-endpoint.ts) that forwards
// every command to a real redis-server the harness starts. Once with the
// client's defaults (automatic deserialisation, base64 responses, automatic
// pipelining), once with all three off.

import { expect } from 'chai';
import { Redis, type RedisConfigNodejs } from '@upstash/redis';
import { RateLimiterStack, RollingRateLimiter } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';
import { describeRedisBackend, type RedisBackend } from './redis-backend.js';

/** The client's options besides its URL and token. */
type ClientOptions = Omit<RedisConfigNodejs, 'url' | 'token'>;

/** @upstash/redis on an endpoint of its own in front of the target's Redis, closed with the client. */
function upstashBackend(name: string, options: ClientOptions): RedisBackend {
  return {
    name,
    topology: 'standalone',
    async connect({ url }) {
      const endpoint = await startUpstashRestEndpoint({ redisUrl: url });
      const client = new Redis({ url: endpoint.url, token: endpoint.token, enableTelemetry: false, ...options });
      return { client, close: () => endpoint.close() };
    },
  };
}

describeRedisBackend(upstashBackend('@upstash/redis (HTTP, its defaults)', {}), { modelSchedules: 300, stackSchedules: 150, batchSchedules: 200 });
describeRedisBackend(
  upstashBackend('@upstash/redis (HTTP, automaticDeserialization, base64 and automatic pipelining off)', {
    automaticDeserialization: false,
    responseEncoding: false,
    enableAutoPipelining: false,
  }),
  { modelSchedules: 300, stackSchedules: 100, batchSchedules: 200 },
);

describe("@upstash/redis with clock: 'redis'", () => {
  let redis: UsedRedis | undefined;
  let endpoint: UpstashRestEndpoint | undefined;
  let client: Redis | undefined;
  const namespaces = uniqueNamespaces('upstash-redis-clock');
  before(async function () {
    this.timeout(30_000);
    redis = await useRedis();
    endpoint = await startUpstashRestEndpoint({ redisUrl: redis.url });
    client = new Redis({ url: endpoint.url, token: endpoint.token, enableTelemetry: false });
  });
  after(async () => {
    await endpoint?.close();
    await redis?.stop();
  });
  const connected = (): Redis => {
    if (client === undefined) throw new Error('not connected');
    return client;
  };

  for (const batch of [false, true]) {
    describe(`batch: ${String(batch)}`, () => {
      it('admits exactly maxInInterval of concurrent attempts, and says how long to wait by the server’s time', async () => {
        const limiter = new RollingRateLimiter({
          client: connected(),
          namespace: namespaces.next(),
          interval: 60_000,
          maxInInterval: 7,
          clock: 'redis',
          batch,
        });
        const answers = await Promise.all(Array.from({ length: 20 }, () => limiter.limitWithInfo('user')));
        expect(answers.filter((info) => !info.blocked)).to.have.length(7);
        const blocked = answers.find((info) => info.blocked);
        expect(blocked?.millisecondsUntilAllowed).to.be.within(59_000, 60_000);
      });

      it('keeps the minimum gap, counts a cost, and dry-runs without recording', async () => {
        const gap = new RollingRateLimiter({
          client: connected(),
          namespace: namespaces.next(),
          interval: 60_000,
          maxInInterval: 10,
          minDifference: 30_000,
          clock: 'redis',
          batch,
        });
        expect(await gap.limit('user')).to.equal(false);
        expect(await gap.wouldLimit('user')).to.equal(true);
        const info = await gap.limitWithInfo('user');
        expect(info.blocked).to.equal(true);
        expect(info.millisecondsUntilAllowed).to.be.within(29_000, 30_000);

        const cost = new RollingRateLimiter({
          client: connected(),
          namespace: namespaces.next(),
          interval: 60_000,
          maxCostInInterval: 10,
          countBlocked: false,
          clock: 'redis',
          batch,
        });
        expect((await cost.limitWithInfo('user', { cost: 6 })).blocked).to.equal(false);
        expect((await cost.limitWithInfo('user', { cost: 5 })).blocked).to.equal(true);
        expect((await cost.limitWithInfo('user', { cost: 4 })).blocked).to.equal(false);
      });

      it('decides a stack on the server’s time', async () => {
        const options = { client: connected(), interval: 60_000, clock: 'redis' as const, countBlocked: false };
        const stack = new RateLimiterStack(
          [
            new RollingRateLimiter({ ...options, namespace: namespaces.next('large'), maxInInterval: 5 }),
            new RollingRateLimiter({ ...options, namespace: namespaces.next('small'), maxInInterval: 2 }),
          ],
          { batch },
        );
        const answers = await Promise.all(Array.from({ length: 6 }, () => stack.limit('user')));
        expect(answers.filter((blocked) => !blocked)).to.have.length(2);
      });
    });
  }
});
