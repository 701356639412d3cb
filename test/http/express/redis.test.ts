// The Express middleware over real HTTP with a two-tier stack on a real
// redis-server (ioredis), a budget of cost settled by the handler, and a store
// that is down, under the limiter's `onStoreError` policies.

import { expect } from 'chai';
import express, { type ErrorRequestHandler, type Express } from 'express';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, isRateLimiterError, type RateLimitInfo, type RollingRateLimiterOptions } from '../../../src/index.js';
import { rateLimit, type RateLimitOptions, type RequestRateLimit } from '../../../src/http/express/express-middleware.js';
import type { HttpRateLimiter } from '../../../src/http/policies.js';
import { downRedisClient } from '../../support/down-redis.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
import { TestClock } from '../../support/test-clock.js';
import { get, serve, type RunningServer } from '../http-helpers.js';

const namespaces = uniqueNamespaces('express');
const servers: RunningServer[] = [];

/** What the app's error handler saw. */
interface ReportedError {
  readonly rateLimiterError: boolean;
  readonly name: string;
  readonly code: string | undefined;
}

function appWith<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): Express {
  const app = express();
  app.use(rateLimit(options));
  app.get('/', async (req, res) => {
    // `x-used`: settle the request to that cost, and answer whether it was settled.
    const used = req.get('x-used');
    if (used === undefined) res.type('text/plain').send('ok');
    else res.type('text/plain').send(String(await (res.locals.rateLimit as RequestRateLimit).settle(Number(used))));
  });
  const reportErrors: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    const reported: ReportedError = {
      rateLimiterError: isRateLimiterError(error),
      name: error instanceof Error ? error.name : typeof error,
      code: isRateLimiterError(error) ? error.code : undefined,
    };
    res.status(503).json(reported);
  };
  app.use(reportErrors);
  return app;
}

async function start(app: Express): Promise<string> {
  const server = await serve(app);
  servers.push(server);
  return `${server.url}/`;
}

