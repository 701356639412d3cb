// @fastify/rate-limit's own store-using tests, adapted (our own code, after
// upstream's test/global-rate-limit.test.js and route-rate-limit.test.js)
// with rollingWindowStore in place of its LocalStore and RedisStore: the same
// requests and expected answers, in memory and on real Redis. Where the
// rolling window answers differently, the case says so (docs/http.md lists it).

import { expect } from 'chai';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyRateLimit, { type FastifyRateLimitOptions } from '@fastify/rate-limit';
import { setTimeout as delay } from 'node:timers/promises';
import { rollingWindowStore } from '../../../src/http/stores/fastify-store.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend } from '../stores/store-backends.js';

const namespaces = uniqueNamespaces('fastify-host');

forEachStoreBackend('@fastify/rate-limit cases with rollingWindowStore', (backend) => {
  let fastify: FastifyInstance | undefined;
  afterEach(async () => {
    await fastify?.close();
    fastify = undefined;
  });

  async function app(options: FastifyRateLimitOptions, routes?: (instance: FastifyInstance) => void): Promise<FastifyInstance> {
    fastify = Fastify();
    await fastify.register(fastifyRateLimit, {
      ...options,
      store: rollingWindowStore({ ...backend.clientOption(), namespace: namespaces.next(backend.name) }),
    });
    if (routes) routes(fastify);
    else fastify.get('/', async () => 'hello!');
    await fastify.ready();
    return fastify;
  }

  const send = async (instance: FastifyInstance, url = '/', headers: Record<string, string> = {}) => instance.inject({ url, headers });

  it('Basic: headers, the 429 body, and admission once the window has passed', async () => {
    const instance = await app({ max: 2, timeWindow: 1000 });
    let response = await send(instance);
    expect([
      response.statusCode,
      response.headers['x-ratelimit-limit'],
      response.headers['x-ratelimit-remaining'],
      response.headers['x-ratelimit-reset'],
    ]).to.deep.equal([200, '2', '1', '1']);
    response = await send(instance);
    expect([response.statusCode, response.headers['x-ratelimit-remaining']]).to.deep.equal([200, '0']);
    response = await send(instance);
    expect(response.statusCode).to.equal(429);
    expect(response.headers['retry-after']).to.equal('1');
    expect(response.json()).to.deep.equal({ statusCode: 429, error: 'Too Many Requests', message: 'Rate limit exceeded, retry in 1 second' });
    await delay(1100);
    // Every hit counts (the refused one too), as in the plugin's stores; all three left with the window.
    expect((await send(instance)).statusCode).to.equal(200);
  });

  it('takes timeWindow as text and as a function, and max as a function', async () => {
    const instance = await app({ max: async () => 1, timeWindow: () => 60_000 });
    expect([(await send(instance)).statusCode, (await send(instance)).statusCode]).to.deep.equal([200, 429]);
    await instance.close();
    const text = await app({ max: 1, timeWindow: '2 seconds' });
    expect((await send(text)).headers['x-ratelimit-reset']).to.equal('2');
  });

  it('lets an allowList through', async () => {
    const instance = await app({ max: 1, timeWindow: 60_000, allowList: ['127.0.0.1'] });
    expect([(await send(instance)).statusCode, (await send(instance)).statusCode]).to.deep.equal([200, 200]);
  });

  it('counts by keyGenerator', async () => {
    const instance = await app({
      max: 1,
      timeWindow: 60_000,
      keyGenerator: (request: { headers: Record<string, unknown> }) => String(request.headers['x-user']),
    });
    expect((await send(instance, '/', { 'x-user': 'a' })).statusCode).to.equal(200);
    expect((await send(instance, '/', { 'x-user': 'a' })).statusCode).to.equal(429);
    expect((await send(instance, '/', { 'x-user': 'b' })).statusCode).to.equal(200);
  });

  it('calls onExceeding and onExceeded', async () => {
    const seen: string[] = [];
    const instance = await app({ max: 1, timeWindow: 60_000, onExceeding: () => void seen.push('exceeding'), onExceeded: () => void seen.push('exceeded') });
    await send(instance);
    await send(instance);
    expect(seen).to.deep.equal(['exceeding', 'exceeded']);
  });

  it('bans with ban: 0 (current reads max + 1 over the limit)', async () => {
    const instance = await app({ max: 1, timeWindow: 60_000, ban: 0 });
    await send(instance);
    expect((await send(instance)).statusCode).to.equal(403);
  });

  it('keeps a client that goes on sending blocked (continueExceeding: what every hit counting does)', async () => {
    const instance = await app({ max: 1, timeWindow: 500, continueExceeding: true });
    expect((await send(instance)).statusCode).to.equal(200);
    await delay(300);
    expect((await send(instance)).statusCode).to.equal(429);
    await delay(300);
    expect((await send(instance)).statusCode, 'the refused hit at 300 ms still counts').to.equal(429);
  });

  it('gives a route with its own config.rateLimit its own count, and skips routes with rateLimit: false', async () => {
    const instance = await app({ max: 1, timeWindow: 60_000 }, (routes) => {
      routes.get('/', async () => 'hello!');
      routes.get('/own', { config: { rateLimit: { max: 2, timeWindow: 60_000 } } }, async () => 'own');
      routes.get('/free', { config: { rateLimit: false } }, async () => 'free');
    });
    expect([(await send(instance)).statusCode, (await send(instance)).statusCode]).to.deep.equal([200, 429]);
    expect([(await send(instance, '/own')).statusCode, (await send(instance, '/own')).statusCode, (await send(instance, '/own')).statusCode]).to.deep.equal([
      200, 200, 429,
    ]);
    expect((await send(instance, '/free')).statusCode).to.equal(200);
  });

  it('refuses exponentialBackoff when the plugin makes the store', async () => {
    fastify = Fastify();
    let error: unknown;
    try {
      await fastify.register(fastifyRateLimit, { max: 1, timeWindow: 1000, exponentialBackoff: true, store: rollingWindowStore(backend.clientOption()) });
      await fastify.ready();
    } catch (caught) {
      error = caught;
    }
    expect(String(error)).to.match(/exponentialBackoff/);
  });
});
