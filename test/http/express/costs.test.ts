// The Express middleware with budgets of cost (limiters with `maxCostInInterval`)
// over real HTTP, in memory on an injected clock so that every header value is
// exact: a request reserves its `cost` (a number or a function of `req`), a
// handler settles it with `res.locals.rateLimit.settle(used)`, and the headers
// report the budget.

import { expect } from 'chai';
import express, { type ErrorRequestHandler, type Express, type Request, type Response } from 'express';
import { RateLimiterStack, RollingRateLimiter, type RollingRateLimiterOptions, type StackRateLimitInfo } from '../../../src/index.js';
import { rateLimit, type RateLimitOptions, type RequestRateLimit } from '../../../src/http/express/express-middleware.js';
import type { HttpRateLimiter } from '../../../src/http/policies.js';
import { TestClock } from '../../support/test-clock.js';
import { get, serve, type RunningServer } from '../http-helpers.js';

const servers: RunningServer[] = [];

/** What the middleware left for the handler. */
const decisionOf = (res: Response): RequestRateLimit => res.locals.rateLimit as RequestRateLimit;

/**
 * `GET /`: settles the request to `x-used` (and again to `x-used-again`) when given, and answers what it saw:
 * `{ cost, actionId, settled: [...] }`. Errors go to a handler that reports their name and message with a 500.
 */
