// express-rate-limit's own middleware tests that use a store, adapted (our own
// code, after upstream's test/library/middleware-test.ts and headers-test.ts)
// with RollingWindowStore in place of its MemoryStore: the same requests and
// the same expected answers, in memory and on real Redis. Where the rolling
// window must answer differently, the case says so (docs/http.md lists it).

import { expect } from 'chai';
import express, { type Express } from 'express';
import { rateLimit, type Options } from 'express-rate-limit';
import { setTimeout as delay } from 'node:timers/promises';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { get, serve, type RunningServer } from '../http-helpers.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend } from '../stores/store-backends.js';

const namespaces = uniqueNamespaces('erl-host');
const SETTLE_MS = 30;

forEachStoreBackend('express-rate-limit middleware cases with RollingWindowStore', (backend) => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function app(options: Partial<Options>, routes?: (app: Express) => void): Promise<string> {
    const store = new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) });
    const instance = express();
    instance.use(rateLimit({ windowMs: 60_000, limit: 2, legacyHeaders: true, ...options, store }));
    if (routes) routes(instance);
    else instance.all('/', (_req, res) => void res.send('Hi there!'));
    const server = await serve(instance);
    servers.push(server);
    return server.url;
  }

  const statuses = async (url: string, count: number): Promise<number[]> => {
    const seen = [];
    for (let i = 0; i < count; i += 1) {
      seen.push((await get(url)).status);
      await delay(SETTLE_MS);
    }
    return seen;
  };

  it('lets the first request through', async () => {
    expect((await get(await app({}))).status).to.equal(200);
  });

  it('refuses additional requests once the limit is reached, with the default 429 and message', async () => {
    const url = await app({});
    expect(await statuses(url, 2)).to.deep.equal([200, 200]);
    const refused = await get(url);
    expect(refused.status).to.equal(429);
    expect(refused.body).to.equal('Too many requests, please try again later.');
  });

  it('(eventually) admits a blocked client again', async () => {
    const url = await app({ windowMs: 300, limit: 1 });
    expect(await statuses(url, 2)).to.deep.equal([200, 429]);
    await delay(400);
    expect((await get(url)).status).to.equal(200);
  });

  it('uses a custom status code and message', async () => {
    const url = await app({ limit: 1, statusCode: 420, message: 'Enhance your calm' });
    await get(url);
    const refused = await get(url);
    expect([refused.status, refused.body]).to.deep.equal([420, 'Enhance your calm']);
  });

  it('calls the handler when a request is refused', async () => {
    let called = 0;
    const url = await app({ limit: 1, handler: (_req, res) => void ((called += 1), res.status(429).end()) });
    await statuses(url, 2);
    expect(called).to.equal(1);
  });

  it('sets the legacy and draft-7 headers', async () => {
    const url = await app({ limit: 5, standardHeaders: 'draft-7' });
    const response = await fetch(url);
    expect(response.headers.get('x-ratelimit-limit')).to.equal('5');
    expect(response.headers.get('x-ratelimit-remaining')).to.equal('4');
    // As with express-rate-limit's MemoryStore: a fresh hit of a 60 s window resets in 60 s (the wait is rounded up once).
    expect(response.headers.get('ratelimit')).to.equal('limit=5, remaining=4, reset=60');
  });

  it('sets the draft-6 headers: a fresh hit of a 60 s window resets in 60 s', async () => {
    const response = await fetch(await app({ limit: 5, standardHeaders: 'draft-6', legacyHeaders: false }));
    expect(['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((name) => response.headers.get(name))).to.deep.equal([
      '5;w=60',
      '5',
      '4',
      '60',
    ]);
  });

  it('sets the legacy x-ratelimit-reset to the reset moment in epoch seconds', async () => {
    const expected = Math.ceil((Date.now() + 60_000) / 1000);
    const response = await fetch(await app({ limit: 5 }));
    expect(Number(response.headers.get('x-ratelimit-reset'))).to.be.within(expected - 1, expected + 1);
  });

  it('sets the draft-8 headers, with a quota name of its own too: a 2 h window resets in 7200 s', async () => {
    for (const identifier of [undefined, 'keep-kalm']) {
      const url = await app({
        windowMs: 7_200_000,
        limit: 5,
        standardHeaders: 'draft-8',
        legacyHeaders: false,
        keyGenerator: () => 'foo',
        ...(identifier ? { identifier } : {}),
      });
      const response = await fetch(url);
      const name = identifier ?? '5-in-2hrs';
      expect([response.headers.get('ratelimit-policy'), response.headers.get('ratelimit')]).to.deep.equal([
        `"${name}"; q=5; w=7200; pk=:MmMyNmI0NmI2OGZm:`,
        `"${name}"; r=4; t=7200`,
      ]);
    }
  });

  it('sets one draft-8 header per limiter: 5 s, 1 min, 1 h, 1 day and 2 days reset in their whole windows', async () => {
    const windows = [5_000, 60_000, 3_600_000, 86_400_000, 172_800_000];
    const instance = express();
    windows.forEach((windowMs, i) => {
      const store = new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) });
      instance.use(rateLimit({ windowMs, limit: i === 0 ? 1 : i + 4, standardHeaders: 'draft-8', legacyHeaders: false, keyGenerator: () => 'foo', store }));
    });
    instance.get('/', (_req, res) => void res.send('Hi there!'));
    const server = await serve(instance);
    servers.push(server);
    const response = await fetch(server.url);
    expect(response.headers.get('ratelimit')).to.equal(
      '"1-in-5sec"; r=0; t=5, "5-in-1min"; r=4; t=60, "6-in-1hr"; r=5; t=3600, "7-in-1day"; r=6; t=86400, "8-in-2days"; r=7; t=172800',
    );
  });

  it('sets retry-after once the limit is reached: 60 for a 60 s window', async () => {
    const url = await app({ limit: 1 });
    expect((await get(url)).status).to.equal(200);
    const refused = await fetch(url);
    expect([refused.status, refused.headers.get('retry-after')]).to.deep.equal([429, '60']);
  });

  it('takes limit (max) as a function', async () => {
    const url = await app({ limit: () => 3 });
    expect(await statuses(url, 4)).to.deep.equal([200, 200, 200, 429]);
  });

  it('gives back failed requests with skipFailedRequests, and not successful ones', async () => {
    const url = await app({ skipFailedRequests: true }, (instance) => {
      instance.get('/fail', (_req, res) => void res.status(500).send('no'));
      instance.get('/', (_req, res) => void res.send('ok'));
    });
    expect(await statuses(`${url}/fail`, 3)).to.deep.equal([500, 500, 500]);
    expect(await statuses(url, 3)).to.deep.equal([200, 200, 429]);
  });

  it('gives back successful requests with skipSuccessfulRequests, and not failed ones', async () => {
    const url = await app({ skipSuccessfulRequests: true }, (instance) => {
      instance.get('/fail', (_req, res) => void res.status(400).send('no'));
      instance.get('/', (_req, res) => void res.send('ok'));
    });
    expect(await statuses(url, 3)).to.deep.equal([200, 200, 200]);
    expect(await statuses(`${url}/fail`, 3)).to.deep.equal([400, 400, 429]);
  });

  it('gives back a request whose response was closed before it ended (skipFailedRequests)', async () => {
    const url = await app({ limit: 1, skipFailedRequests: true }, (instance) => {
      instance.get('/hang', (req) => void req.socket.destroy());
      instance.get('/', (_req, res) => void res.send('ok'));
    });
    await get(`${url}/hang`).catch(() => undefined);
    await delay(SETTLE_MS);
    expect((await get(url)).status, 'the closed one was given back').to.equal(200);
  });

  it('resets one key (resetKey), and reads it (getKey)', async () => {
    const store = new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name) });
    const limiter = rateLimit({ windowMs: 60_000, limit: 1, store, keyGenerator: () => 'k' });
    const instance = express();
    instance.use(limiter);
    instance.get('/', (_req, res) => void res.send('ok'));
    const server = await serve(instance);
    servers.push(server);
    expect(await statuses(server.url, 2)).to.deep.equal([200, 429]);
    expect((await limiter.getKey('k'))?.totalHits).to.equal(2);
    await store.resetKey('k'); // limiter.resetKey is typed as returning nothing
    // Its MemoryStore answers undefined for a key it no longer holds; this store, a zero count (docs/http.md).
    expect(await limiter.getKey('k')).to.deep.equal({ totalHits: 0, resetTime: undefined });
    expect((await get(server.url)).status).to.equal(200);
  });
});
