// The Express middleware over real HTTP with a two-tier stack on a real
// redis-server (ioredis), and with a store that is down, under the limiter's
// `onStoreError` policies.

import { expect } from 'chai';
import express, { type ErrorRequestHandler, type Express } from 'express';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, isRateLimiterError, type RateLimitInfo, type RollingRateLimiterOptions } from '../../../src/index.js';
import { rateLimit, type RateLimitOptions } from '../../../src/http/express/express-middleware.js';
import type { HttpRateLimiter } from '../../../src/http/policies.js';
import { downRedisClient } from '../../support/down-redis.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
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
  app.get('/', (_req, res) => {
    res.type('text/plain').send('ok');
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

    it("answers 429 with onStoreError: 'block'", async () => {
      const url = await start(appWith({ limiter: downLimiter({ onStoreError: 'block' }) }));
      const seen = await get(url);
      expect(seen.status).to.equal(429);
      expect(seen.headers['Retry-After'], 'the policy waits one timeout (300 ms), rounded up').to.equal('1');
    });
  });
});
