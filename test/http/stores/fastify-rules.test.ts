// @fastify/rate-limit with rollingWindowStore under per-request rules: one
// count per key, each request judged by the `max` and `timeWindow` the plugin
// hands the store for it, whatever other rules did on the key (as the
// plugin's own stores do). Every figure runs in memory and on real Redis
// (ioredis, node-redis); requests go through `fastify.inject`, all inside one
// 60 s window unless the clock is moved.

import { expect } from 'chai';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyRateLimit, { type FastifyRateLimitOptions } from '@fastify/rate-limit';
import sinon from 'sinon';
import { rollingWindowStore } from '../../../src/http/stores/fastify-store.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend, type StoreBackend } from './store-backends.js';

const namespaces = uniqueNamespaces('fastify-rules');

async function app(backend: StoreBackend, options: FastifyRateLimitOptions, paths: readonly string[]): Promise<FastifyInstance> {
  const fastify = Fastify();
  const store = rollingWindowStore({ ...backend.clientOption(), namespace: namespaces.next(backend.name) });
  await fastify.register(fastifyRateLimit, { ...options, store });
  for (const path of paths) fastify.get(path, async () => 'ok');
  const peek = fastify.createRateLimit();
  fastify.get('/peek', { config: { rateLimit: false } }, async (request) => {
    const { isAllowed, ...result } = await peek(request, { increment: false });
    return isAllowed ? {} : result;
  });
  await fastify.ready();
  return fastify;
}

/** Sends `count` GETs to `path` (in order) and says how many were admitted. */
async function admitted(fastify: FastifyInstance, path: string, count: number, headers: Record<string, string> = {}): Promise<number> {
  let ok = 0;
  for (let i = 0; i < count; i += 1) {
    const response = await fastify.inject({ method: 'GET', url: path, headers });
    if (response.statusCode === 200) ok += 1;
    else expect(response.statusCode).to.equal(429);
  }
  return ok;
}

forEachStoreBackend('rollingWindowStore, per-request rules', (backend) => {
  let fastify: FastifyInstance | undefined;
  let clock: sinon.SinonFakeTimers | undefined;
  afterEach(async () => {
    clock?.restore();
    clock = undefined;
    await fastify?.close();
  });

  it('judges each request by its own max: a smaller rule does not trim what a larger one counts', async () => {
    const max = (request: { url: string }): number => (request.url.startsWith('/search') ? 10 : 100);
    fastify = await app(backend, { max, timeWindow: 60_000 }, ['/search', '/items']);
    let items = 0;
    for (let round = 0; round < 10; round += 1) {
      await admitted(fastify, '/search', 1);
      items += await admitted(fastify, '/items', 90);
    }
    // Every hit counts: /search is the 1st and the 92nd; /items the 2nd to 91st and the 93rd to 100th.
    expect(items, '/items admitted of 900, max 100').to.equal(98);
  });

  it('judges each request by its own window: a 1 s rule does not drop the hits a 60 s rule counts', async () => {
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    const timeWindow = (request: { url: string }): number => (request.url.startsWith('/burst') ? 1000 : 60_000);
    fastify = await app(backend, { max: 100, timeWindow }, ['/burst', '/items']);
    let items = 0;
    let bursts = 0;
    for (let round = 0; round < 10; round += 1) {
      bursts += await admitted(fastify, '/burst', 1);
      items += await admitted(fastify, '/items', 100);
      clock.tick(1100);
    }
    expect(items, '/items admitted of 1000, max 100 per 60 s: all in one window').to.equal(99);
    expect(bursts, 'each /burst counts only its last second, which holds no other hit').to.equal(10);
  });

  it('keeps the count of a key whatever the number of other rules in between (per-customer max)', async () => {
    const max = (request: { headers: Record<string, unknown> }): number => Number(request.headers['x-max']);
    const keyGenerator = (request: { headers: Record<string, unknown> }): string => String(request.headers['x-customer']);
    fastify = await app(backend, { max, timeWindow: 60_000, keyGenerator }, ['/']);
    let acme = 0;
    for (let round = 0; round < 10; round += 1) {
      acme += await admitted(fastify, '/', 5, { 'x-customer': 'acme', 'x-max': '5' });
      for (let other = 0; other < 64; other += 1) await admitted(fastify, '/', 1, { 'x-customer': `c${other}`, 'x-max': String(100 + other) });
    }
    expect(acme, 'acme admitted of 50, max 5').to.equal(5);
  });

  it("counts the key the plugin hands it: the plugin's ipv6Subnet, not a store's own", async () => {
    fastify = await app(backend, { max: 1, timeWindow: 60_000, ipv6Subnet: 64 }, ['/']);
    const status = async (remoteAddress: string): Promise<number> => (await fastify!.inject({ url: '/', remoteAddress })).statusCode;
    expect(await status('2001:db8:aa:bb01::1')).to.equal(200);
    expect(await status('2001:db8:aa:bb01::2'), 'the same /64').to.equal(429);
    expect(await status('2001:db8:aa:bb02::1'), 'another /64 of the same /56 is another client').to.equal(200);
  });

  it('reads the count and when it next changes (increment: false), at, below and over the limit', async () => {
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    fastify = await app(backend, { max: 3, timeWindow: 60_000 }, ['/']);
    const peek = async (): Promise<Record<string, unknown>> => (await fastify!.inject({ url: '/peek' })).json();
    expect(await peek(), 'no hits yet').to.include({ remaining: 3, ttl: 0, isExceeded: false });
    await admitted(fastify, '/', 1);
    clock.tick(10_000);
    await admitted(fastify, '/', 1);
    clock.tick(10_000);
    const two = await peek();
    expect(two, 'the window has room').to.include({ remaining: 1, isExceeded: false });
    expect(two.ttl, 'when the first hit leaves, 40 s from now').to.be.within(39_999, 40_001);
    expect(await admitted(fastify, '/', 2)).to.equal(1);
    const over = await peek();
    expect(over, 'a request was refused').to.include({ remaining: 0, isExceeded: true });
    // Every hit counts: the hits at 10 s, 20 s and the refused one at 20 s are the newest 3, and a request is admitted once the first of them leaves.
    expect(over.ttl, 'a request is admitted again when the hit at 10 s leaves, 50 s from now').to.be.within(49_999, 50_001);
    const refused = await fastify.inject({ url: '/' });
    // And this one: the admitted and the refused hit at 20 s and this one are the newest 3.
    expect(Number(refused.headers['retry-after']), 'a new request waits for the third newest hit to leave: 60 s').to.equal(60);
  });
});
