// express-rate-limit with RollingWindowStore: limits as functions, give-backs
// tied to their own request, reads that report the count and when it next
// drops, and stores that cannot share a prefix by mistake (one round trip per
// request: round-trips.test.ts). In memory and on real Redis (ioredis, node-redis), over real HTTP.

import { expect } from 'chai';
import express, { type Express } from 'express';
import { rateLimit, type Options } from 'express-rate-limit';
import sinon from 'sinon';
import { setTimeout as delay } from 'node:timers/promises';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { get, serve, type RunningServer } from '../http-helpers.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { forEachStoreBackend } from './store-backends.js';

const namespaces = uniqueNamespaces('erl-rules');
/** Time for express-rate-limit's give-back, which runs once the response has finished. */
const GIVE_BACK_MS = 30;

forEachStoreBackend('RollingWindowStore', (backend) => {
  const servers: RunningServer[] = [];
  let clock: sinon.SinonFakeTimers | undefined;
  afterEach(async () => {
    clock?.restore();
    clock = undefined;
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  const store = (options: { maxLimit?: number } = {}): RollingWindowStore =>
    new RollingWindowStore({ ...backend.clientOption(), prefix: namespaces.next(backend.name), ...options });

  async function start(app: Express): Promise<string> {
    const server = await serve(app);
    servers.push(server);
    return server.url;
  }

  function limited(options: Partial<Options>, routes: (app: Express) => void): Express {
    const app = express();
    app.use(rateLimit({ windowMs: 60_000, standardHeaders: 'draft-8', legacyHeaders: false, ...options }));
    routes(app);
    return app;
  }

  async function statuses(url: string, count: number, wait = 0): Promise<number[]> {
    const seen = [];
    for (let i = 0; i < count; i += 1) {
      seen.push((await get(url)).status);
      if (wait > 0) await delay(wait);
    }
    return seen;
  }

  it('takes `limit` as a function of the request', async () => {
    const limit = (req: express.Request): number => (req.path === '/vip' ? 4 : 2);
    const url = await start(limited({ limit, store: store() }, (app) => app.get(['/vip', '/plain'], (_req, res) => void res.send('ok'))));
    expect(await statuses(`${url}/plain`, 3), 'limit 2').to.deep.equal([200, 200, 429]);
    expect(await statuses(`${url}/vip`, 2), 'limit 4: every hit of the key counts, the refused one too').to.deep.equal([200, 429]);
    const fresh = store();
    fresh.init({ windowMs: 60_000, limit });
    expect((await Promise.all([1, 2, 3, 4, 5].map(() => fresh.increment('k')))).map((info) => info.totalHits)).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('counts a function limit up to maxLimit + 1 and keeps no more', async () => {
    const capped = store({ maxLimit: 2 });
    capped.init({ windowMs: 60_000, limit: () => 2 });
    const hits = [];
    for (let i = 0; i < 5; i += 1) hits.push((await capped.increment('k')).totalHits);
    expect(hits).to.deep.equal([1, 2, 3, 3, 3]);
  });

  it('gives back the refused request’s own hit with skipFailedRequests (2 per minute, 10 in a row)', async () => {
    const url = await start(limited({ limit: 2, skipFailedRequests: true, store: store() }, (app) => app.get('/', (_req, res) => void res.send('ok'))));
    const seen = await statuses(url, 10, GIVE_BACK_MS);
    expect(seen.filter((status) => status === 200).length, `admitted of 10: ${seen.join(' ')}`).to.equal(2);
  });

  it('gives back the hit of the request that failed, not a later one that is still counted', async () => {
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const erl = store();
    const url = await start(
      limited({ limit: 5, skipFailedRequests: true, store: erl, keyGenerator: () => 'client' }, (app) => {
        app.get('/slow-fail', (_req, res) => void gate.then(() => res.status(500).send('failed')));
        app.get('/ok', (_req, res) => void res.send('ok'));
      }),
    );
    const failing = get(`${url}/slow-fail`);
    for (let i = 0; i < 100 && (await erl.get('client')).totalHits === 0; i += 1) await delay(10);
    clock.tick(10_000);
    expect((await get(`${url}/ok`)).status).to.equal(200);
    const okAt = Date.now();
    release();
    expect((await failing).status).to.equal(500);
    await delay(GIVE_BACK_MS);
    const left = await erl.get('client');
    expect(left?.totalHits, 'the failed request was given back').to.equal(1);
    expect(left?.resetTime?.getTime(), 'what is left is the later request: it leaves 60 s after it came').to.be.within(okAt + 59_999, okAt + 60_001);
  });

  it('reads the count and when it next changes: the oldest hit leaving while there is room; over the limit, limit + 1 and when a request is admitted again', async () => {
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
    const erl = store();
    erl.init({ windowMs: 60_000, limit: 2 });
    const start = Date.now();
    await erl.increment('k');
    clock.tick(10_000);
    const one = await erl.get('k');
    expect(one?.totalHits).to.equal(1);
    expect(one?.resetTime?.getTime(), 'when the first hit leaves').to.be.within(start + 59_999, start + 60_001);
    await erl.increment('k');
    const over = await erl.increment('k');
    expect(over.totalHits).to.equal(3);
    expect(over.resetTime?.getTime(), 'refused: until the second hit leaves... all three count, so the second newest').to.be.within(
      start + 69_999,
      start + 70_001,
    );
    const read = await erl.get('k');
    expect(read?.totalHits, 'what increment reported').to.equal(3);
    expect(read?.resetTime?.getTime(), 'what increment reported: a request is admitted again when the second hit leaves').to.be.within(
      start + 69_999,
      start + 70_001,
    );
  });

  it('forgets every key with resetAll, and releases its prefix with shutdown', async () => {
    const erl = store();
    erl.init({ windowMs: 60_000, limit: 2 });
    await erl.increment('a');
    await erl.increment('b');
    await erl.resetAll();
    expect(await erl.get('a')).to.deep.equal({ totalHits: 0, resetTime: undefined });
    expect(await erl.get('b')).to.deep.equal({ totalHits: 0, resetTime: undefined });
    await erl.shutdown();
  });
});

describe('RollingWindowStore on Redis: prefixes', function () {
  this.timeout(30_000);
  const redis = useIORedisClient();

  it('refuses a second store with the same prefix on one client, until the first shuts down', async () => {
    const first = new RollingWindowStore({ client: redis.client });
    expect(() => new RollingWindowStore({ client: redis.client }), 'two rateLimit() on one client would count each other’s hits').to.throw(
      RangeError,
      /prefix "rl:"/,
    );
    await first.shutdown();
    await new RollingWindowStore({ client: redis.client }).shutdown();
    const app = express();
    app.use('/api', rateLimit({ windowMs: 60_000, limit: 5, store: new RollingWindowStore({ client: redis.client, prefix: namespaces.next('api') }) }));
    app.use('/login', rateLimit({ windowMs: 60_000, limit: 5, store: new RollingWindowStore({ client: redis.client, prefix: namespaces.next('login') }) }));
    app.get(['/api', '/login'], (_req, res) => void res.send('ok'));
    const server = await serve(app);
    try {
      for (let i = 0; i < 6; i += 1) await get(`${server.url}/api`);
      expect((await get(`${server.url}/login`)).status, 'its own count').to.equal(200);
    } finally {
      await server.close();
    }
  });
});
