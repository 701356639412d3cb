// The details of the express-rate-limit and @fastify/rate-limit stores, in one
// process: in memory over real HTTP (give-backs with `decrement`, reads that
// write nothing, per-route stores; their options: store-options.test.ts), and on
// node-redis with a real redis-server.

import { expect } from 'chai';
import express from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import Fastify from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import type { AddressInfo } from 'node:net';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { createClient } from 'redis5';
import { rollingWindowStore, type FastifyRateLimitCount } from '../../../src/http/stores/fastify-store.js';
import { get, serve, type RunningServer } from '../http-helpers.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

describe('RollingWindowStore (express-rate-limit), in memory', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('is an express-rate-limit Store', () => {
    const store: Store = new RollingWindowStore();
    expect(store.prefix).to.equal('rl:');
    expect(store.localKeys).to.equal(true);
  });

  it('gives back failed requests with skipFailedRequests', async () => {
    const app = express();
    const store = new RollingWindowStore({ prefix: 'fail:' });
    app.use(rateLimit({ windowMs: 60_000, limit: 2, standardHeaders: 'draft-8', legacyHeaders: false, skipFailedRequests: true, store }));
    app.get('/', (req, res) => {
      res.status(req.query.fail === '1' ? 500 : 200).send('done');
    });
    const server = await serve(app);
    servers.push(server);
    const statuses = [];
    for (const path of ['/?fail=1', '/?fail=1', '/?fail=1', '/', '/', '/']) {
      statuses.push((await get(`${server.url}${path}`)).status);
      await new Promise((resolve) => setTimeout(resolve, 20)); // the give-back runs when the response has finished
    }
    expect(statuses, 'failures are given back; then two successes fill the window').to.deep.equal([500, 500, 500, 200, 200, 429]);
  });

  it('reads without writing, and forgets a key on resetKey', async () => {
    const store = new RollingWindowStore();
    store.init({ windowMs: 60_000, limit: 3 });
    expect(await store.get('a')).to.deep.equal({ totalHits: 0, resetTime: undefined });
    const first = await store.increment('a');
    expect(first.totalHits).to.equal(1);
    expect(first.resetTime?.getTime()).to.be.within(Date.now() + 59_000, Date.now() + 60_001);
    await store.increment('a');
    expect((await store.get('a'))?.totalHits).to.equal(2);
    expect((await store.get('a'))?.totalHits, 'get wrote nothing').to.equal(2);
    await store.increment('a');
    const over = await store.increment('a');
    expect(over.totalHits, 'over the limit').to.equal(4);
    expect((await store.get('a'))?.totalHits, 'what increment reported').to.equal(4);
    await store.resetKey('a');
    expect(await store.get('a')).to.deep.equal({ totalHits: 0, resetTime: undefined });
  });
});

describe('rollingWindowStore (@fastify/rate-limit), in memory', () => {
  it('counts per route for routes with their own limits, and reads with increment: false', async () => {
    const fastify = Fastify();
    await fastify.register(fastifyRateLimit, { max: 2, timeWindow: '1 minute', store: rollingWindowStore() });
    fastify.get('/', async () => 'ok');
    fastify.get('/strict', { config: { rateLimit: { max: 1, timeWindow: 60_000 } } }, async () => 'ok');
    const peek = fastify.createRateLimit();
    fastify.get('/peek', async (request) => {
      const result = await peek(request, { increment: false });
      return { remaining: result.isAllowed ? null : result.remaining };
    });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    try {
      const url = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;
      expect((await get(`${url}/strict`)).status).to.equal(200);
      expect((await get(`${url}/strict`)).status).to.equal(429);
      expect((await get(`${url}/`)).status, 'the route has its own count').to.equal(200);
      const peeked = await get(`${url}/peek`);
      expect(peeked.headers['X-RateLimit-Remaining'], 'the peek route counted itself').to.equal('0');
      expect(JSON.parse(peeked.body)).to.deep.equal({ remaining: 0 });
      expect((await get(`${url}/`)).status).to.equal(429);
    } finally {
      await fastify.close();
    }
  });

  it('refuses exponentialBackoff', async () => {
    const fastify = Fastify();
    let error: unknown;
    try {
      await fastify.register(fastifyRateLimit, { max: 2, timeWindow: 1000, exponentialBackoff: true, store: rollingWindowStore() });
      await fastify.ready();
    } catch (caught) {
      error = caught;
    }
    expect(String(error)).to.match(/exponentialBackoff/);
    await fastify.close();
  });
});

describe('the stores on node-redis and a real Redis', function () {
  this.timeout(30_000);
  let redis: UsedRedis | undefined;
  let client: ReturnType<typeof createClient> | undefined;
  const namespaces = uniqueNamespaces('http-store-node-redis');

  before(async () => {
    redis = await useRedis();
    client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
  });

  after(async () => {
    await client?.quit().catch(() => client?.destroy());
    await redis?.stop();
  });

  it('counts, reads and gives back with RollingWindowStore', async () => {
    if (client === undefined) throw new Error('no client');
    const store = new RollingWindowStore({ client, prefix: namespaces.next('erl') });
    expect(store.localKeys).to.equal(false);
    store.init({ windowMs: 60_000, limit: 2, skipFailedRequests: true });
    expect((await store.increment('ip')).totalHits).to.equal(1);
    expect((await store.increment('ip')).totalHits).to.equal(2);
    await store.decrement('ip');
    expect((await store.get('ip'))?.totalHits, 'the newest admitted hit was given back').to.equal(1);
    const third = await store.increment('ip');
    expect(third.totalHits).to.equal(2);
    const over = await store.increment('ip');
    expect(over.totalHits).to.equal(3);
    expect(over.resetTime?.getTime(), 'blocked until the oldest hit leaves, about a minute away').to.be.within(Date.now() + 50_000, Date.now() + 60_001);
    await store.resetKey('ip');
    expect(await store.get('ip')).to.deep.equal({ totalHits: 0, resetTime: undefined });
  });

  it('counts with the @fastify/rate-limit store, each key as the plugin hands it', async () => {
    if (client === undefined) throw new Error('no client');
    const Store = rollingWindowStore({ client, namespace: namespaces.next('fastify') });
    const store = new Store({});
    const incr = (key: string): Promise<FastifyRateLimitCount | undefined> =>
      new Promise((resolve, reject) => store.incr(key, (error, result) => (error ? reject(error) : resolve(result)), 60_000, 2));
    expect((await incr('2001:db8:aa:bb01::'))?.current).to.equal(1);
    expect((await incr('2001:db8:aa:bb01::'))?.current).to.equal(2);
    expect((await incr('2001:db8:aa:bb02::'))?.current, 'another key, though in the same /56').to.equal(1);
    const over = await incr('2001:db8:aa:bb01::');
    expect(over?.current).to.equal(3);
    expect(over?.ttl).to.be.within(55_000, 60_000);
  });
});
