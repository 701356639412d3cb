// `rolling-window-limiter/hono`: rate limiting as Hono middleware, with the
// IETF draft's RateLimit-Policy / RateLimit headers on every response and a
// 429 with Retry-After when blocked, the same as the Express middleware's for
// the same decision (both use middleware-decision.ts). Hono appears here only
// as types, and the code uses only the web's Request, Response and Headers
// through Hono's context: importing this entry loads neither Hono nor
// anything of a particular runtime. The options are in hono-options.ts.

import type { Context, MiddlewareHandler } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import { describeValue } from '../../core/check.js';
import { ipWithoutPort, reduceIp, type Ipv6Subnet } from '../ip-key.js';
import { COST_EXCEEDS_BUDGET_STATUS } from '../cost-refusal.js';
import { createDecider, limitedBody, type RequestRateLimit } from '../middleware-decision.js';
import type { HttpRateLimiter } from '../policies.js';
import { normalizeHonoOptions, type RateLimitOptions } from './hono-options.js';

export { retryAfterSeconds, toStructuredString } from '../header-values.js';
export { createRateLimitHeaders, type RateLimitHeaderOptions, type RateLimitHeadersFor, type RateLimitHeaderStyle } from '../headers.js';
export { policiesOf, tierStatuses, type HttpRateLimiter, type InfoOf, type RateLimitPolicy, type TierStatus } from '../policies.js';
export { ipKey, DEFAULT_IPV6_SUBNET, type Ipv6Subnet } from '../ip-key.js';
export type { RateLimitActionIdFunction, RateLimitCostFunction, RateLimitMessage } from '../middleware-options.js';
export type { RateLimitedBody, RequestCost, RequestRateLimit } from '../middleware-decision.js';
export type { CostExceedsBudgetBody, InvalidCostBody } from '../cost-refusal.js';
export type { RateLimitKey, RateLimitMessageFunction, RateLimitOptions } from './hono-options.js';

/**
 * The variables the middleware sets on the context: `c.get('rateLimit')` (or
 * `c.var.rateLimit`) is the decision, for later handlers, with the request's
 * `actionId`, `cost` and `settle`.
 */
export interface RateLimitEnv<Limiter extends HttpRateLimiter = HttpRateLimiter> {
  /** The context's variables. */
  readonly Variables: {
    /** The decision for this request, with its `settle` (unset for a request `skip` let through). */
    readonly rateLimit: RequestRateLimit<Limiter>;
  };
}

/**
 * Hono middleware that rate-limits requests with a
 * {@link rolling-window-limiter!RollingRateLimiter | RollingRateLimiter} or a
 * {@link rolling-window-limiter!RateLimiterStack | RateLimiterStack}: each request is one attempt for its key,
 * from `key`, or from `connInfo` (the client IP, as your runtime's adapter
 * reports it). One of the two must be given.
 *
 * - Allowed: the request goes on (`next()`), and the response gets
 *   `RateLimit-Policy` and `RateLimit` headers (see {@link createRateLimitHeaders})
 *   unless a later handler set its own.
 * - Blocked: status 429, `Retry-After` in whole seconds rounded up (never 0
 *   while there is time left), the same rate-limit headers, and the body
 *   (`message` or `onLimited`; by default `{ "error": "rate_limited", "retryAfterSeconds": n }`).
 *   Headers, status and body are those the Express middleware sends for the same decision.
 * - The decision is also left in `c.get('rateLimit')` for later handlers
 *   (a {@link RequestRateLimit}: the limiter's info, the request's `actionId`
 *   and `cost`, and `settle`).
 * - With a limiter that counts cost (`maxCostInInterval`, or a stack with such
 *   a tier), each request reserves its `cost` (a number, or a function of the
 *   context `c`) under an action id of its own, and a handler settles it to
 *   what it used with `c.var.rateLimit.settle(used)`; a reservation never settled stands. A request whose cost
 *   is above a tier's whole budget gets a 413 (a {@link CostExceedsBudgetBody}), counted by no tier; one whose
 *   cost is not a positive safe integer throws the limiter's error to `app.onError` with `status` 400 and a
 *   `getResponse()` (a 400 with an {@link InvalidCostBody}), which Hono's default handler sends.
 * - Store failures follow the limiter's `onStoreError`: with `'throw'` (the
 *   default) the middleware throws the error (a `StoreError` or
 *   `TimeoutError`, both `RateLimiterError`s) to Hono's error handling
 *   (`app.onError`); with `'allow'`, `'block'` or a fallback the request is
 *   decided by the policy's answer like any other, after `onStoreFailure`.
 * - Errors from the key function or any other callback go to `app.onError` too.
 *
 * The same limiter may guard several routes; they then share one limit per key.
 * Note that with `countBlocked: true` (the default) blocked requests count too,
 * so a client that keeps retrying stays blocked until it slows down.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { serve } from '@hono/node-server';
 * import { getConnInfo } from '@hono/node-server/conninfo';
 * import { RollingRateLimiter } from 'rolling-window-limiter';
 * import { rateLimit } from 'rolling-window-limiter/hono';
 *
 * const limiter = new RollingRateLimiter({ client: redis, namespace: 'api', interval: 60_000, maxInInterval: 100, countBlocked: false });
 *
 * const app = new Hono();
 * app.use('/api/*', rateLimit({ limiter, connInfo: getConnInfo }));
 * app.get('/api/hello', (c) => c.text('hello'));
 * serve({ fetch: app.fetch, port: 3000 });
 * ```
 *
 * @throws TypeError (at once, not per request) when neither `key` nor `connInfo` is given, or both, or when an
 * option has the wrong type or is unknown, or `cost` is given for a limiter without a tier that counts cost.
 * @throws RangeError when `headers` is a string other than its values, `ipv6Subnet` a number out of range, or
 * `cost` a number that is not a positive safe integer or above a tier's `maxCostInInterval`.
 */