function appWith<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): Express {
  const app = express();
  app.use(rateLimit(options));
  app.get('/', async (req: Request, res: Response) => {
    const decision = decisionOf(res);
    const settled: boolean[] = [];
    for (const header of ['x-used', 'x-used-again']) {
      const used = req.get(header);
      if (used !== undefined) settled.push(await decision.settle(JSON.parse(used) as number));
    }
    res.json({ cost: decision.cost, actionId: decision.actionId, settled, alreadyAdmitted: decision.alreadyAdmitted ?? false });
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

interface Answer {
  readonly cost: number;
  readonly actionId: string | undefined;
  readonly settled: boolean[];
  readonly alreadyAdmitted: boolean;
}

const answer = (body: string): Answer => JSON.parse(body) as Answer;

/** What is left of the budget of `user`: a dry run of cost 1 reports what would be left after it, when it fits. */
async function budgetLeft(limiter: RollingRateLimiter): Promise<number> {
  const { blocked, costRemaining = Number.NaN } = await limiter.wouldLimitWithInfo('user', { cost: 1 });
  return blocked ? costRemaining : costRemaining + 1;
}

describe('rateLimit (Express) with budgets of cost, in memory', () => {
  let clock: TestClock;
  /** 10,000 units per minute, with blocked requests not counted (the API mode the guide recommends). */
  const budget = (options: Partial<RollingRateLimiterOptions> = {}): RollingRateLimiter =>
    new RollingRateLimiter({ namespace: 'tokens', interval: 60_000, maxCostInInterval: 10_000, countBlocked: false, clock: clock.read, ...options });

  beforeEach(() => {
    clock = new TestClock();
  });

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  describe('reserving', () => {
    it('reserves a fixed cost, reports the budget in the headers, and answers 429 with the exact Retry-After once it is spent', async () => {
      const url = await start(appWith({ limiter: budget(), key: () => 'user', cost: 4_000 }));
      const policy = '"tokens";q=10000;w=60';

      const first = await get(url);
      expect(first.status).to.equal(200);
      expect(first.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"tokens";r=6000' });
      expect(answer(first.body)).to.include({ cost: 4_000 });

      clock.advanceMs(10_000);
      const second = await get(url);
      expect(second.status).to.equal(200);
      // 2,000 left: a smaller request fits now; one of 4,000 when the first leaves the window, in 50 s.
      expect(second.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"tokens";r=2000;t=50' });

      clock.advanceMs(10_000);
      const third = await get(url);
      expect(third.status).to.equal(429);
      expect(third.headers).to.deep.equal({ 'RateLimit-Policy': policy, RateLimit: '"tokens";r=2000;t=40', 'Retry-After': '40' });
      expect(JSON.parse(third.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 40 });

      clock.advanceUs(40_000_000 - 1); // 1 µs before the first request leaves the window
      expect((await get(url)).headers['Retry-After']).to.equal('1');
      clock.advanceUs(1);
      const fourth = await get(url);
      expect(fourth.status).to.equal(200);
      expect(fourth.headers.RateLimit).to.equal('"tokens";r=2000;t=10');
    });

    it('takes the cost from a function of the request, sync or async', async () => {
      const sync = await start(appWith({ limiter: budget(), key: () => 'user', cost: (req) => Number(req.get('x-cost')) }));
      const costOf = async (req: Request): Promise<number> => {
        await new Promise((resolve) => setImmediate(resolve));
        return Number(req.get('x-cost'));
      };
      const asynchronous = await start(appWith({ limiter: budget({ namespace: 'tokens-async' }), key: () => 'user', cost: costOf }));
      for (const url of [sync, asynchronous]) {
        const small = await get(url, { 'x-cost': '300' });
        expect(answer(small.body)).to.include({ cost: 300 });
        expect(small.headers.RateLimit).to.match(/;r=9700$/);
        const large = await get(url, { 'x-cost': '9700' });
        expect([large.status, answer(large.body).cost]).to.deep.equal([200, 9_700]);
        expect(large.headers.RateLimit).to.match(/;r=0;t=60$/);
        const blocked = await get(url, { 'x-cost': '1' });
        expect([blocked.status, blocked.headers['Retry-After']]).to.deep.equal([429, '60']);
      }
    });

    it('reserves the limiter’s defaultCost per request when no cost is given (without one it is refused), and makes an action id for each request', async () => {
      expect(() => rateLimit({ limiter: budget(), key: () => 'user' })).to.throw(
        TypeError,
        /Expected `cost` for a limiter with a budget of cost \(`maxCostInInterval`, namespace `tokens`\), got none: .*declare `defaultCost` on the limiter/,
      );
      const url = await start(appWith({ limiter: budget({ defaultCost: 1 }), key: () => 'user' }));
      const [first, second] = [answer((await get(url)).body), answer((await get(url)).body)];
      expect([first.cost, second.cost]).to.deep.equal([1, 1]);
      expect(first.actionId).to.be.a('string').and.not.equal(second.actionId);
      expect((await get(url)).headers.RateLimit).to.equal('"tokens";r=9997');
    });

    it('reports the binding tier of a stack of requests and cost: the one that admits the fewest more requests like this one', async () => {
      const requests = new RollingRateLimiter({ namespace: 'rpm', interval: 60_000, maxInInterval: 5, countBlocked: false, clock: clock.read });
      const stack = new RateLimiterStack([requests, budget({ namespace: 'tpm' })]);
      let seen: StackRateLimitInfo | undefined;
      const app = express();
      app.use(rateLimit({ limiter: stack, key: () => 'user', cost: (req) => Number(req.get('x-cost')), headers: 'both' }));
      app.get('/', (_req, res) => {
        seen = decisionOf(res) as StackRateLimitInfo & RequestRateLimit;
        res.send('ok');
      });
      const url = await start(app);
      const policy = '"rpm";q=5;w=60, "tpm";q=10000;w=60';

      // 4,000 of 10,000: one more such request fits in the budget, four in the request tier.
      const first = await get(url, { 'x-cost': '4000' });
      expect(first.headers).to.deep.equal({
        'RateLimit-Policy': policy,
        RateLimit: '"tpm";r=6000',
        'X-RateLimit-Limit': '10000',
        'X-RateLimit-Remaining': '6000',
        'X-RateLimit-Reset': '0',
      });
      expect(seen?.costRemaining).to.equal(6_000);
      expect(seen?.tiers.map((tier) => [tier.actionsRemaining, tier.costRemaining])).to.deep.equal([
        [4, undefined],
        [1, 6_000],
      ]);

      // A small request: the request tier admits fewer more of them (3) than the budget (599).
      const second = await get(url, { 'x-cost': '10' });
      expect(second.headers).to.include({ RateLimit: '"rpm";r=3', 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '3' });

      // Too much for the budget: blocked by it, with its wait, and counted by neither tier.
      clock.advanceMs(1_000);
      const blocked = await get(url, { 'x-cost': '6000' });
      expect(blocked.status).to.equal(429);
      expect(blocked.headers).to.include({ RateLimit: '"tpm";r=5990;t=59', 'Retry-After': '59', 'X-RateLimit-Remaining': '5990' });
      const small = await get(url, { 'x-cost': '5990' });
      expect(small.status).to.equal(200);
      // Full: one more of 5,990 fits once all three have left the window, the last at 61 s.
      expect(small.headers).to.include({ RateLimit: '"tpm";r=0;t=60' });
    });
  });

  describe('settling', () => {
    it('settles down: what the request did not use is back in the budget for the next request at once', async () => {
      const limiter = budget();
      const url = await start(appWith({ limiter, key: () => 'user', cost: 4_000 }));
      const first = await get(url, { 'x-used': '500' });
      expect(answer(first.body).settled).to.deep.equal([true]);
      expect(first.headers.RateLimit, 'the headers are the decision, made with the reservation').to.equal('"tokens";r=6000');
      expect((await get(url)).headers.RateLimit).to.equal('"tokens";r=5500');
      expect((await get(url)).headers.RateLimit).to.equal('"tokens";r=1500;t=60');
      expect((await get(url)).status).to.equal(429);
      expect(await budgetLeft(limiter)).to.equal(1_500);
    });

    it('keeps the reservation of a request never settled', async () => {
      const url = await start(appWith({ limiter: budget(), key: () => 'user', cost: 4_000 }));
      expect((await get(url)).status).to.equal(200);
      expect((await get(url)).headers.RateLimit).to.equal('"tokens";r=2000;t=60');
      const blocked = await get(url);
      expect([blocked.status, blocked.headers['Retry-After']]).to.deep.equal([429, '60']);
    });

    it('settles up: the window records what was used, and the next request waits until it drains, with the exact Retry-After', async () => {
      const limiter = budget();
      const url = await start(appWith({ limiter, key: () => 'user', cost: 1_000 }));
      expect(answer((await get(url, { 'x-used': '9500' })).body).settled).to.deep.equal([true]);
      clock.advanceMs(5_000);
      const blocked = await get(url);
      expect(blocked.status).to.equal(429);
      expect(blocked.headers).to.include({ RateLimit: '"tokens";r=500;t=55', 'Retry-After': '55' });
      clock.advanceMs(55_000);
      expect((await get(url)).headers.RateLimit).to.equal('"tokens";r=9000');
    });

    it('settles over the budget too, recording the truth: later requests wait for the window to drain', async () => {
      const limiter = budget();
      const url = await start(appWith({ limiter, key: () => 'user', cost: 1_000 }));
      expect((await get(url)).status).to.equal(200);
      // 1,000 and then the whole budget: the window holds 11,000 of 10,000.
      expect(answer((await get(url, { 'x-used': '10000' })).body).settled).to.deep.equal([true]);
      clock.advanceMs(30_000);
      expect((await get(url)).headers).to.include({ RateLimit: '"tokens";r=0;t=30', 'Retry-After': '30' });
    });

    it('is idempotent: settling twice to the same cost is one settlement, and settling again sets the cost again', async () => {
      const limiter = budget();
      const url = await start(appWith({ limiter, key: () => 'user', cost: 4_000 }));
      expect(answer((await get(url, { 'x-used': '2000', 'x-used-again': '2000' })).body).settled).to.deep.equal([true, true]);
      expect(await budgetLeft(limiter)).to.equal(8_000);
      expect(answer((await get(url, { 'x-used': '0', 'x-used-again': '3000' })).body).settled).to.deep.equal([true, true]);
      expect(await budgetLeft(limiter)).to.equal(5_000);
    });

    it('resolves false for a blocked request, and gives back nothing (with countBlocked, the blocked record keeps its cost)', async () => {
      for (const countBlocked of [false, true]) {
        const limiter = budget({ namespace: `blocked-${countBlocked}`, countBlocked });
        const settled: boolean[] = [];
        const url = await start(
          appWith({
            limiter,
            key: () => 'user',
            cost: 6_000,
            onLimited: async (_req, res) => {
              settled.push(await decisionOf(res).settle(0));
              res.json({ settled });
            },
          }),
        );
        await get(url);
        const blocked = await get(url);
        expect([blocked.status, settled], `countBlocked: ${countBlocked}`).to.deep.equal([429, [false]]);
        // The first request's 6,000, and with countBlocked the blocked request's 6,000 as well.
        expect(await budgetLeft(limiter)).to.equal(countBlocked ? 0 : 4_000);
      }
    });

    it('hands every callback the same decision, with its settle', async () => {
      const limiter = budget({ onStoreError: 'allow' });
      const seen: unknown[] = [];
      const url = await start(
        appWith({
          limiter,
          key: () => 'user',
          cost: 9_000,
          message: (_req, info) => {
            seen.push(info);
            return 'no';
          },
        }),
      );
      await get(url);
      await get(url);
      const info = seen[0] as RequestRateLimit;
      expect(info).to.include({ blocked: true, cost: 9_000 });
      expect(await info.settle(1)).to.equal(false);
    });
  });

  describe('action ids', () => {
    it('takes the action id from `actionId`: a repeated id is counted once, and can be settled from elsewhere', async () => {
      const limiter = budget();
      const url = await start(appWith({ limiter, key: () => 'user', cost: 4_000, actionId: (req) => req.get('x-request-id') }));
      const first = answer((await get(url, { 'x-request-id': 'request-1' })).body);
      expect(first).to.include({ actionId: 'request-1', alreadyAdmitted: false });
      const again = await get(url, { 'x-request-id': 'request-1' });
      expect(answer(again.body)).to.include({ actionId: 'request-1', alreadyAdmitted: true });
      expect(again.headers.RateLimit).to.equal('"tokens";r=6000');
      // Nothing from the function: the middleware makes an id.
      const made = answer((await get(url, { 'x-request-id': '' })).body).actionId;
      expect(made).to.be.a('string').with.length.above(0);
      expect(await limiter.settle('user', 'request-1', 1_000)).to.equal(true);
      expect(await budgetLeft(limiter)).to.equal(5_000);
    });

    it('gives no action id on a limiter that counts actions unless `actionId` gives one', async () => {
      const limiter = new RollingRateLimiter({ namespace: 'actions', interval: 60_000, maxInInterval: 2 });
      const url = await start(appWith({ limiter, key: () => 'user' }));
      expect(answer((await get(url)).body)).to.deep.equal({ cost: 1, settled: [], alreadyAdmitted: false });
      const withIds = await start(
        appWith({ limiter: new RollingRateLimiter({ namespace: 'actions-ids', interval: 60_000, maxInInterval: 2 }), key: () => 'user', actionId: () => 'a' }),
      );
      expect(answer((await get(withIds)).body)).to.include({ actionId: 'a', alreadyAdmitted: false });
      expect(answer((await get(withIds)).body)).to.include({ actionId: 'a', alreadyAdmitted: true });
      expect((await get(withIds)).headers.RateLimit, 'counted once').to.equal('"actions-ids";r=1');
    });
  });

  describe('errors', () => {
    const actions = new RollingRateLimiter({ namespace: 'errors-actions', interval: 60_000, maxInInterval: 5 });
    const made =
      (options: object): (() => unknown) =>
      () =>
        rateLimit(options as RateLimitOptions);

    it('refuses, when it is made, a cost for a limiter without a budget of cost, and a cost no request could be admitted with', () => {
      expect(made({ limiter: actions, cost: 5 })).to.throw(TypeError, /Got `cost` `5` \(number\) for a limiter that counts actions \(`maxInInterval`\)/);
      expect(made({ limiter: actions, cost: () => 5 })).to.throw(TypeError, /Got `cost` a function for a limiter that counts actions/);
      const tokens = budget();
      expect(made({ limiter: tokens, cost: 10_001 })).to.throw(
        RangeError,
        /Expected `cost` to be at most `maxCostInInterval` \(10000, namespace `tokens`\), got `10001` \(number\): no request could ever be admitted/,
      );
      expect(made({ limiter: tokens, cost: 0 })).to.throw(RangeError, /`cost` to be a positive safe integer or a function of the request, got `0`/);
      expect(made({ limiter: tokens, cost: 1.5 })).to.throw(RangeError, /`cost` to be a positive safe integer/);
      expect(made({ limiter: tokens, cost: '5' })).to.throw(
        TypeError,
        /`cost` to be a positive safe integer or a function of the request, got `"5"` \(string\)/,
      );
      expect(made({ limiter: tokens, actionId: 'x' })).to.throw(TypeError, /`actionId` to be a function, got `"x"`/);
      expect(made({ limiter: tokens, cost: 10_000 })).to.not.throw();
      const unclocked = new RollingRateLimiter({ namespace: 'errors-tokens', interval: 60_000, maxCostInInterval: 10 });
      expect(made({ limiter: new RateLimiterStack([actions, unclocked]), cost: () => 1 })).to.not.throw();
    });

    it('sends a cost function that returns no cost or a bad one to the error handler, and answers 413 for one over the budget', async () => {
      const costs: Record<string, unknown> = { none: undefined, zero: 0, fraction: 2.5, over: 10_001, text: '5' };
      const url = await start(appWith({ limiter: budget(), key: () => 'user', cost: (req) => costs[req.get('x-case') ?? ''] as number }));
      const failure = async (name: string): Promise<{ name: string; message: string }> => {
        const seen = await get(url, { 'x-case': name });
        expect(seen.status, name).to.equal(500); // this app's handler answers 500 for any error (Express's own: 400, test/http/cost-refusals.test.ts)
        return JSON.parse(seen.body) as { name: string; message: string };
      };
      expect(await failure('none')).to.deep.equal({
        name: 'InvalidOptionTypeError',
        message: "rateLimit's `cost` returned `undefined` for GET /: return the request's cost, a positive safe integer",
      });
      expect(await failure('text')).to.include({ name: 'InvalidOptionTypeError' });
      expect(await failure('zero')).to.include({ name: 'InvalidOptionRangeError', message: 'Expected `cost` to be a positive safe integer, got `0` (number)' });
      expect(await failure('fraction')).to.include({ name: 'InvalidOptionRangeError' });
      const over = await get(url, { 'x-case': 'over' });
      expect([over.status, JSON.parse(over.body)]).to.deep.equal([413, { error: 'cost_exceeds_budget', cost: 10_001, maxCost: 10_000 }]);
    });

    it('rejects a settle with a bad cost, and any settle on a limiter that counts actions', async () => {
      const tokens = await start(appWith({ limiter: budget(), key: () => 'user', cost: 10 }));
      for (const [used, name, message] of [
        ['-1', 'InvalidOptionRangeError', /safe integer from 0, got `-1`/],
        ['1.5', 'InvalidOptionRangeError', /got `1.5`/],
        ['"5"', 'InvalidOptionTypeError', /got `"5"` \(string\)/],
      ] as const) {
        const seen = await get(tokens, { 'x-used': used });
        expect(seen.status, used).to.equal(500);
        const error = JSON.parse(seen.body) as { name: string; message: string };
        expect(error.name, used).to.equal(name);
        expect(error.message, used).to.match(message);
      }
      const url = await start(appWith({ limiter: actions, key: () => 'user' }));
      const seen = await get(url, { 'x-used': '1' });
      expect(seen.status).to.equal(500);
      expect(JSON.parse(seen.body)).to.deep.equal({
        name: 'InvalidOptionTypeError',
        message: '`settle` sets the cost of a request, and this limiter counts actions: give it `maxCostInInterval`, or stack one that has it',
      });
    });
  });
});
