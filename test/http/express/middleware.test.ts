// The Express middleware over real HTTP (fetch against an app listening on
// 127.0.0.1), with in-memory limiters on an injected clock so that every header
// value is exact.

import { expect } from 'chai';
import express, { type ErrorRequestHandler, type Express } from 'express';
import { RateLimiterStack, RollingRateLimiter, type RollingRateLimiterOptions, type StackRateLimitInfo } from '../../../src/index.js';
import { rateLimit, type RateLimitOptions } from '../../../src/http/express/express-middleware.js';
import type { HttpRateLimiter } from '../../../src/http/policies.js';
import { TestClock } from '../../support/test-clock.js';
import { get, serve, type RunningServer } from '../http-helpers.js';

const servers: RunningServer[] = [];

/** An app with the middleware on every route, `GET /` answering 200 `ok`, and an error handler that reports what reached it. */
function appWith<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): Express {
  const app = express();
  app.use(rateLimit(options));
  app.get('/', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  const reportErrors: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    res.status(500).json({ name: error instanceof Error ? error.name : typeof error, message: error instanceof Error ? error.message : '' });
  };
  app.use(reportErrors);
  return app;
}

async function start(app: Express): Promise<string> {
  const server = await serve(app);
  servers.push(server);
  return `${server.url}/`;
}

function memoryLimiter(clock: TestClock, options: Omit<RollingRateLimiterOptions, 'clock'>): RollingRateLimiter {
  return new RollingRateLimiter({ ...options, clock: clock.read });
}

