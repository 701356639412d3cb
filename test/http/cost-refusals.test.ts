// What the middlewares (Express, Hono) answer when the limiter refuses a
// request's cost, which comes from the request (the `cost` option's function):
//
// - a cost above a tier's whole budget (`maxCostInInterval`), which no window
//   could ever hold, is the client's request being too large: the middleware
//   answers 413 Content Too Large itself, with a body that says so, no
//   `Retry-After` (waiting never helps), and nothing counted;
// - a cost that is no positive safe integer (0, negative, a fraction, NaN,
//   Infinity, not a number) goes to the framework's error handling, marked as
//   a client error (`status` / `statusCode` 400, Hono's `getResponse()`), so
//   that the framework's own handler answers 400 and no stack trace reaches
//   the client (Express in production; Hono's default `onError`).
//
// The NestJS guard and the express-rate-limit / @fastify/rate-limit stores
// take no cost, so these are the only places a request's cost is refused.
// Limiters in memory; Express over real HTTP, Hono through `app.request()`.

import { expect } from 'chai';
import express, { type ErrorRequestHandler, type Express, type Request } from 'express';
import { Hono, type Context } from 'hono';
import sinon from 'sinon';
import { RateLimiterStack, RollingRateLimiter } from '../../src/index.js';
import { rateLimit as expressRateLimit } from '../../src/http/express/express-middleware.js';
import { rateLimit as honoRateLimit } from '../../src/http/hono/hono-middleware.js';
import type { HttpRateLimiter } from '../../src/http/policies.js';
import { TestClock } from '../support/test-clock.js';
import { get, rateLimitHeaders, serve, type RunningServer, type Seen } from './http-helpers.js';

/** The costs the tests send in `x-cost`, by name: each read by the cost function as it is. */
const COSTS: Readonly<Record<string, unknown>> = {
  zero: 0,
  negative: -5,
  fraction: 2.5,
  nan: Number.NaN,
  infinity: Number.POSITIVE_INFINITY,
  unsafe: 2 ** 53,
  text: '5',
  none: undefined,
  null: null,
};
const costOf = (name: string | undefined): number => COSTS[name ?? ''] as number;
/** A number from `x-cost` when it is one, else the named value of COSTS. */
const requested = (header: string | undefined): number => (header !== undefined && /^\d+$/.test(header) ? Number(header) : costOf(header));

let clock: TestClock;
let count = 0;

/** 10,000 units per minute, with blocked requests not counted. */
function tokens(maxCostInInterval = 10_000): RollingRateLimiter {
  count += 1;
  return new RollingRateLimiter({ namespace: `refusals-${count}`, interval: 60_000, maxCostInInterval, countBlocked: false, clock: clock.read });
}

/** 3 requests a minute, blocked ones counted, 10,000 and 50,000 units per minute: three tiers decided together. */
function stack(): RateLimiterStack {
  count += 1;
  const requests = new RollingRateLimiter({ namespace: `refusals-${count}-rpm`, interval: 60_000, maxInInterval: 3, clock: clock.read });
  return new RateLimiterStack([requests, tokens(10_000), tokens(50_000)]);
}

/** The 413's body. */
const tooLarge = (cost: number, maxCost: number): string => JSON.stringify({ error: 'cost_exceeds_budget', cost, maxCost });

beforeEach(() => {
  clock = new TestClock();
});

