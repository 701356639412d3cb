// The Hono middleware in process, through Hono's own test helper
// (`app.request()`), with in-memory limiters on an injected clock so that
// every header value is exact; and its answers against the Express
// middleware's for the same decisions (Express served on 127.0.0.1).

import { expect } from 'chai';
import express from 'express';
import { Hono } from 'hono';
import type { ConnInfo } from 'hono/conninfo';
import { RateLimiterStack, RollingRateLimiter, type RollingRateLimiterOptions } from '../../../src/index.js';
import { rateLimit as expressRateLimit } from '../../../src/http/express/express-middleware.js';
import { rateLimit, type RateLimitOptions } from '../../../src/http/hono/hono-middleware.js';
import type { HttpRateLimiter } from '../../../src/http/policies.js';
import { TestClock } from '../../support/test-clock.js';
import { get, rateLimitHeaders, serve, type Seen } from '../http-helpers.js';

/** An app with the middleware on every route, `GET /` answering 200 `ok`, and an error handler that reports what reached it. */
function appWith<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): Hono {
  // Chained, so that the middleware's variables are typed in the routes (`c.get('rateLimit')`).
  const app = new Hono().use(rateLimit(options));
  app.get('/', (c) => c.text('ok'));
  app.get('/raw', () => new Response('raw'));
  app.get('/redirect', () => Response.redirect('http://127.0.0.1/elsewhere', 302)); // headers that cannot change
  app.get('/seen', (c) => c.json({ blocked: c.get('rateLimit').blocked, remaining: c.get('rateLimit').actionsRemaining }));
  app.onError((error, c) => c.json({ name: error.name, message: error.message }, 500));
  return app as unknown as Hono;
}

/** What a test looks at in a response of `app.request()`. */
async function request(app: Hono, path = '/', headers: Record<string, string> = {}): Promise<Seen> {
  const response = await app.request(path, { headers });
  return { status: response.status, headers: rateLimitHeaders(response), contentType: response.headers.get('content-type'), body: await response.text() };
}

function memoryLimiter(clock: TestClock, options: Omit<RollingRateLimiterOptions, 'clock'>): RollingRateLimiter {
  return new RollingRateLimiter({ ...options, clock: clock.read });
}

/** A `connInfo` as a runtime adapter gives it, the address read from a test header. */
const fromHeader = (c: { req: { header(name: string): string | undefined } }): ConnInfo => {
  const address = c.req.header('x-test-address');
  return { remote: address === undefined ? {} : { address } };
};
const from = (address: string): Record<string, string> => ({ 'x-test-address': address });

