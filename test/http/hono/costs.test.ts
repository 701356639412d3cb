// The Hono middleware with budgets of cost (limiters with `maxCostInInterval`),
// through Hono's own test helper (`app.request()`), on limiters with an
// injected clock so that every header value is exact, in memory and on a real
// redis-server: a request reserves its `cost` (here read from its JSON body,
// asynchronously), the handler settles it with `c.var.rateLimit.settle(used)`,
// and the headers report the budget; and the same answers as the Express
// middleware for the same schedule.

import { expect } from 'chai';
import express from 'express';
import { Hono, type Context } from 'hono';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, type RollingRateLimiterOptions } from '../../../src/index.js';
import { rateLimit as expressRateLimit, type RequestRateLimit } from '../../../src/http/express/express-middleware.js';
import { rateLimit, type RateLimitOptions } from '../../../src/http/hono/hono-middleware.js';
import type { HttpRateLimiter } from '../../../src/http/policies.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
import { TestClock } from '../../support/test-clock.js';
import { rateLimitHeaders, serve, type Seen } from '../http-helpers.js';

/** A request's body: what it reserves, and what the handler then settles it to (not settled when absent). */
interface Call {
  readonly estimate: number;
  readonly used?: number;
  readonly usedAgain?: number;
}

/** The cost of a request: its body's estimate, read asynchronously (Hono keeps the parsed body for the handler). */
const estimateOf = async (c: Context): Promise<number> => (await c.req.json<Call>()).estimate;

/**
 * `POST /`: settles the request to the body's `used` (and `usedAgain`) when given, and answers
 * `{ cost, settled: [...] }`; errors go to `app.onError`, answered with their name and message.
 */
function appWith<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): Hono {
  const app = new Hono().use(rateLimit(options)).post('/', async (c) => {
    const call = await c.req.json<Call>();
    const settled: boolean[] = [];
    for (const used of [call.used, call.usedAgain]) if (used !== undefined) settled.push(await c.var.rateLimit.settle(used));
    return c.json({ cost: c.var.rateLimit.cost, settled });
  });
  app.onError((error, c) => c.json({ name: error.name, message: error.message }, 500));
  return app as unknown as Hono;
}

async function post(app: Hono, call: Call | Record<string, unknown>): Promise<Seen> {
  const response = await app.request('/', { method: 'POST', body: JSON.stringify(call), headers: { 'content-type': 'application/json' } });
  return { status: response.status, headers: rateLimitHeaders(response), contentType: response.headers.get('content-type'), body: await response.text() };
}

const settledOf = (seen: Seen): boolean[] => (JSON.parse(seen.body) as { settled: boolean[] }).settled;

