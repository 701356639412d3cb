// `rolling-window-limiter/express`: rate limiting as Express middleware, with
// the IETF draft's RateLimit-Policy / RateLimit headers on every response and
// a 429 with Retry-After when blocked. Express appears here only as types:
// the code uses nothing but Node's own request/response API, so importing this
// entry never loads Express (and its header helpers serve Fastify or
// `node:http` as well).

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { InvalidOptionTypeError } from '../../errors/invalid-option-error.js';
import type { LimiterId } from '../../core/identity.js';
import { describeValue } from '../../core/check.js';
import { ipKey, ipWithoutPort, normalizeIpv6Subnet, type Ipv6Subnet } from '../ip-key.js';
import { createProxyChecks, createWarnOnce, PROXY_WARNING_CODES } from './proxy-checks.js';
import type { RateLimitInfo } from '../../core/rate-limit-info.js';
import {
  createRateLimitHeaders,
  retryAfterSeconds,
  type HttpRateLimiter,
  type InfoOf,
  type RateLimitHeaderStyle,
  type RateLimitPolicy,
} from '../headers.js';

export {
  createRateLimitHeaders,
  policiesOf,
  retryAfterSeconds,
  tierStatuses,
  toStructuredString,
  type HttpRateLimiter,
  type InfoOf,
  type RateLimitHeaderOptions,
  type RateLimitHeadersFor,
  type RateLimitHeaderStyle,
  type RateLimitPolicy,
  type TierStatus,
} from '../headers.js';
export { ipKey, DEFAULT_IPV6_SUBNET, type Ipv6Subnet } from '../ip-key.js';
export { PROXY_WARNING_CODES } from './proxy-checks.js';

/** A response body for a blocked request: a string is sent as `text/plain`, anything else as JSON. */
export type RateLimitMessage = string | object;

/** Makes the body of a 429 from the request and the decision. */
export type RateLimitMessageFunction<Limiter extends HttpRateLimiter = HttpRateLimiter> = (
  req: Request,
  info: InfoOf<Limiter>,
) => RateLimitMessage | Promise<RateLimitMessage>;

/** The default body of a blocked request. */
export interface RateLimitedBody {
  /** Always `'rate_limited'`: tells a blocked request from other errors. */
  readonly error: 'rate_limited';
  /** The same number as the `Retry-After` header. */
  readonly retryAfterSeconds: number;
}

/** Options of {@link rateLimit}. */
export interface RateLimitOptions<Limiter extends HttpRateLimiter = HttpRateLimiter> {
  /**
   * What decides: a {@link rolling-window-limiter!RollingRateLimiter | RollingRateLimiter}, or a
   * {@link rolling-window-limiter!RateLimiterStack | RateLimiterStack}
   * whose tiers are all enforced (and all announced in `RateLimit-Policy`).
   * Its `onStoreError` policy decides what a store failure does (see
   * {@link rateLimit}).
   */
  readonly limiter: Limiter;
  /**
   * The id to limit a request by. Default: the client's IP address, `req.ip`,
   * as {@link ipKey} reduces it: an IPv6 address to its `/56` prefix (see
   * `ipv6Subnet`), an IPv4-mapped IPv6 address to its IPv4 address. A port
   * that a proxy wrote with the address is dropped (`203.0.113.7:5678`,
   * `[2001:db8::1]:443`); a `req.ip` that is not an IP address even then is
   * refused: the request goes to `next(error)` with a `TypeError` (a 500),
   * and a warning with the code `RATE_LIMITER_INVALID_IP` is emitted once
   * (unless `validate` is `false`).
   *
   * Behind a reverse proxy or load balancer, `req.ip` is the proxy's address
   * unless Express is told to trust it, e.g. `app.set('trust proxy', 1)` for
   * one proxy hop (see Express's "Express behind proxies"); without that,
   * every client shares one limit. Trust no more hops than you have, or
   * clients can pick their own IP with `X-Forwarded-For` (see `validate`).
   *
   * A request without a key (the function returns `undefined`, `null` or
   * `''`, or `req.ip` is unknown) is never let through silently: it goes to
   * `next(error)` with a `TypeError`, which Express answers with a 500. To
   * let such requests pass, say so with `skip`.
   */
  readonly key?: (req: Request) => LimiterId | null | undefined | Promise<LimiterId | null | undefined>;
  /** Requests for which this returns `true` are neither counted nor limited, and get no rate-limit headers. */
  readonly skip?: (req: Request) => boolean | Promise<boolean>;
  /**
   * The body of a 429: a string (sent as `text/plain`), an object (sent as
   * JSON), or a function of the request and the decision returning either.
   * Default: `{ "error": "rate_limited", "retryAfterSeconds": <n> }`.
   * Not together with `onLimited`.
   */
  readonly message?: RateLimitMessage | RateLimitMessageFunction<Limiter>;
  /**
   * Sends the response to a blocked request yourself, instead of `message`.
   * Called with the status already set to 429 and the headers (`Retry-After`
   * and the rate-limit headers) already set; it must end the response (or
   * call `next`). What it throws or rejects with goes to `next(error)`.
   */
  readonly onLimited?: (req: Request, res: Response, next: NextFunction, info: InfoOf<Limiter>) => void | Promise<void>;
  /** Which rate-limit headers every response gets; see {@link RateLimitHeaderStyle}. @default 'draft' */
  readonly headers?: RateLimitHeaderStyle;
  /** The public name of each tier in the headers; default its namespace. See {@link RateLimitHeaderOptions.policyName}. */
  readonly policyName?: (policy: RateLimitPolicy) => string;
  /**
   * Called when the limiter's `onStoreError` policy decided instead of the
   * store (`info.storeFailure` is set), before the response goes on as the
   * decision says: the place to log and alert.
   */
  readonly onStoreFailure?: (req: Request, info: InfoOf<Limiter>) => void | Promise<void>;
  /**
   * How much of an IPv6 address is one client, for the default key: a prefix
   * length from 32 to 64, or `false` for the whole address. One IPv6 client
   * normally holds a whole /64, often a /56, and can send from any address
   * in it; keyed by the full address it would get a fresh limit per address.
   * Ignored when `key` is given (use {@link ipKey} in your own key function).
   * @default 56
   */
  readonly ipv6Subnet?: Ipv6Subnet;
  /**
   * Whether to check, with the default key, that Express's `trust proxy`
   * fits the requests: a request with `X-Forwarded-For` while no proxy is
   * trusted, or `trust proxy: true` (which lets clients choose their IP), is
   * reported once per middleware with `process.emitWarning` (codes in
   * {@link PROXY_WARNING_CODES}), as is a `req.ip` that is not an IP address.
   * `false` turns the warnings off (such a `req.ip` is refused all the same).
   * @default true
   */
  readonly validate?: boolean;
}

