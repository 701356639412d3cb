// What a peek (@fastify/rate-limit's `{ increment: false }`) of rollingWindowStore
// says: over the limit, its `ttl` is the wait until the store admits a request
// again (every hit counts, refused ones too), so a client that retries after it
// is admitted, and one that retries a moment sooner is refused; with room in
// the window, the wait until the oldest hit leaves. On an injected clock (the
// store's `clock` option), nothing sleeps; in memory and on real Redis
// (ioredis, node-redis), through `fastify.inject`.

import { expect } from 'chai';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import { rollingWindowStore } from '../../../src/http/stores/fastify-store.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { TestClock } from '../../support/test-clock.js';
import { forEachStoreBackend, type StoreBackend } from './store-backends.js';

const namespaces = uniqueNamespaces('fastify-peek');

/** What the peek route answers: the plugin's result for a read. */
interface Peeked {
  readonly remaining: number;
  readonly ttl: number;
  readonly isExceeded: boolean;
}

/** `GET /` counts; `GET /peek` reads without counting, as the plugin's `createRateLimit()` does with `{ increment: false }`. */
async function app(backend: StoreBackend, clock: TestClock, max: number, timeWindow: number): Promise<FastifyInstance> {
  const fastify = Fastify();
  const store = rollingWindowStore({ ...backend.clientOption(), namespace: namespaces.next(backend.name), clock: clock.read });
  await fastify.register(fastifyRateLimit, { global: false, max, timeWindow, store });
  const limit = fastify.createRateLimit();
  fastify.get('/', async (request, reply) => {
    const result = await limit(request);
    if (!result.isAllowed && result.isExceeded) return reply.code(429).header('retry-after', result.ttlInSeconds).send({ ttl: result.ttl });
    return { ttl: result.isAllowed ? undefined : result.ttl };
  });
  fastify.get('/peek', async (request) => {
    const result = await limit(request, { increment: false });
    return result.isAllowed ? {} : { remaining: result.remaining, ttl: result.ttl, isExceeded: result.isExceeded };
  });
  await fastify.ready();
  return fastify;
}

forEachStoreBackend("rollingWindowStore, a peek's ttl", (backend) => {
  let fastify: FastifyInstance | undefined;
  let clock: TestClock;
  beforeEach(() => {
    clock = new TestClock();
  });
  afterEach(async () => {
    await fastify?.close();
    fastify = undefined;
  });

  const status = async (remoteAddress: string): Promise<number> => (await fastify!.inject({ url: '/', remoteAddress })).statusCode;
  const peek = async (remoteAddress: string): Promise<Peeked> => (await fastify!.inject({ url: '/peek', remoteAddress })).json<Peeked>();

  it('over the limit: the wait until a request is admitted again (1 per second, hits at 0 and 100 ms, peek at 200 ms: 900 ms)', async () => {
    fastify = await app(backend, clock, 1, 1_000);
    const start = clock.now;
    for (const client of ['203.0.113.1', '203.0.113.2']) {
      clock.now = start;
      expect(await status(client)).to.equal(200);
      clock.advanceMs(100);
      expect(await status(client), 'refused, and counted').to.equal(429);
      clock.advanceMs(100);
      expect(await peek(client)).to.deep.equal({ remaining: 0, ttl: 900, isExceeded: true });
    }
    // The second client retries a microsecond before the ttl has passed: refused (and, counted, it pushes its own wait further).
    clock.now = start + 1_100_000 - 1;
    expect(await status('203.0.113.2'), 'at 1,099.999 ms').to.equal(429);
    // The first at the ttl: the refused hit at 100 ms has just left, and it is admitted.
    clock.now = start + 1_100_000;
    expect(await status('203.0.113.1'), 'at 1,100 ms').to.equal(200);
  });

  it('says what the refusing request said: its wait is the same as the peek right after it', async () => {
    fastify = await app(backend, clock, 3, 60_000);
    const client = '203.0.113.3';
    for (const seconds of [0, 10, 20]) {
      clock.now = new TestClock().now + seconds * 1_000_000;
      expect(await status(client)).to.equal(200);
    }
    expect(await peek(client), 'full but not over: the oldest hit (at 0 s) leaving admits the next, at 60 s').to.deep.equal({
      remaining: 0,
      ttl: 40_000,
      isExceeded: false,
    });
    const refused = await fastify.inject({ url: '/', remoteAddress: client });
    expect(refused.statusCode).to.equal(429);
    // Hits at 0, 10, 20 and 20 s (refused): a request fits once fewer than 3 are in the window, when the one at 10 s leaves.
    expect(refused.json<{ ttl: number }>().ttl).to.equal(50_000);
    expect(refused.headers['retry-after']).to.equal('50');
    expect(await peek(client)).to.deep.equal({ remaining: 0, ttl: 50_000, isExceeded: true });
    clock.advanceMs(50_000);
    expect(await status(client), 'at 70 s').to.equal(200);
  });

  it('with room in the window: the wait until the oldest hit leaves, which drops the count', async () => {
    fastify = await app(backend, clock, 3, 60_000);
    const client = '203.0.113.4';
    expect(await peek(client), 'no hits').to.deep.equal({ remaining: 3, ttl: 0, isExceeded: false });
    expect(await status(client)).to.equal(200);
    clock.advanceMs(15_000);
    expect(await status(client)).to.equal(200);
    clock.advanceMs(5_000);
    expect(await peek(client)).to.deep.equal({ remaining: 1, ttl: 40_000, isExceeded: false });
  });
});