export function rateLimit<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): MiddlewareHandler<RateLimitEnv<Limiter>> {
  const { key, connInfo, message, onLimited, ipv6Subnet, ...checked } = normalizeHonoOptions(options);
  const decide = createDecider<Context>({
    ...checked,
    key: key ?? connInfoKey(connInfo as GetConnInfo, ipv6Subnet),
    describe: (c) => `${c.req.method} ${c.req.path}`,
    noAddress: key === undefined ? 'connInfo gave no remote address' : undefined,
  });

  return async function rateLimitMiddleware(c, next) {
    const decided = await decide(c);
    if (decided === undefined) return next();
    if ('exceedsBudget' in decided) {
      const { text, contentType } = decided.exceedsBudget;
      return c.body(text, COST_EXCEEDS_BUDGET_STATUS, { 'Content-Type': contentType });
    }
    const { info, headers } = decided;
    c.set('rateLimit', info as RequestRateLimit<Limiter>);
    if (!info.blocked) {
      await next();
      // After the handler, so that they reach a Response it built itself too; a header it set is its own.
      for (const [name, value] of Object.entries(headers)) if (!c.res.headers.has(name)) setOnResponse(c, name, value);
      return;
    }
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
    c.status(429);
    if (onLimited !== undefined) return onLimited(c, info);
    const { text, contentType } = await limitedBody(message, c, info);
    return c.body(text, 429, { 'Content-Type': contentType });
  };
}

/**
 * Sets a header on the handler's Response in place, as Hono's own
 * secureHeaders does. `c.header` would copy the Response, and on Bun the copy
 * loses the Content-Type that Bun gives a body it knows only when it sends it
 * (`c.text('ok')` went out as `application/octet-stream`). A Response whose
 * headers cannot change (one from `fetch()`) is copied by `c.header` instead.
 */
function setOnResponse(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/**
 * The `connInfo` key: the remote address, without a port, reduced by `ipKey`;
 * `undefined` when the adapter knows no address; a `TypeError` for one that
 * is not an IP address (keyed as it is, it could give each connection a limit
 * of its own).
 */
function connInfoKey(connInfo: GetConnInfo, ipv6Subnet: Ipv6Subnet): (c: Context) => string | undefined {
  return (c) => {
    const address = connInfo(c).remote.address;
    if (address === undefined || address === '') return undefined;
    const ip = ipWithoutPort(address);
    if (ip !== undefined) return reduceIp(ip, ipv6Subnet);
    throw new TypeError(
      `rateLimit refused ${c.req.method} ${c.req.path}: connInfo gave the remote address ${describeValue(address)}, which is not an IP address ` +
        '(with or without a port): keyed as it is, it could give each connection a limit of its own. Give a `key` function instead',
    );
  };
}
