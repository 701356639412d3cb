// The middleware on a budget of cost (`maxCostInInterval`) made without a
// `cost`: each request used to weigh 1 without a word (a budget of 200,000
// tokens spent one token per request). It is now refused when it is made, with
// a `TypeError` that says what to give, unless the limiter declares
// `defaultCost`, which each request then reserves (and reports as its `cost`).
// Express over real HTTP, Hono through `app.request()`, and a stack.

import { expect } from 'chai';
import express from 'express';
import { Hono } from 'hono';
import { InvalidOptionTypeError, RateLimiterStack, RollingRateLimiter, type RollingRateLimiterOptions } from '../../src/index.js';
import { rateLimit, type RequestRateLimit } from '../../src/http/express/express-middleware.js';
import { rateLimit as honoRateLimit } from '../../src/http/hono/hono-middleware.js';
import { TestClock } from '../support/test-clock.js';
import { get, serve, type RunningServer } from './http-helpers.js';

describe('the middleware on a budget of cost without a `cost`', () => {
  let clock: TestClock;
  const servers: RunningServer[] = [];
  beforeEach(() => {
    clock = new TestClock();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  const budget = (options: Partial<RollingRateLimiterOptions> = {}): RollingRateLimiter =>
    new RollingRateLimiter({ namespace: 'tokens', interval: 60_000, maxCostInInterval: 1000, countBlocked: false, clock: clock.read, ...options });
  const refusal =
    /^Expected `cost` for a limiter with a budget of cost \(`maxCostInInterval`, namespace `tokens`\), got none: give each request's cost .*declare `defaultCost` on the limiter$/;

  it('is refused when it is made, Express and Hono alike, for a limiter or a stack with a budget', () => {
    const requests = new RollingRateLimiter({ namespace: 'requests', interval: 60_000, maxInInterval: 5, clock: clock.read });
    for (const limiter of [budget(), new RateLimiterStack([requests, budget()])]) {
      expect(() => rateLimit({ limiter, key: () => 'user' })).to.throw(InvalidOptionTypeError, refusal);
      expect(() => honoRateLimit({ limiter, key: () => 'user' })).to.throw(InvalidOptionTypeError, refusal);
    }
    expect(() => rateLimit({ limiter: requests, key: () => 'user' }), 'a limit of actions needs no cost').to.not.throw();
    expect(() => rateLimit({ limiter: budget(), key: () => 'user', cost: 5 }), 'a cost given').to.not.throw();
  });

  it('reserves the limiter’s defaultCost per request (Express), and reports it as the request’s cost', async () => {
    const limiter = budget({ defaultCost: 400 });
    const app = express();
    app.use(rateLimit({ limiter, key: () => 'user' }));
    app.get('/', (_req, res) => {
      const decision = res.locals.rateLimit as RequestRateLimit;
      res.json({ cost: decision.cost, costRemaining: decision.costRemaining });
    });
    const server = await serve(app);
    servers.push(server);
    const answers = [await get(server.url), await get(server.url), await get(server.url)];
    expect(answers.map(({ status }) => status)).to.deep.equal([200, 200, 429]);
    expect(answers.slice(0, 2).map(({ body }) => JSON.parse(body) as unknown)).to.deep.equal([
      { cost: 400, costRemaining: 600 },
      { cost: 400, costRemaining: 200 },
    ]);
  });

  it('reserves the stack’s defaultCost per request (Hono)', async () => {
    const requests = new RollingRateLimiter({ namespace: 'requests', interval: 60_000, maxInInterval: 5, clock: clock.read });
    const app = new Hono()
      .use(honoRateLimit({ limiter: new RateLimiterStack([requests, budget({ defaultCost: 250 })]), key: () => 'user' }))
      .get('/', (c) => c.json({ cost: c.var.rateLimit.cost, costRemaining: c.var.rateLimit.costRemaining }));
    expect(await (await app.request('/')).json()).to.deep.equal({ cost: 250, costRemaining: 750 });
    expect(await (await app.request('/')).json()).to.deep.equal({ cost: 250, costRemaining: 500 });
  });
});