describe('rateLimit (Express) on Redis', function () {
  this.timeout(30_000);
  let redis: UsedRedis | undefined;
  let client: Redis | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  before(async () => {
    redis = await useRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    await client.ping();
  });

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  after(async () => {
    await client?.quit().catch(() => client?.disconnect());
    await redis?.stop();
  });

  function pushStack(): RateLimiterStack {
    if (client === undefined) throw new Error('no client');
    const perMinute = new RollingRateLimiter({ client, namespace: namespaces.next('minute'), interval: 60_000, maxInInterval: 10 });
    const every3s = new RollingRateLimiter({ client, namespace: namespaces.next('3s'), interval: 3_000, maxInInterval: 1 });
    return new RateLimiterStack([perMinute, every3s]);
  }

  it('announces both tiers and the binding one, and answers 429 with Retry-After', async () => {
    const stack = pushStack();
    const names = ['push-minute', 'push-3s'];
    const url = await start(appWith({ limiter: stack, key: (req) => req.get('x-user-id'), policyName: ({ index }) => names[index] ?? '?' }));
    cleanups.push(() => stack.clear('teacher-1'));
    const policy = '"push-minute";q=10;w=60, "push-3s";q=1;w=3';

    const first = await get(url, { 'x-user-id': 'teacher-1' });
    expect(first.status).to.equal(200);
    expect(first.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"push-3s";r=0;t=3' });

    const second = await get(url, { 'x-user-id': 'teacher-1' });
    expect(second.status).to.equal(429);
    expect(second.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"push-3s";r=0;t=3', 'Retry-After': '3' });
    expect(JSON.parse(second.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 3 });
  });

  it('names the policies after the namespaces by default, and keeps keys apart', async () => {
    const stack = pushStack();
    const [minute, threeSeconds] = stack.limiters.map((limiter) => limiter.namespace);
    const url = await start(appWith({ limiter: stack, key: (req) => req.get('x-user-id') }));
    cleanups.push(async () => void (await Promise.all([stack.clear('a'), stack.clear('b')])));

    const a = await get(url, { 'x-user-id': 'a' });
    expect(a.headers['RateLimit-Policy']).to.equal(`"${minute}";q=10;w=60, "${threeSeconds}";q=1;w=3`);
    expect(a.headers.RateLimit).to.equal(`"${threeSeconds}";r=0;t=3`);
    expect((await get(url, { 'x-user-id': 'b' })).status).to.equal(200);
    expect((await get(url, { 'x-user-id': 'a' })).status).to.equal(429);
  });

  describe('a budget of cost beside a limit of requests', () => {
    it('reserves each request, is settled down and up by the handler, and answers 429 with the exact Retry-After', async () => {
      if (client === undefined) throw new Error('no client');
      const clock = new TestClock();
      const requests = new RollingRateLimiter({
        client,
        namespace: namespaces.next('rpm'),
        interval: 60_000,
        maxInInterval: 10,
        countBlocked: false,
        clock: clock.read,
      });
      const tokens = new RollingRateLimiter({
        client,
        namespace: namespaces.next('tpm'),
        interval: 60_000,
        maxCostInInterval: 10_000,
        countBlocked: false,
        clock: clock.read,
      });
      const stack = new RateLimiterStack([requests, tokens]);
      const names = ['rpm', 'tpm'];
      const url = await start(
        appWith({
          limiter: stack,
          key: (req) => req.get('x-user-id'),
          cost: (req) => Number(req.get('x-cost') ?? 1),
          policyName: ({ index }) => names[index] ?? '?',
        }),
      );
      cleanups.push(() => stack.clear('user-1'));
      const as = (headers: Record<string, string>) => ({ 'x-user-id': 'user-1', ...headers });
      const policy = '"rpm";q=10;w=60, "tpm";q=10000;w=60';

      // Reserves 4,000 and settles to 1,000: the rest is back at once.
      const first = await get(url, as({ 'x-cost': '4000', 'x-used': '1000' }));
      expect([first.status, first.body]).to.deep.equal([200, 'true']);
      expect(first.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"tpm";r=6000' });
      clock.advanceMs(10_000);
      const second = await get(url, as({ 'x-cost': '4000' }));
      expect(second.headers.RateLimit, 'never settled: its reservation stands').to.equal('"tpm";r=5000');

      // Settled up past what is left: the next request waits for the first to leave the window.
      clock.advanceMs(10_000);
      expect((await get(url, as({ 'x-cost': '1000', 'x-used': '5000' }))).body).to.equal('true');
      clock.advanceMs(5_000);
      const blocked = await get(url, as({ 'x-cost': '1000' }));
      expect(blocked.status).to.equal(429);
      expect(blocked.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"tpm";r=0;t=35', 'Retry-After': '35' });
      clock.advanceMs(35_000);
      expect((await get(url, as({ 'x-cost': '1000' }))).headers.RateLimit).to.equal('"tpm";r=0;t=10');
      // The requests tier counts each admitted request once, whatever its cost: three are in the window, and a dry run of one more leaves 6.
      expect((await requests.wouldLimitWithInfo('user-1')).actionsRemaining).to.equal(6);
    });

    it('settles twice to the same cost as one settlement, and resolves false for a blocked request', async () => {
      if (client === undefined) throw new Error('no client');
      const clock = new TestClock();
      const tokens = new RollingRateLimiter({
        client,
        namespace: namespaces.next('tokens'),
        interval: 60_000,
        maxCostInInterval: 100,
        countBlocked: false,
        clock: clock.read,
      });
      const settled: boolean[] = [];
      const app = express();
      app.use(
        rateLimit({
          limiter: tokens,
          key: () => 'user-2',
          cost: 60,
          onLimited: async (_req, res) => {
            settled.push(await (res.locals.rateLimit as RequestRateLimit).settle(0));
            res.end();
          },
        }),
      );
      app.get('/', async (_req, res) => {
        const { settle } = res.locals.rateLimit as RequestRateLimit;
        settled.push(await settle(50), await settle(50));
        res.end();
      });
      const url = await start(app);
      cleanups.push(() => tokens.clear('user-2'));
      expect((await get(url)).status).to.equal(200);
      expect((await get(url)).status, '50 + 60 > 100').to.equal(429);
      expect(settled).to.deep.equal([true, true, false]);
      expect(await tokens.wouldLimit('user-2', { cost: 50 }), 'the settled 50 of 100, once').to.equal(false);
      expect(await tokens.wouldLimit('user-2', { cost: 51 })).to.equal(true);
    });
  });

  describe('with the store down', () => {
    let downClient: Redis | undefined;

    before(async () => {
      downClient = await downRedisClient();
    });

    after(() => {
      downClient?.disconnect();
    });

    function downLimiter(options: Pick<RollingRateLimiterOptions, 'onStoreError'>): RollingRateLimiter {
      if (downClient === undefined) throw new Error('no client');
      return new RollingRateLimiter({ client: downClient, namespace: namespaces.next('down'), interval: 60_000, maxInInterval: 5, timeout: 300, ...options });
    }

    it("hands the failure to Express's error handler with onStoreError: 'throw'", async () => {
      const url = await start(appWith({ limiter: downLimiter({ onStoreError: 'throw' }) }));
      const started = performance.now();
      const seen = await get(url);
      expect(performance.now() - started, 'answered within the limiter timeout and a margin').to.be.below(2_000);
      expect(seen.status).to.equal(503);
      const reported = JSON.parse(seen.body) as ReportedError;
      expect(reported.rateLimiterError, seen.body).to.equal(true);
      expect(reported.code).to.be.oneOf(['ERR_RATE_LIMITER_STORE', 'ERR_RATE_LIMITER_TIMEOUT']);
      expect(seen.headers, 'no decision, so no rate-limit headers').to.deep.equal({});
    });

    it("lets the request through with onStoreError: 'allow', after onStoreFailure", async () => {
      const failures: RateLimitInfo[] = [];
      const url = await start(appWith({ limiter: downLimiter({ onStoreError: 'allow' }), onStoreFailure: (_req, info) => void failures.push(info) }));
      const seen = await get(url);
      expect(seen.status).to.equal(200);
      expect(seen.body).to.equal('ok');
      expect(failures).to.have.length(1);
      expect(failures[0]?.storeFailure?.policy).to.equal('allow');
      expect(isRateLimiterError(failures[0]?.storeFailure?.error)).to.equal(true);
      expect(seen.headers.RateLimit).to.match(/;r=5$/);
    });

    it("settles nothing for a request admitted with onStoreError: 'allow', and settles in a fallback limiter that admitted it", async () => {
      if (downClient === undefined) throw new Error('no client');
      const downBudget = (onStoreError: NonNullable<RollingRateLimiterOptions['onStoreError']>): RollingRateLimiter =>
        new RollingRateLimiter({
          client: downClient as Redis,
          namespace: namespaces.next('down-tokens'),
          interval: 60_000,
          maxCostInInterval: 100,
          timeout: 300,
          onStoreError,
        });
      const allowed = await start(appWith({ limiter: downBudget('allow'), cost: 40 }));
      const seen = await get(allowed, { 'x-used': '10' });
      expect([seen.status, seen.body], 'false, without asking the store').to.deep.equal([200, 'false']);

      const fallback = new RollingRateLimiter({ namespace: 'fallback-tokens', interval: 60_000, maxCostInInterval: 100 });
      const viaFallback = await start(appWith({ limiter: downBudget(fallback), cost: 40 }));
      expect((await get(viaFallback, { 'x-used': '10' })).body).to.equal('true');
      expect(await fallback.wouldLimit('127.0.0.1', { cost: 90 }), 'the fallback holds the settled 10').to.equal(false);
      expect(await fallback.wouldLimit('127.0.0.1', { cost: 91 })).to.equal(true);
    });

    it("answers 429 with onStoreError: 'block'", async () => {
      const url = await start(appWith({ limiter: downLimiter({ onStoreError: 'block' }) }));
      const seen = await get(url);
      expect(seen.status).to.equal(429);
      expect(seen.headers['Retry-After'], 'the policy waits one timeout (300 ms), rounded up').to.equal('1');
    });
  });
});
