// `rolling-window-limiter/express`: rate limiting as Express middleware, with
// the IETF draft's RateLimit-Policy / RateLimit headers on every response and
// a 429 with Retry-After when blocked. Express appears here only as types:
// the code uses nothing but Node's own request/response API, so importing this
// entry never loads Express (and its header helpers serve Fastify or
// `node:http` as well). The options are in rate-limit-options.ts, the
// default key in default-key.ts.

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { COST_EXCEEDS_BUDGET_STATUS } from '../cost-refusal.js';
import { createDecider, limitedBody, type LimitedBody } from '../middleware-decision.js';
import type { HttpRateLimiter } from '../policies.js';
import { createDefaultKey, pathOf } from './default-key.js';
import { normalizeRateLimitOptions, type RateLimitOptions } from './rate-limit-options.js';

export { retryAfterSeconds, toStructuredString } from '../header-values.js';
export { createRateLimitHeaders, type RateLimitHeaderOptions, type RateLimitHeadersFor, type RateLimitHeaderStyle } from '../headers.js';
export { policiesOf, tierStatuses, type HttpRateLimiter, type InfoOf, type RateLimitPolicy, type TierStatus } from '../policies.js';
export { ipKey, DEFAULT_IPV6_SUBNET, type Ipv6Subnet } from '../ip-key.js';
export { PROXY_WARNING_CODES } from './proxy-checks.js';
export type { RateLimitKey, RateLimitMessage, RateLimitMessageFunction, RateLimitOptions } from './rate-limit-options.js';
export type { RateLimitActionIdFunction, RateLimitCostFunction } from '../middleware-options.js';
export type { RateLimitedBody, RequestCost, RequestRateLimit } from '../middleware-decision.js';
export type { CostExceedsBudgetBody, InvalidCostBody } from '../cost-refusal.js';

/**
 * Express middleware that rate-limits requests with a
 * {@link rolling-window-limiter!RollingRateLimiter | RollingRateLimiter} or a
 * {@link rolling-window-limiter!RateLimiterStack | RateLimiterStack}: each request is one attempt for its key
 * (by default the client IP).
 *
 * - Allowed: the request goes on (`next()`), with `RateLimit-Policy` and
 *   `RateLimit` headers (see {@link createRateLimitHeaders}).
 * - Blocked: status 429, `Retry-After` in whole seconds rounded up (never 0
 *   while there is time left), the same rate-limit headers, and the body
 *   (`message` or `onLimited`; by default `{ "error": "rate_limited", "retryAfterSeconds": n }`).
 * - The decision is also left in `res.locals.rateLimit` for later handlers
 *   (a {@link RequestRateLimit}: the limiter's info, the request's `actionId`
 *   and `cost`, and `settle`).
 * - With a limiter that counts cost (`maxCostInInterval`, or a stack with such
 *   a tier), each request reserves its `cost` (a number, or a function of
 *   `req`) under an action id of its own, and a handler settles it to what it
 *   used with `res.locals.rateLimit.settle(used)`; a reservation never settled stands. A request whose cost is
 *   above a tier's whole budget gets a 413 (a {@link CostExceedsBudgetBody}), counted by no tier; one whose cost
 *   is not a positive safe integer goes to `next(error)` with the limiter's error, its `status` and `statusCode`
 *   400, so that Express's own handler answers 400 (without the stack in production).
 * - Store failures follow the limiter's `onStoreError`: with `'throw'` (the
 *   default) the call rejects and the error (a `StoreError` or
 *   `TimeoutError`, both `RateLimiterError`s) goes to `next(error)`, Express's
 *   error handling; with `'allow'`, `'block'` or a fallback the request is
 *   decided by the policy's answer like any other, after `onStoreFailure`.
 * - Errors from the key function or any other callback go to `next(error)` too.
 *
 * The same limiter may guard several routes; they then share one limit per key.
 * Note that with `countBlocked: true` (the default) blocked requests count too,
 * so a client that keeps retrying stays blocked until it slows down.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';
 * import { rateLimit } from 'rolling-window-limiter/express';
 *
 * const perSecond = new RollingRateLimiter({ client: redis, namespace: 'api:second', interval: 1_000, maxInInterval: 5 });
 * const perMinute = new RollingRateLimiter({ client: redis, namespace: 'api:minute', interval: 60_000, maxInInterval: 100 });
 *
 * const app = express();
 * app.set('trust proxy', 1); // behind one reverse proxy: req.ip is the client's
 * app.use('/api', rateLimit({ limiter: new RateLimiterStack([perSecond, perMinute]) }));
 * ```
 *
 * A budget of tokens per minute beside 20 requests per minute, settled to
 * what each call used:
 *
 * ```ts
 * const requests = new RollingRateLimiter({ client: redis, namespace: 'chat:requests', interval: '1m', maxInInterval: 20 });
 * const tokens = new RollingRateLimiter({ client: redis, namespace: 'chat:tokens', interval: '1m', maxCostInInterval: 40_000 });
 *
 * app.post('/chat', rateLimit({ limiter: new RateLimiterStack([requests, tokens]), cost: (req) => countTokens(req.body) + 4_000 }), async (req, res) => {
 *   const reply = await callModel(req.body);
 *   await (res.locals.rateLimit as RequestRateLimit).settle(reply.usage.totalTokens);
 *   res.json(reply);
 * });
 * ```
 *
 * @throws TypeError (at once, not per request) when an option has the wrong type or is unknown, or `cost` is given
 * for a limiter without a tier that counts cost.
 * @throws RangeError when `headers` is a string other than its values, `ipv6Subnet` a number out of range, or
 * `cost` a number that is not a positive safe integer or above a tier's `maxCostInInterval`.
 */
export function rateLimit<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): RequestHandler {
  const { key: givenKey, message, onLimited, ipv6Subnet, validate, ...checked } = normalizeRateLimitOptions(options);
  const decideRequest = createDecider<Request>({
    ...checked,
    key: givenKey ?? createDefaultKey(ipv6Subnet, validate),
    describe: (req) => `${req.method} ${pathOf(req)}`,
    noAddress: givenKey === undefined ? 'req.ip is unknown: the client is gone' : undefined,
  });

  /** Decides one request; resolves true when it should go on to `next()`. */
  async function decide(req: Request, res: Response, next: NextFunction): Promise<boolean> {
    const decided = await decideRequest(req);
    if (decided === undefined) return true;
    if ('exceedsBudget' in decided) {
      res.statusCode = COST_EXCEEDS_BUDGET_STATUS;
      send(res, decided.exceedsBudget);
      return false;
    }
    const { info, headers } = decided;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (typeof res.locals === 'object' && res.locals !== null) res.locals.rateLimit = info;
    if (!info.blocked) return true;

    res.statusCode = 429;
    if (onLimited !== undefined) {
      await onLimited(req, res, next, info);
      return false;
    }
    send(res, await limitedBody(message, req, info));
    return false;
  }

  return function rateLimitMiddleware(req: Request, res: Response, next: NextFunction): void {
    decide(req, res, next).then(
      (proceed) => {
        if (proceed) next();
      },
      (error: unknown) => next(error),
    );
  };
}

/** Ends the response with `body`, through Node's own API (so it works the same without Express). */
function send(res: Response, { text, contentType }: LimitedBody): void {
  if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