describe('rateLimit (Hono, in process)', () => {
  it('allows, then answers 429 with Retry-After, the headers and the default body', async () => {
    const clock = new TestClock();
    const app = appWith({ limiter: memoryLimiter(clock, { namespace: 'search', interval: 60_000, maxInInterval: 2 }), key: () => 'user' });
    const first = await request(app);
    expect([first.status, first.body]).to.deep.equal([200, 'ok']);
    expect(first.headers).to.deep.equal({ 'RateLimit-Policy': '"search";q=2;w=60', RateLimit: '"search";r=1' });
    expect((await request(app)).headers).to.deep.equal({ 'RateLimit-Policy': '"search";q=2;w=60', RateLimit: '"search";r=0;t=60' });
    clock.advanceMs(10_000);
    const third = await request(app);
    expect(third.status).to.equal(429);
    expect(third.headers).to.deep.equal({ 'RateLimit-Policy': '"search";q=2;w=60', RateLimit: '"search";r=0;t=50', 'Retry-After': '50' });
    expect(third.contentType).to.equal('application/json; charset=utf-8');
    expect(JSON.parse(third.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 50 });
  });

  it('puts the headers on a Response the handler built itself, and leaves the decision in c.get("rateLimit")', async () => {
    const app = appWith({ limiter: new RollingRateLimiter({ namespace: 'raw', interval: 1_000, maxInInterval: 5 }), key: () => 'user' });
    const raw = await request(app, '/raw');
    expect([raw.status, raw.body]).to.deep.equal([200, 'raw']);
    expect(raw.headers).to.deep.equal({ 'RateLimit-Policy': '"raw";q=5;w=1', RateLimit: '"raw";r=4' });
    const redirect = await app.request('/redirect');
    expect([redirect.status, redirect.headers.get('location')]).to.deep.equal([302, 'http://127.0.0.1/elsewhere']);
    expect(rateLimitHeaders(redirect), 'on a Response whose headers cannot change, through a copy').to.deep.equal({
      'RateLimit-Policy': '"raw";q=5;w=1',
      RateLimit: '"raw";r=3',
    });
    expect(JSON.parse((await request(app, '/seen')).body)).to.deep.equal({ blocked: false, remaining: 2 });
  });

  it('lets skipped requests through uncounted and without headers', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'skip', interval: 60_000, maxInInterval: 1 });
    const app = appWith({ limiter, key: () => 'user', skip: (c) => c.req.header('x-internal') === 'yes' });
    for (let i = 0; i < 3; i++) expect(await request(app, '/', { 'x-internal': 'yes' })).to.deep.include({ status: 200, headers: {} });
    expect((await request(app)).status).to.equal(200);
    expect((await request(app)).status).to.equal(429);
  });

  it('sends message as text or JSON, or lets onLimited answer with the status and headers set', async () => {
    const limiter = (namespace: string): RollingRateLimiter => new RollingRateLimiter({ namespace, interval: 60_000, maxInInterval: 1 });
    const blocked = async (options: Omit<RateLimitOptions<RollingRateLimiter>, 'limiter' | 'key'>, namespace: string): Promise<Seen> => {
      const app = appWith({ limiter: limiter(namespace), key: () => 'user', ...options });
      await request(app);
      return request(app);
    };
    expect(await blocked({ message: 'slow down' }, 'text')).to.deep.include({ status: 429, body: 'slow down', contentType: 'text/plain; charset=utf-8' });
    expect(await blocked({ message: (_c, info) => ({ wait: info.millisecondsUntilAllowed }) }, 'fn')).to.deep.include({ status: 429, body: '{"wait":60000}' });
    const custom = await blocked({ onLimited: (c, info) => c.text(`wait ${info.millisecondsUntilAllowed}`) }, 'own');
    expect(custom).to.deep.include({ status: 429, body: 'wait 60000' });
    expect(custom.headers).to.deep.equal({ 'RateLimit-Policy': '"own";q=1;w=60', RateLimit: '"own";r=0;t=60', 'Retry-After': '60' });
  });

  it('refuses a request without a key through app.onError, never letting it through', async () => {
    const app = appWith({ limiter: new RollingRateLimiter({ interval: 1_000, maxInInterval: 1 }), key: () => undefined });
    const seen = await request(app, '/?secret=1');
    expect(seen.status).to.equal(500);
    expect(JSON.parse(seen.body)).to.deep.equal({
      name: 'TypeError',
      message: 'rateLimit found no key for GET /: the key function returned `undefined`; return an id, or use `skip` to let such requests through unlimited',
    });
  });
});

describe('rateLimit (Hono) keyed by connInfo', () => {
  it('keys IPv6 clients by their /56, IPv4-mapped addresses as IPv4, and can key by the whole address', async () => {
    const app = appWith({ limiter: new RollingRateLimiter({ namespace: 'ip', interval: 60_000, maxInInterval: 3 }), connInfo: fromHeader });
    const statuses = async (addresses: string[]): Promise<number[]> => {
      const seen: number[] = [];
      for (const address of addresses) seen.push((await request(app, '/', from(address))).status); // one after another: the last is the 4th
      return seen;
    };
    const sameSubnet = ['2001:db8:aa:bb01::1', '2001:db8:aa:bb02::2', '2001:db8:aa:bbff:1:2:3:4', '2001:db8:aa:bb10::9'];
    expect(await statuses(sameSubnet)).to.deep.equal([200, 200, 200, 429]);
    expect(await statuses(['2001:db8:aa:cc00::1'])).to.deep.equal([200]);
    expect(await statuses(['203.0.113.7', '::ffff:203.0.113.7', '[::ffff:203.0.113.7]:443', '203.0.113.7:80'])).to.deep.equal([200, 200, 200, 429]);
    const whole = appWith({
      limiter: new RollingRateLimiter({ namespace: 'whole', interval: 60_000, maxInInterval: 1 }),
      connInfo: fromHeader,
      ipv6Subnet: false,
    });
    for (const address of sameSubnet) expect((await request(whole, '/', from(address))).status, address).to.equal(200);
  });

  it('refuses a request whose address is unknown or not an IP address', async () => {
    const app = appWith({ limiter: new RollingRateLimiter({ interval: 1_000, maxInInterval: 1 }), connInfo: fromHeader });
    const unknown = await request(app);
    expect(JSON.parse(unknown.body)).to.have.property('message').that.includes('(connInfo gave no remote address)');
    const garbage = await request(app, '/', from('unix:/tmp/socket'));
    expect(garbage.status).to.equal(500);
    expect(JSON.parse(garbage.body))
      .to.have.property('message')
      .that.matches(/^rateLimit refused GET \/: connInfo gave the remote address `"unix:\/tmp\/socket"` \(string\), which is not an IP address/);
  });
});