/** The scenarios, run on each store: `budget` makes a limiter of 10,000 per minute with the clock and the options given. */
function scenarios(budget: (clock: TestClock, options?: Partial<RollingRateLimiterOptions>) => RollingRateLimiter): void {
  it('reserves the cost from the body, reports the budget, and answers 429 with the exact Retry-After once it is spent', async () => {
    const clock = new TestClock();
    const limiter = budget(clock);
    const app = appWith({ limiter, key: () => 'user', cost: estimateOf, policyName: () => 'tokens' });
    const policy = '"tokens";q=10000;w=60';
    const first = await post(app, { estimate: 4_000 });
    expect([first.status, first.body]).to.deep.equal([200, '{"cost":4000,"settled":[]}']);
    expect(first.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"tokens";r=6000' });
    clock.advanceMs(15_000);
    expect((await post(app, { estimate: 4_000 })).headers.RateLimit, 'never settled: the reservation stands').to.equal('"tokens";r=2000;t=45');
    clock.advanceMs(15_000);
    const blocked = await post(app, { estimate: 4_000 });
    expect(blocked.status).to.equal(429);
    expect(blocked.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"tokens";r=2000;t=30', 'Retry-After': '30' });
    expect(JSON.parse(blocked.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 30 });
  });

  it('settles down, freeing the budget for the next request at once, and up, making later requests wait for the window to drain', async () => {
    const clock = new TestClock();
    const app = appWith({ limiter: budget(clock), key: () => 'user', cost: estimateOf, policyName: () => 'tokens' });
    expect(settledOf(await post(app, { estimate: 8_000, used: 1_000 }))).to.deep.equal([true]);
    expect((await post(app, { estimate: 8_000 })).headers.RateLimit, '1,000 + 8,000').to.equal('"tokens";r=1000;t=60');
    clock.advanceMs(20_000);
    // Reserved 500, used 4,000: the window now holds 13,000, and a request of 100 waits until 1,000 + 8,000 have left it.
    expect((await post(app, { estimate: 500, used: 4_000 })).status).to.equal(200);
    clock.advanceMs(1_000);
    const blocked = await post(app, { estimate: 100 });
    expect([blocked.status, blocked.headers.RateLimit, blocked.headers['Retry-After']]).to.deep.equal([429, '"tokens";r=0;t=39', '39']);
    clock.advanceMs(39_000);
    expect((await post(app, { estimate: 100 })).headers.RateLimit).to.equal('"tokens";r=5900');
  });

  it('settles twice to the same cost as one settlement, and resolves false for a blocked request', async () => {
    const clock = new TestClock();
    const limiter = budget(clock);
    const settledWhenBlocked: boolean[] = [];
    const app = appWith({
      limiter,
      key: () => 'user',
      cost: estimateOf,
      onLimited: async (c) => {
        settledWhenBlocked.push(await (c.get('rateLimit') as RequestRateLimit).settle(0));
        return c.text('blocked');
      },
    });
    expect(settledOf(await post(app, { estimate: 6_000, used: 3_000, usedAgain: 3_000 }))).to.deep.equal([true, true]);
    expect((await post(app, { estimate: 7_001 })).status).to.equal(429);
    expect(settledWhenBlocked).to.deep.equal([false]);
    expect(await limiter.wouldLimit('user', { cost: 7_000 }), '3,000 settled once, and nothing of the blocked request').to.equal(false);
    expect(await limiter.wouldLimit('user', { cost: 7_001 })).to.equal(true);
  });

  it('sends a cost it cannot weigh to app.onError, and answers 413 for one over the budget', async () => {
    const app = appWith({ limiter: budget(new TestClock()), key: () => 'user', cost: estimateOf });
    const missing = await post(app, {});
    expect(missing.status).to.equal(500);
    expect(JSON.parse(missing.body)).to.deep.equal({
      name: 'InvalidOptionTypeError',
      message: "rateLimit's `cost` returned `undefined` for POST /: return the request's cost, a positive safe integer",
    });
    const over = await post(app, { estimate: 10_001 });
    expect([over.status, JSON.parse(over.body)]).to.deep.equal([413, { error: 'cost_exceeds_budget', cost: 10_001, maxCost: 10_000 }]);
    const badSettle = await post(app, { estimate: 1, used: -1 });
    expect(JSON.parse(badSettle.body)).to.deep.equal({
      name: 'InvalidOptionRangeError',
      message: 'Expected the cost to settle to be a safe integer from 0, got `-1` (number)',
    });
  });
}

describe('rateLimit (Hono) with budgets of cost', () => {
  describe('in memory', () => {
    let count = 0;
    scenarios((clock, options = {}) => {
      count += 1;
      return new RollingRateLimiter({
        namespace: `hono-tokens-${count}`,
        interval: 60_000,
        maxCostInInterval: 10_000,
        countBlocked: false,
        clock: clock.read,
        ...options,
      });
    });

    it('refuses a cost for a limiter without a budget of cost when it is made, and makes an action id per request', async () => {
      const actions = new RollingRateLimiter({ namespace: 'hono-actions', interval: 60_000, maxInInterval: 5 });
      expect(() => rateLimit({ limiter: actions, key: () => 'user', cost: 2 })).to.throw(TypeError, /for a limiter that counts actions/);
      expect(() => rateLimit({ limiter: actions, key: () => 'user', cost: estimateOf })).to.throw(TypeError, /for a limiter that counts actions/);
      const tokens = new RollingRateLimiter({ namespace: 'hono-ids', interval: 60_000, maxCostInInterval: 5, defaultCost: 1 });
      const app = new Hono().use(rateLimit({ limiter: tokens, key: () => 'user' })).get('/', (c) => c.text(c.var.rateLimit.actionId ?? 'none'));
      const [first, second] = [await (await app.request('/')).text(), await (await app.request('/')).text()];
      expect(first).to.not.equal('none');
      expect(first).to.not.equal(second);
    });
  });

  describe('on Redis', function () {
    this.timeout(30_000);
    const namespaces = uniqueNamespaces('hono-costs');
    let redis: UsedRedis | undefined;
    let client: Redis | undefined;

    before(async () => {
      redis = await useRedis();
      client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      await client.ping();
    });

    after(async () => {
      await client?.quit().catch(() => client?.disconnect());
      await redis?.stop();
    });

    scenarios((clock, options = {}) => {
      if (client === undefined) throw new Error('no client');
      return new RollingRateLimiter({
        client,
        namespace: namespaces.next('tokens'),
        interval: 60_000,
        maxCostInInterval: 10_000,
        countBlocked: false,
        clock: clock.read,
        ...options,
      });
    });
  });

  it('answers as the Express middleware does, for a stack of requests and cost with settlements', async () => {
    const clock = new TestClock();
    const stack = (prefix: string): RateLimiterStack =>
      new RateLimiterStack([
        new RollingRateLimiter({ namespace: `${prefix}:rpm`, interval: 10_000, maxInInterval: 4, countBlocked: false, clock: clock.read }),
        new RollingRateLimiter({ namespace: `${prefix}:tpm`, interval: 60_000, maxCostInInterval: 1_000, clock: clock.read }),
      ]);
    const shared = { key: () => 'user', headers: 'both' as const, policyName: ({ index }: { index: number }) => ['rpm', 'tpm'][index] ?? '' };
    const expressApp = express();
    expressApp.use(express.json());
    expressApp.use(expressRateLimit({ ...shared, limiter: stack('e'), cost: (req) => (req.body as Call).estimate }));
    expressApp.post('/', async (req, res) => {
      const { used } = req.body as Call;
      const settled = used === undefined ? [] : [await (res.locals.rateLimit as RequestRateLimit).settle(used)];
      res.json({ cost: (res.locals.rateLimit as RequestRateLimit).cost, settled });
    });
    const server = await serve(expressApp);
    const hono = appWith({ ...shared, limiter: stack('h'), cost: estimateOf });
    const statuses: number[] = [];
    try {
      const schedule: [number, Call][] = [
        [0, { estimate: 300, used: 100 }],
        [1_000, { estimate: 300 }],
        [1_000, { estimate: 500, used: 700 }],
        [500, { estimate: 200 }],
        [2_000, { estimate: 10 }],
        [3_000, { estimate: 10 }],
        [5_000, { estimate: 50, used: 0 }],
        [45_000, { estimate: 900 }],
        [20_000, { estimate: 900, used: 900 }],
      ];
      for (const [stepMs, call] of schedule) {
        clock.advanceMs(stepMs);
        const response = await fetch(`${server.url}/`, { method: 'POST', body: JSON.stringify(call), headers: { 'content-type': 'application/json' } });
        const fromExpress: Seen = {
          status: response.status,
          headers: rateLimitHeaders(response),
          contentType: response.headers.get('content-type'),
          body: await response.text(),
        };
        const fromHono = await post(hono, call);
        // A 200's content type is the route's own (each framework's json()); a 429's is the middleware's.
        const answer = (seen: Seen): Seen => (seen.status === 200 ? { ...seen, contentType: null } : seen);
        expect(answer(fromHono), `after +${stepMs} ms, ${JSON.stringify(call)}`).to.deep.equal(answer(fromExpress));
        statuses.push(fromHono.status);
      }
    } finally {
      await server.close();
    }
    expect(statuses, 'the schedule meets both tiers').to.include.members([200, 429]);
  });
});