const KNOWN_OPTIONS = new Set(['limiter', 'key', 'skip', 'message', 'onLimited', 'headers', 'policyName', 'onStoreFailure', 'ipv6Subnet', 'validate']);

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
 * @throws RangeError when `headers` is not one of its values, or `ipv6Subnet` is out of range.
 */
export function rateLimit<Limiter extends HttpRateLimiter>(options: RateLimitOptions<Limiter>): RequestHandler {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionTypeError(`Expected the options to be an object, got ${describeValue(options)}`, 'options', options);
  }
  for (const name of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(name)) {
      throw new InvalidOptionTypeError(`Unknown option \`${name}\`; expected one of ${[...KNOWN_OPTIONS].join(', ')}`, name, options[name as keyof typeof options]);
    }
  }
  const { limiter, skip, message, onLimited, onStoreFailure, validate = true } = options;
  const ipv6Subnet = normalizeIpv6Subnet(options.ipv6Subnet);
  if (typeof validate !== 'boolean') {
    throw new InvalidOptionTypeError(`Expected \`validate\` to be a boolean, got ${describeValue(validate)}`, 'validate', validate);
  }
  const warn = createWarnOnce();
  const checkProxy = validate ? createProxyChecks(warn) : undefined;
  const defaultKey = (req: Request): string | undefined => {
    checkProxy?.(req);
    const address = req.ip ?? req.socket?.remoteAddress;
    if (address === undefined || address === '') return undefined;
    const ip = ipWithoutPort(address);
    if (ip !== undefined) return ipKey(ip, ipv6Subnet);
    const problem =
      `req.ip is ${describeValue(address)}, which is not an IP address (with or without a port): keyed as it is, ` +
      'it could give each connection a limit of its own. Check what the proxy writes in X-Forwarded-For and ' +
      "Express's `trust proxy`, or give a `key` function";
    if (validate) warn(PROXY_WARNING_CODES.invalidIp, `${problem}. Such requests are refused (a TypeError to next(error)).`);
    throw new TypeError(`rateLimit refused ${req.method} ${pathOf(req)}: ${problem}`);
  };
  const key = options.key ?? defaultKey;
  for (const [name, value] of Object.entries({ key, skip, onLimited, onStoreFailure })) {
    if (value !== undefined && typeof value !== 'function') {
      throw new InvalidOptionTypeError(`Expected \`${name}\` to be a function, got ${describeValue(value)}`, name, value);
    }
  }
  if (message !== undefined && typeof message !== 'string' && (typeof message !== 'object' || message === null) && typeof message !== 'function') {
    throw new InvalidOptionTypeError(`Expected \`message\` to be a string, an object or a function, got ${describeValue(message)}`, 'message', message);
  }
  if (message !== undefined && onLimited !== undefined) {
    throw new InvalidOptionTypeError('Give either `message` or `onLimited`, not both: `onLimited` sends the response itself', 'message', message);
  }
  const headersFor = createRateLimitHeaders(limiter, {
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.policyName === undefined ? {} : { policyName: options.policyName }),
  });

  /** Decides one request; resolves true when it should go on to `next()`. */
  async function decide(req: Request, res: Response, next: NextFunction): Promise<boolean> {
    if (skip !== undefined && (await skip(req))) return true;
    const id = await key(req);
    if (id === undefined || id === null || id === '') {
      throw new TypeError(
        `rateLimit found no key for ${req.method} ${pathOf(req)}: the key function returned ${describeValue(id)}` +
          (key === defaultKey ? ' (req.ip is unknown: the client is gone)' : '') +
          '; return an id, or use `skip` to let such requests through unlimited',
      );
    }
    const info = (await limiter.limitWithInfo(id)) as InfoOf<Limiter>;
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
      message === undefined
        ? defaultBody(info)
        : typeof message === 'function'
          ? await (message as RateLimitMessageFunction<Limiter>)(req, info)
          : message;
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

/** The request's path without its query string, which may hold secrets not meant for error logs. */
function pathOf(req: Request): string {
  const url: string = req.originalUrl ?? req.url ?? '';
  return url.split('?', 1)[0] ?? '';
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