describe('a request whose cost the limiter refuses, with Express', () => {
  const servers: RunningServer[] = [];
  let logged: sinon.SinonStub | undefined;

  afterEach(async () => {
    logged?.restore();
    logged = undefined;
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  /** `GET /` with the cost from `x-cost`; `handler` (if given) is the app's error handler. */
  async function start(limiter: HttpRateLimiter, setup: (app: Express) => void = () => undefined, handler?: ErrorRequestHandler): Promise<string> {
    const app = express();
    setup(app);
    app.use(expressRateLimit({ limiter, key: () => 'user', cost: (req: Request) => requested(req.get('x-cost')) }));
    app.get('/', (_req, res) => void res.send('ok'));
    if (handler !== undefined) app.use(handler);
    const server = await serve(app);
    servers.push(server);
    return `${server.url}/`;
  }

  it('answers 413 for a cost above the budget, with a body that says so, no Retry-After, and counts nothing', async () => {
    const limiter = tokens();
    const url = await start(limiter);
    const refused = await get(url, { 'x-cost': '10001' });
    expect(refused.status).to.equal(413);
    expect(refused.contentType).to.equal('application/json; charset=utf-8');
    expect(refused.body).to.equal(tooLarge(10_001, 10_000));
    expect(refused.headers, 'not decided: no rate-limit headers, and no Retry-After').to.deep.equal({});
    expect((await get(url, { 'x-cost': '10000' })).status, 'the whole budget is still there').to.equal(200);
  });

  it('answers 413 on a stack with the smallest budget, and no tier counts the request', async () => {
    const url = await start(stack());
    for (const cost of ['20000', '60000']) {
      const refused = await get(url, { 'x-cost': cost });
      expect([refused.status, refused.body]).to.deep.equal([413, tooLarge(Number(cost), 10_000)]);
    }
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await get(url, { 'x-cost': '1' })).status);
    expect(statuses, 'the tier of 3 requests saw none of the refused ones').to.deep.equal([200, 200, 200, 429]);
  });

  it("sends a cost that is no positive safe integer to the error handler, as a 400: Express's own answers 400, without the stack in production", async () => {
    logged = sinon.stub(console, 'error'); // Express's handler logs the error on the server
    const url = await start(tokens(), (app) => app.set('env', 'production'));
    for (const name of Object.keys(COSTS)) {
      const seen = await get(url, { 'x-cost': name });
      expect(seen.status, name).to.equal(400);
      expect(seen.body, name).to.include('Bad Request');
      expect(seen.body, `${name}: no stack trace, no message`).to.not.match(/\bat |cost|Invalid/);
    }
    expect(logged.callCount, 'each logged on the server').to.equal(Object.keys(COSTS).length);
    const [first] = logged.firstCall.args as [Error & { status?: number }];
    expect([first.name, first.message, first.status]).to.deep.equal([
      'InvalidOptionRangeError',
      'Expected `cost` to be a positive safe integer, got `0` (number)',
      400,
    ]);
  });

  it("hands the app's error handler the limiter's error, with status and statusCode 400 and expose true", async () => {
    const seen: unknown[] = [];
    const handler: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
      seen.push(error);
      res.status(499).end();
    };
    const url = await start(tokens(), undefined, handler);
    for (const name of ['zero', 'fraction', 'nan', 'text', 'none']) expect((await get(url, { 'x-cost': name })).status).to.equal(499);
    const fields = seen.map((error) => {
      const { name, message, status, statusCode, expose } = error as Error & Record<string, unknown>;
      return { name, message, status, statusCode, expose, range: error instanceof RangeError, type: error instanceof TypeError };
    });
    const client = { status: 400, statusCode: 400, expose: true };
    expect(fields).to.deep.equal([
      { name: 'InvalidOptionRangeError', message: 'Expected `cost` to be a positive safe integer, got `0` (number)', ...client, range: true, type: false },
      { name: 'InvalidOptionRangeError', message: 'Expected `cost` to be a positive safe integer, got `2.5` (number)', ...client, range: true, type: false },
      { name: 'InvalidOptionRangeError', message: 'Expected `cost` to be a positive safe integer, got `NaN` (number)', ...client, range: true, type: false },
      {
        name: 'InvalidOptionTypeError',
        message: 'rateLimit\'s `cost` returned `"5"` (string) for GET /: return the request\'s cost, a positive safe integer',
        ...client,
        range: false,
        type: true,
      },
      {
        name: 'InvalidOptionTypeError',
        message: "rateLimit's `cost` returned `undefined` for GET /: return the request's cost, a positive safe integer",
        ...client,
        range: false,
        type: true,
      },
    ]);
  });

  it('leaves any other error as it was: a cost function that throws', async () => {
    const seen: unknown[] = [];
    const app = express();
    const failing = new Error('no tokenizer');
    app.use(
      expressRateLimit({
        limiter: tokens(),
        key: () => 'user',
        cost: () => {
          throw failing;
        },
      }),
    );
    app.use(((error: unknown, _req, res, _next) => {
      seen.push(error);
      res.status(500).end();
    }) as ErrorRequestHandler);
    const server = await serve(app);
    servers.push(server);
    expect((await get(`${server.url}/`)).status).to.equal(500);
    expect(seen).to.deep.equal([failing]);
    expect(failing).to.not.have.property('status');
  });
});

describe('a request whose cost the limiter refuses, with Hono', () => {
  /** `GET /` with the cost from `x-cost`, and the app's `onError` when given. */
  function app(limiter: HttpRateLimiter, onError?: (error: Error, c: Context) => Response): Hono {
    const hono = new Hono().use(honoRateLimit({ limiter, key: () => 'user', cost: (c) => requested(c.req.header('x-cost')) })).get('/', (c) => c.text('ok'));
    if (onError !== undefined) hono.onError(onError);
    return hono as unknown as Hono;
  }

  async function request(hono: Hono, cost: string): Promise<Seen> {
    const response = await hono.request('/', { headers: { 'x-cost': cost } });
    return { status: response.status, headers: rateLimitHeaders(response), contentType: response.headers.get('content-type'), body: await response.text() };
  }

  it('answers 413 for a cost above the budget, as the Express middleware does, and counts nothing', async () => {
    const hono = app(stack());
    const refused = await request(hono, '10001');
    expect(refused).to.deep.equal({ status: 413, headers: {}, contentType: 'application/json; charset=utf-8', body: tooLarge(10_001, 10_000) });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await request(hono, '10')).status);
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
  });

  it("throws a cost that is no positive safe integer to Hono's error handling: its default onError answers 400, with the message and no stack", async () => {
    const hono = app(tokens());
    for (const name of Object.keys(COSTS)) {
      const seen = await request(hono, name);
      expect([seen.status, seen.contentType], name).to.deep.equal([400, 'application/json; charset=utf-8']);
      const body = JSON.parse(seen.body) as { error: string; message: string };
      expect(body.error, name).to.equal('invalid_cost');
      expect(body.message, name).to.match(/cost/);
      expect(seen.body, name).to.not.match(/\bat /);
    }
    expect(JSON.parse((await request(hono, 'negative')).body)).to.deep.equal({
      error: 'invalid_cost',
      message: 'Expected `cost` to be a positive safe integer, got `-5` (number)',
    });
  });

  it("hands the app's onError the limiter's error, with status 400 and the response Hono's default would send", async () => {
    const seen: Error[] = [];
    const hono = app(tokens(), (error, c) => {
      seen.push(error);
      return c.text('handled', 418);
    });
    expect((await request(hono, 'fraction')).status).to.equal(418);
    const [error] = seen as [Error & { status?: unknown; getResponse?: () => Response }];
    expect(error).to.be.instanceOf(RangeError);
    expect(error.status).to.equal(400);
    const response = error.getResponse?.();
    expect(response?.status).to.equal(400);
    expect(await response?.json()).to.deep.equal({ error: 'invalid_cost', message: 'Expected `cost` to be a positive safe integer, got `2.5` (number)' });
  });
});