describe('rateLimit (Express, in memory)', () => {
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  describe('a single limiter', () => {
    it('allows, then answers 429 with Retry-After, the headers and the default body', async () => {
      const clock = new TestClock();
      const limiter = memoryLimiter(clock, { namespace: 'search', interval: 60_000, maxInInterval: 2 });
      const url = await start(appWith({ limiter }));

      const first = await get(url);
      expect(first.status).to.equal(200);
      expect(first.body).to.equal('ok');
      expect(first.headers).to.deep.equal({ 'RateLimit-Policy': '"search";q=2;w=60', RateLimit: '"search";r=1' });

      const second = await get(url);
      expect(second.status).to.equal(200);
      expect(second.headers).to.deep.equal({ 'RateLimit-Policy': '"search";q=2;w=60', RateLimit: '"search";r=0;t=60' });

      clock.advanceMs(10_000);
      const third = await get(url);
      expect(third.status).to.equal(429);
      expect(third.headers).to.deep.equal({ 'RateLimit-Policy': '"search";q=2;w=60', RateLimit: '"search";r=0;t=50', 'Retry-After': '50' });
      expect(third.contentType).to.equal('application/json; charset=utf-8');
      expect(JSON.parse(third.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 50 });
    });

    it('rounds Retry-After up to whole seconds and never says 0 while time remains', async () => {
      const clock = new TestClock();
      const limiter = memoryLimiter(clock, { namespace: 'gap', interval: 1_500, maxInInterval: 2 });
      const url = await start(appWith({ limiter }));
      expect((await get(url)).headers).to.deep.equal({ 'RateLimit-Policy': '"gap";q=2;w=2', RateLimit: '"gap";r=1' });
      expect((await get(url)).headers).to.deep.equal({ 'RateLimit-Policy': '"gap";q=2;w=2', RateLimit: '"gap";r=0;t=2' });

      clock.advanceUs(1_499_999); // 1 µs before the first two attempts leave the window
      const blocked = await get(url);
      expect(blocked.status).to.equal(429);
      // The blocked attempt counts too, but the window still holds the first
      // ones for 1 µs: rounded up to 1 ms, then to 1 s.
      expect(blocked.headers['Retry-After']).to.equal('1');
      expect(blocked.headers.RateLimit).to.equal('"gap";r=0;t=1');
      expect(JSON.parse(blocked.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 1 });
    });

    it('reports the minimum gap as r=0 with t while it holds, though actions remain in the window', async () => {
      const clock = new TestClock();
      const limiter = memoryLimiter(clock, { namespace: 'push', interval: 60_000, maxInInterval: 10, minDifference: 3_000 });
      const url = await start(appWith({ limiter }));
      expect((await get(url)).headers).to.deep.equal({ 'RateLimit-Policy': '"push";q=10;w=60', RateLimit: '"push";r=0;t=3' });
      clock.advanceMs(3_000);
      const next = await get(url);
      expect(next.status).to.equal(200);
      expect(next.headers.RateLimit).to.equal('"push";r=0;t=3');
    });

    it('leaves the decision in res.locals.rateLimit for later handlers', async () => {
      const limiter = new RollingRateLimiter({ interval: 60_000, maxInInterval: 5 });
      const app = express();
      app.use(rateLimit({ limiter }));
      app.get('/', (_req, res) => {
        res.json(res.locals.rateLimit);
      });
      const url = await start(app);
      const seen = await get(url);
      expect(JSON.parse(seen.body)).to.include({ blocked: false, actionsRemaining: 4 });
      // The in-memory limiter's default namespace names the policy.
      expect(seen.headers['RateLimit-Policy']).to.equal('"rolling-window-limiter";q=5;w=60');
    });
  });

  describe('a two-tier stack', () => {
    it('announces both tiers in RateLimit-Policy and the binding tier in RateLimit', async () => {
      const clock = new TestClock();
      const perMinute = memoryLimiter(clock, { namespace: 'push-minute', interval: 60_000, maxInInterval: 10 });
      const every3s = memoryLimiter(clock, { namespace: 'push-3s', interval: 3_000, maxInInterval: 1 });
      const url = await start(appWith({ limiter: new RateLimiterStack([perMinute, every3s]) }));
      const policy = '"push-minute";q=10;w=60, "push-3s";q=1;w=3';

      // Allowed, but the 3 s tier makes the next attempt wait: it binds.
      const first = await get(url);
      expect(first.status).to.equal(200);
      expect(first.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"push-3s";r=0;t=3' });

      // Blocked by the 3 s tier (and recorded: blocked attempts count).
      clock.advanceMs(1_000);
      const second = await get(url);
      expect(second.status).to.equal(429);
      expect(second.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"push-3s";r=0;t=3', 'Retry-After': '3' });

      // One attempt every 3 s fills the minute tier; from then on it binds.
      const statuses: number[] = [];
      let last = second;
      for (let i = 0; i < 8; i++) {
        clock.advanceMs(3_000);
        last = await get(url);
        statuses.push(last.status);
      }
      expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 200, 200, 200]);
      expect(last.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"push-minute";r=0;t=35' });

      clock.advanceMs(3_000);
      const full = await get(url);
      expect(full.status).to.equal(429);
      expect(full.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"push-minute";r=0;t=33', 'Retry-After': '33' });
    });

    it('binds the tier with the fewest remaining when nothing has to wait, and leaves t out', async () => {
      const clock = new TestClock();
      const perSecond = memoryLimiter(clock, { namespace: 'api-second', interval: 1_000, maxInInterval: 5 });
      const perMinute = memoryLimiter(clock, { namespace: 'api-minute', interval: 60_000, maxInInterval: 100 });
      const url = await start(appWith({ limiter: new RateLimiterStack([perMinute, perSecond]) }));
      const seen = await get(url);
      expect(seen.headers).to.deep.equal({
        'RateLimit-Policy': '"api-minute";q=100;w=60, "api-second";q=5;w=1',
        RateLimit: '"api-second";r=4',
      });
    });

    it('names the tiers with policyName', async () => {
      const perSecond = new RollingRateLimiter({ namespace: 'internal:api:s', interval: 1_000, maxInInterval: 5 });
      const perMinute = new RollingRateLimiter({ namespace: 'internal:api:m', interval: 60_000, maxInInterval: 100 });
      const names = ['per-second', 'per-minute'];
      const url = await start(appWith({ limiter: new RateLimiterStack([perSecond, perMinute]), policyName: ({ index }) => names[index] ?? 'other' }));
      const seen = await get(url);
      expect(seen.headers['RateLimit-Policy']).to.equal('"per-second";q=5;w=1, "per-minute";q=100;w=60');
      expect(seen.headers.RateLimit).to.equal('"per-second";r=4');
    });
  });

  describe('options', () => {
    it('limits by a custom key (x-user-id), each key on its own', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'users', interval: 60_000, maxInInterval: 1 });
      const url = await start(appWith({ limiter, key: (req) => req.get('x-user-id') }));
      expect((await get(url, { 'x-user-id': 'ada' })).status).to.equal(200);
      expect((await get(url, { 'x-user-id': 'ada' })).status).to.equal(429);
      expect((await get(url, { 'x-user-id': 'grace' })).status).to.equal(200);
    });

    it('sends a request without a key to the error handler rather than letting it through', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'users', interval: 60_000, maxInInterval: 1 });
      const url = await start(appWith({ limiter, key: (req) => req.get('x-user-id') }));
      const seen = await get(url);
      expect(seen.status).to.equal(500);
      const reported = JSON.parse(seen.body) as { name: string; message: string };
      expect(reported.name).to.equal('TypeError');
      expect(reported.message).to.match(/found no key for GET \/.*`skip`/);
    });

    it('accepts an async key function, and sends its rejection to the error handler', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'async', interval: 60_000, maxInInterval: 1 });
      const url = await start(
        appWith({
          limiter,
          key: async (req) => {
            await new Promise((resolve) => setImmediate(resolve));
            if (req.get('x-fail') !== undefined) throw new Error('session store down');
            return 42;
          },
        }),
      );
      expect((await get(url)).status).to.equal(200);
      expect((await get(url)).status).to.equal(429);
      const failed = await get(url, { 'x-fail': '1' });
      expect(failed.status).to.equal(500);
      expect(JSON.parse(failed.body)).to.deep.equal({ name: 'Error', message: 'session store down' });
    });

    it('skips requests: neither counted nor limited, and without headers', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'skip', interval: 60_000, maxInInterval: 1 });
      const url = await start(appWith({ limiter, skip: (req) => req.get('x-internal') === 'yes' }));
      const skipped = await get(url, { 'x-internal': 'yes' });
      expect(skipped.status).to.equal(200);
      expect(skipped.headers).to.deep.equal({});
      expect((await get(url)).status).to.equal(200);
      expect((await get(url)).status).to.equal(429);
      expect((await get(url, { 'x-internal': 'yes' })).status).to.equal(200);
    });

    it('sends a string message as text/plain', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'text', interval: 60_000, maxInInterval: 1 });
      const url = await start(appWith({ limiter, message: 'Slow down, please.' }));
      await get(url);
      const blocked = await get(url);
      expect(blocked.status).to.equal(429);
      expect(blocked.contentType).to.equal('text/plain; charset=utf-8');
      expect(blocked.body).to.equal('Slow down, please.');
      expect(blocked.headers['Retry-After']).to.equal('60');
    });

    it('sends an object message as JSON', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'json', interval: 60_000, maxInInterval: 1 });
      const url = await start(appWith({ limiter, message: { error: 'too_many', docs: 'https://example.test/limits' } }));
      await get(url);
      const blocked = await get(url);
      expect(blocked.status).to.equal(429);
      expect(JSON.parse(blocked.body)).to.deep.equal({ error: 'too_many', docs: 'https://example.test/limits' });
    });

    it('builds the message with a function of the request and the stack info', async () => {
      const clock = new TestClock();
      const perMinute = memoryLimiter(clock, { namespace: 'push-minute', interval: 60_000, maxInInterval: 10 });
      const every3s = memoryLimiter(clock, { namespace: 'push-3s', interval: 3_000, maxInInterval: 1 });
      const url = await start(
        appWith({
          limiter: new RateLimiterStack([perMinute, every3s]),
          message: async (req, info: StackRateLimitInfo) => ({
            path: req.path,
            violated: info.tiers.filter((tier) => tier.blocked).map((tier) => tier.namespace),
            waitMs: info.millisecondsUntilAllowed,
          }),
        }),
      );
      await get(url);
      clock.advanceMs(500);
      const blocked = await get(url);
      expect(blocked.status).to.equal(429);
      expect(JSON.parse(blocked.body)).to.deep.equal({ path: '/', violated: ['push-3s'], waitMs: 3_000 });
    });

    it('lets onLimited send the response, with the status and headers already set', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'problem', interval: 60_000, maxInInterval: 1 });
      const url = await start(
        appWith({
          limiter,
          onLimited: (_req, res, _next, info) => {
            res.type('application/problem+json').json({
              type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
              title: 'Too Many Requests',
              status: res.statusCode,
              'violated-policies': ['problem'],
              retryAfterMs: info.millisecondsUntilAllowed > 0 ? 'positive' : 'zero',
            });
          },
        }),
      );
      await get(url);
      const blocked = await get(url);
      expect(blocked.status).to.equal(429);
      expect(blocked.contentType).to.equal('application/problem+json; charset=utf-8');
      expect(blocked.headers).to.include({ 'Retry-After': '60', RateLimit: '"problem";r=0;t=60' });
      expect(JSON.parse(blocked.body)).to.include({ status: 429, retryAfterMs: 'positive' });
    });

    it("sends the legacy X-RateLimit-* headers with headers: 'legacy'", async () => {
      const clock = new TestClock();
      const perMinute = memoryLimiter(clock, { namespace: 'push-minute', interval: 60_000, maxInInterval: 10 });
      const every3s = memoryLimiter(clock, { namespace: 'push-3s', interval: 3_000, maxInInterval: 1 });
      const url = await start(appWith({ limiter: new RateLimiterStack([perMinute, every3s]), headers: 'legacy' }));
      const first = await get(url);
      expect(first.headers).to.deep.equal({ 'X-RateLimit-Limit': '1', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '3' });
      clock.advanceMs(1_000);
      const blocked = await get(url);
      expect(blocked.status).to.equal(429);
      expect(blocked.headers).to.deep.equal({ 'X-RateLimit-Limit': '1', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '3', 'Retry-After': '3' });

      const perMinuteOnly = new RollingRateLimiter({ namespace: 'legacy', interval: 60_000, maxInInterval: 10 });
      const other = await start(appWith({ limiter: perMinuteOnly, headers: 'legacy' }));
      expect((await get(other)).headers).to.deep.equal({ 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '9', 'X-RateLimit-Reset': '0' });
    });

    it("sends both sets with headers: 'both', and only Retry-After with headers: false", async () => {
      const both = await start(appWith({ limiter: new RollingRateLimiter({ namespace: 'b', interval: 2_000, maxInInterval: 1 }), headers: 'both' }));
      expect((await get(both)).headers).to.deep.equal({
        'RateLimit-Policy': '"b";q=1;w=2',
        RateLimit: '"b";r=0;t=2',
        'X-RateLimit-Limit': '1',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '2',
      });

      const none = await start(appWith({ limiter: new RollingRateLimiter({ namespace: 'n', interval: 2_000, maxInInterval: 1 }), headers: false }));
      expect((await get(none)).headers).to.deep.equal({});
      const blocked = await get(none);
      expect(blocked.status).to.equal(429);
      expect(blocked.headers).to.deep.equal({ 'Retry-After': '2' });
    });
  });
});