describe('rateLimit (Hono) options', () => {
  const limiter = new RollingRateLimiter({ interval: 1_000, maxInInterval: 1 });
  const made =
    (options: object): (() => unknown) =>
    () =>
      rateLimit(options as RateLimitOptions);

  it('needs key or connInfo, and refuses both, when it is made', () => {
    expect(made({ limiter })).to.throw(TypeError, /needs `key`, a function that returns the id of a request.*or `connInfo` from your runtime's adapter/);
    expect(made({ limiter, key: () => 'x', connInfo: fromHeader })).to.throw(TypeError, /either `key` or `connInfo`, not both/);
    expect(made({ limiter, connInfo: fromHeader })).to.not.throw();
  });

  it('checks the options the Express middleware has with the same messages, and refuses Express-only ones', () => {
    expect(made({ limiter, key: () => 'x', keys: 1 })).to.throw(
      TypeError,
      /Unknown option `keys`; the options are limiter, key, skip, cost, actionId, message, onLimited, headers, policyName, onStoreFailure, ipv6Subnet, connInfo$/,
    );
    expect(made({ limiter, key: () => 'x', validate: false })).to.throw(TypeError, /Unknown option `validate`/);
    expect(made({ limiter, key: 'ip' })).to.throw(TypeError, /`key` to be a function, got `"ip"` \(string\)/);
    expect(made({ limiter, connInfo: 'ip' })).to.throw(TypeError, /`connInfo` to be a function/);
    expect(made({ limiter, key: () => 'x', headers: 'draft-10' })).to.throw(RangeError, /`headers` to be one of/);
    expect(made({ limiter, connInfo: fromHeader, ipv6Subnet: 80 })).to.throw(RangeError, /`ipv6Subnet` to be an integer from 32 to 64, got `80`/);
    expect(made({ limiter, key: () => 'x', message: 'x', onLimited: () => new Response() })).to.throw(TypeError, /either `message` or `onLimited`/);
    expect(made({ limiter: {}, key: () => 'x' })).to.throw(TypeError, /RollingRateLimiter or a RateLimiterStack/);
  });
});

describe('rateLimit (Hono) answers as the Express middleware does', () => {
  it('with the same statuses, headers, content types and bodies for the same decisions', async () => {
    const clock = new TestClock();
    const tiers = (prefix: string): RateLimiterStack =>
      new RateLimiterStack([
        memoryLimiter(clock, { namespace: `${prefix}:minute`, interval: 60_000, maxInInterval: 4 }),
        memoryLimiter(clock, { namespace: `${prefix}:gap`, interval: 2_500, maxInInterval: 2, minDifference: 700 }),
      ]);
    for (const headers of ['draft', 'legacy', 'both'] as const) {
      const shared = { headers, policyName: ({ index }: { index: number }) => ['per-minute', 'gap'][index] ?? '', key: () => 'user' };
      const expressApp = express();
      expressApp.use(expressRateLimit({ ...shared, limiter: tiers(`e-${headers}`) }));
      expressApp.get('/', (_req, res) => void res.type('text/plain').send('ok'));
      const server = await serve(expressApp);
      const hono = appWith({ ...shared, limiter: tiers(`h-${headers}`) });
      const statuses: number[] = [];
      try {
        // Each step: Express decides at the clock's moment, then Hono at the same moment, on limiters of their own.
        for (const stepMs of [0, 300, 500, 700, 1, 1_200, 0, 2_600, 50, 0, 58_000]) {
          clock.advanceMs(stepMs);
          const [fromExpress, fromHono] = [await get(`${server.url}/`), await request(hono)];
          // A 200's content type is the route's own (each framework's text()); a 429's is the middleware's.
          const answer = (seen: Seen): Partial<Seen> => (seen.status === 200 ? { ...seen, contentType: null } : seen);
          expect(answer(fromHono), `${headers} after +${stepMs} ms`).to.deep.equal(answer(fromExpress));
          statuses.push(fromHono.status);
        }
      } finally {
        await server.close();
      }
      expect(statuses, 'the schedule meets both tiers').to.include.members([200, 429]);
    }
  });
});
