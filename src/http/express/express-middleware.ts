// `rolling-window-limiter/express`: rate limiting as Express middleware, with
// the IETF draft's RateLimit-Policy / RateLimit headers on every response and
// a 429 with Retry-After when blocked. Express appears here only as types:
// the code uses nothing but Node's own request/response API, so importing this
// entry never loads Express (and its header helpers serve Fastify or
// `node:http` as well). The options are in rate-limit-options.ts, the
// default key in default-key.ts.

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describeValue } from '../../core/check.js';
import type { RateLimitInfo } from '../../core/rate-limit-info.js';
import { retryAfterSeconds } from '../header-values.js';
import { headersForPolicies } from '../headers.js';
import { policiesOf, type HttpRateLimiter, type InfoOf } from '../policies.js';
import { createDefaultKey, pathOf } from './default-key.js';
import { normalizeRateLimitOptions, type RateLimitKey, type RateLimitMessage, type RateLimitMessageFunction, type RateLimitOptions } from './rate-limit-options.js';

export { retryAfterSeconds, toStructuredString } from '../header-values.js';
export { createRateLimitHeaders, type RateLimitHeaderOptions, type RateLimitHeadersFor, type RateLimitHeaderStyle } from '../headers.js';
export { policiesOf, tierStatuses, type HttpRateLimiter, type InfoOf, type RateLimitPolicy, type TierStatus } from '../policies.js';
export { ipKey, DEFAULT_IPV6_SUBNET, type Ipv6Subnet } from '../ip-key.js';
export { PROXY_WARNING_CODES } from './proxy-checks.js';
export type { RateLimitKey, RateLimitMessage, RateLimitMessageFunction, RateLimitOptions } from './rate-limit-options.js';

/** The default body of a blocked request. */
export interface RateLimitedBody {
  /** Always `'rate_limited'`: tells a blocked request from other errors. */
  readonly error: 'rate_limited';
  /** The same number as the `Retry-After` header. */
  readonly retryAfterSeconds: number;
}

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
 * - The decision is also left in `res.locals.rateLimit` for later handlers.
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
 * @throws TypeError (at once, not per request) when an option has the wrong type or is unknown.
 * @throws RangeError when `headers` is a string other than its values, or `ipv6Subnet` a number out of range.
 */
export function rateLimit<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): RequestHandler {
  const { limiter, key: givenKey, skip, message, onLimited, onStoreFailure, headers, policyName, ipv6Subnet, validate } = normalizeRateLimitOptions(options);
  const key: RateLimitKey = givenKey ?? createDefaultKey(ipv6Subnet, validate);
  const headersFor = headersForPolicies<InfoOf<HttpRateLimiter>>(policiesOf(limiter), { headers, policyName });

  /** Decides one request; resolves true when it should go on to `next()`. */
  async function decide(req: Request, res: Response, next: NextFunction): Promise<boolean> {
    if (skip !== undefined && (await skip(req))) return true;
    const id = await key(req);
    if (id === undefined || id === null || id === '') {
      throw new TypeError(
        `rateLimit found no key for ${req.method} ${pathOf(req)}: the key function returned ${describeValue(id)}` +
          (givenKey === undefined ? ' (req.ip is unknown: the client is gone)' : '') +
          '; return an id, or use `skip` to let such requests through unlimited',
      );
    }
    const info: InfoOf<HttpRateLimiter> = await limiter.limitWithInfo(id);
    if (info.storeFailure !== undefined && onStoreFailure !== undefined) await onStoreFailure(req, info);
    for (const [name, value] of Object.entries(headersFor(info))) res.setHeader(name, value);
    if (typeof res.locals === 'object' && res.locals !== null) res.locals.rateLimit = info;
    if (!info.blocked) return true;

    res.statusCode = 429;
    if (onLimited !== undefined) {
      await onLimited(req, res, next, info);
      return false;
    }
    const body: RateLimitMessage =
      message === undefined ? defaultBody(info) : typeof message === 'function' ? await (message as RateLimitMessageFunction)(req, info) : message;
    send(res, body);
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

function defaultBody(info: RateLimitInfo): RateLimitedBody {
  return { error: 'rate_limited', retryAfterSeconds: retryAfterSeconds(info.millisecondsUntilAllowed) };
}

/** Ends the response with `body`, through Node's own API (so it works the same without Express). */
function send(res: Response, body: RateLimitMessage): void {
  const text = typeof body === 'string' ? body : ((JSON.stringify(body) as string | undefined) ?? '');
  if (!res.hasHeader('Content-Type')) {
    res.setHeader('Content-Type', typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8');
  }
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
