// The Hono middleware with its Redis down (a client of a loopback port nothing
// listens on): the limiter's `onStoreError` decides, as with the Express
// middleware. 'throw' reaches app.onError; 'allow' and 'block' answer by the
// policy after onStoreFailure.

import { expect } from 'chai';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { isRateLimiterError, RollingRateLimiter, type RateLimitInfo, type RollingRateLimiterOptions } from '../../../src/index.js';
import { rateLimit } from '../../../src/http/hono/hono-middleware.js';
import { downRedisClient } from '../../support/down-redis.js';
import { uniqueNamespaces } from '../../support/namespaces.js';

const namespaces = uniqueNamespaces('hono-down');

describe('rateLimit (Hono) with the store down', () => {
  let downClient: Redis | undefined;

  before(async () => {
    downClient = await downRedisClient();
  });

  after(() => {
    downClient?.disconnect();
  });

  function appWith(options: Pick<RollingRateLimiterOptions, 'onStoreError'>, failures: RateLimitInfo[] = []): Hono {
    if (downClient === undefined) throw new Error('no client');
    const limiter = new RollingRateLimiter({ client: downClient, namespace: namespaces.next(), interval: 60_000, maxInInterval: 5, timeout: 300, ...options });
    const app = new Hono();
    app.use(rateLimit({ limiter, key: () => 'user', onStoreFailure: (_c, info) => void failures.push(info) }));
    app.get('/', (c) => c.text('ok'));
    app.onError((error, c) => c.json({ rateLimiterError: isRateLimiterError(error), code: (error as { code?: string }).code }, 503));
    return app;
  }

  it("hands the failure to app.onError with onStoreError: 'throw', without rate-limit headers", async () => {
    const started = performance.now();
    const response = await appWith({ onStoreError: 'throw' }).request('/');
    expect(performance.now() - started, 'answered within the limiter timeout and a margin').to.be.below(2_000);
    expect(response.status).to.equal(503);
    const reported = (await response.json()) as { rateLimiterError: boolean; code: string };
    expect(reported.rateLimiterError).to.equal(true);
    expect(reported.code).to.be.oneOf(['ERR_RATE_LIMITER_STORE', 'ERR_RATE_LIMITER_TIMEOUT']);
    expect(response.headers.get('RateLimit')).to.equal(null);
  });

  it("lets the request through with onStoreError: 'allow', after onStoreFailure", async () => {
    const failures: RateLimitInfo[] = [];
    const response = await appWith({ onStoreError: 'allow' }, failures).request('/');
    expect([response.status, await response.text()]).to.deep.equal([200, 'ok']);
    expect(failures.map((info) => info.storeFailure?.policy)).to.deep.equal(['allow']);
    expect(response.headers.get('RateLimit')).to.match(/;r=5$/);
  });

  it("answers 429 with onStoreError: 'block'", async () => {
    const response = await appWith({ onStoreError: 'block' }).request('/');
    expect(response.status).to.equal(429);
    expect(response.headers.get('Retry-After'), 'the policy waits one timeout (300 ms), rounded up').to.equal('1');
  });
});
