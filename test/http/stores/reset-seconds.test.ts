// The reset both stores announce, in the whole seconds their host libraries
// put in the headers, in memory and on a real Redis (ioredis, node-redis).
// express-rate-limit takes a moment (`resetTime`) and rounds the time from its
// own `Date.now()` up to whole seconds; @fastify/rate-limit takes a wait
// (`ttl`) and rounds it up. Either way a 60 s window must read 60, never 61:
// the wait is rounded up once, to whole seconds, and not a millisecond first.

import { expect } from 'chai';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { rollingWindowStore } from '../../../src/http/stores/fastify-store.js';
import { get, serve, type RunningServer } from '../http-helpers.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend } from './store-backends.js';

const namespaces = uniqueNamespaces('reset-seconds');
/** Requests per case: a hit lands inside its millisecond (not on its start) nearly every time, so one of 20 reading one second long is near certain. */
const REQUESTS = 20;

/** express-rate-limit's own reading of a resetTime (its getResetSeconds): whole seconds from its Date.now(), rounded up. */
function secondsAsExpressRateLimitReads(resetTime: Date | undefined): number | undefined {
  return resetTime === undefined ? undefined : Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
}

forEachStoreBackend('the reset in whole seconds', (backend) => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  it('RollingWindowStore: a fresh hit of a 60 s window resets in 60 s, and of a 7200 s window in 7200 s', async () => {
    for (const windowMs of [60_000, 7_200_000]) {
      const store = new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) });
      store.init({ windowMs, limit: 5 });
      const read: (number | undefined)[] = [];
      for (let i = 0; i < REQUESTS; i += 1) read.push(secondsAsExpressRateLimitReads((await store.increment(`fresh-${i}`)).resetTime));
      expect(read).to.deep.equal(Array.from({ length: REQUESTS }, () => windowMs / 1000));
    }
  });

  it('express-rate-limit over HTTP: t, RateLimit-Reset and Retry-After read 60 for a 60 s window', async () => {
    const app = express();
    let next = 0;
    for (const standardHeaders of ['draft-8', 'draft-6'] as const) {
      const store = new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) });
      app.use(`/${standardHeaders}`, rateLimit({ windowMs: 60_000, limit: 1, standardHeaders, legacyHeaders: false, keyGenerator: (req) => req.url, store }));
    }
    app.use((_req, res) => void res.send('ok'));
    const server = await serve(app);
    servers.push(server);
    const seen: string[] = [];
    for (let i = 0; i < REQUESTS; i += 1) {
      next += 1;
      const eight = `${server.url}/draft-8/?key=${next}`;
      const admitted = await get(eight);
      const refused = await get(eight); // within the same second: the first hit leaves in (59 s, 60 s]
      const six = await fetch(`${server.url}/draft-6/?key=${next}`);
      await six.arrayBuffer();
      seen.push(
        `${admitted.status} t=${/t=(\d+)/.exec(admitted.headers.RateLimit ?? '')?.[1]}`,
        `${refused.status} t=${/t=(\d+)/.exec(refused.headers.RateLimit ?? '')?.[1]} Retry-After: ${refused.headers['Retry-After']}`,
        `${six.status} RateLimit-Reset: ${six.headers.get('ratelimit-reset')}`,
      );
    }
    expect(seen).to.deep.equal(Array.from({ length: REQUESTS }, () => ['200 t=60', '429 t=60 Retry-After: 60', '200 RateLimit-Reset: 60']).flat());
  });

  it('rollingWindowStore (@fastify/rate-limit): x-ratelimit-reset and retry-after read 60 for a 60 s window', async () => {
    const fastify = Fastify();
    try {
      await fastify.register(fastifyRateLimit, {
        max: 1,
        timeWindow: 60_000,
        keyGenerator: (request) => String((request.query as { key: string }).key),
        store: rollingWindowStore({ ...backend.clientOption(), namespace: namespaces.next(backend.name) }),
      });
      fastify.get('/', async () => 'ok');
      await fastify.ready();
      const seen: string[] = [];
      for (let i = 0; i < REQUESTS; i += 1) {
        const admitted = await fastify.inject({ method: 'GET', url: `/?key=${i}` });
        const refused = await fastify.inject({ method: 'GET', url: `/?key=${i}` });
        const header = (response: typeof admitted, name: string): string => String(response.headers[name]);
        seen.push(
          `${admitted.statusCode} ${header(admitted, 'x-ratelimit-reset')}`,
          `${refused.statusCode} ${header(refused, 'x-ratelimit-reset')} ${header(refused, 'retry-after')}`,
        );
      }
      expect(seen).to.deep.equal(Array.from({ length: REQUESTS }, () => ['200 60', '429 60 60']).flat());
    } finally {
      await fastify.close();
    }
  });
});
