// One Redis round trip per decision, for both stores, on ioredis and on
// node-redis: a request is one call of the hit-log script (its count and its
// reset come from that one answer, with no second read), and so is a read.
// Redis counts what it serves (INFO commandstats), so no client is wrapped.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { rollingWindowStore, type FastifyRateLimitCount, type RollingWindowFastifyStore } from '../../../src/http/stores/fastify-store.js';
import type { RedisClient } from '../../../src/redis/adapters/client-types.js';
import { commandsDuring } from '../../support/command-stats.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

const namespaces = uniqueNamespaces('round-trips');
const REQUESTS = 7;

/** Calls the Fastify store's `incr` (or `read`) as the plugin does, with a 60 s window and `max` 5. */
function fastifyCall(store: RollingWindowFastifyStore, method: 'incr' | 'read', key: string): Promise<FastifyRateLimitCount> {
  return new Promise((resolve, reject) =>
    store[method](key, (error, result) => (error || result === undefined ? reject(error ?? new Error('no result')) : resolve(result)), 60_000, 5),
  );
}

describe('the HTTP stores on Redis: one round trip per decision', function () {
  this.timeout(30_000);
  let server: UsedRedis | undefined;
  let ioredis: Redis | undefined;
  let nodeRedis: ReturnType<typeof createClient> | undefined;

  before(async () => {
    server = await useRedis();
    ioredis = new Redis(server.url);
    nodeRedis = createClient({ url: server.url });
    nodeRedis.on('error', () => undefined);
    await nodeRedis.connect();
  });

  after(async () => {
    await nodeRedis?.quit();
    await ioredis?.quit();
    await server?.stop();
  });

  const started = <T>(client: T | undefined): T => {
    if (client === undefined) throw new Error('the redis-server of this describe block has not started yet');
    return client;
  };
  const clients: ReadonlyArray<readonly [string, () => RedisClient]> = [
    ['ioredis', () => started(ioredis)],
    ['node-redis', () => started(nodeRedis)],
  ];

  for (const [name, client] of clients) {
    it(`RollingWindowStore on ${name}: one script call per increment and per get, over the limit too`, async () => {
      const store = new RollingWindowStore({ client: client(), prefix: namespaces.next('erl') });
      store.init({ windowMs: 60_000, limit: 5 });
      await store.increment('warm-up'); // loads the script
      let last: Awaited<ReturnType<RollingWindowStore['increment']>> | undefined;
      const calls = await commandsDuring(started(ioredis), async () => {
        for (let i = 0; i < REQUESTS; i += 1) last = await store.increment('k');
        await store.get('k');
      });
      expect(calls.evalsha + calls.eval + calls.multi, JSON.stringify(calls)).to.equal(REQUESTS + 1);
      expect(last?.totalHits, 'over the limit, and its reset came with that one answer').to.equal(6);
      expect(last?.resetTime).to.be.instanceOf(Date);
      await store.shutdown();
    });

    it(`rollingWindowStore (Fastify) on ${name}: one script call per incr and per read, over the limit too`, async () => {
      const Store = rollingWindowStore({ client: client(), namespace: namespaces.next('fastify') });
      const store = new Store({});
      await fastifyCall(store, 'incr', 'warm-up');
      let last: FastifyRateLimitCount | undefined;
      const calls = await commandsDuring(started(ioredis), async () => {
        for (let i = 0; i < REQUESTS; i += 1) last = await fastifyCall(store, 'incr', 'k');
        await fastifyCall(store, 'read', 'k');
      });
      expect(calls.evalsha + calls.eval + calls.multi, JSON.stringify(calls)).to.equal(REQUESTS + 1);
      expect(last?.current, 'over the limit, and its ttl came with that one answer').to.equal(6);
      expect(last?.ttl).to.be.within(59_000, 60_000);
    });
  }
});
