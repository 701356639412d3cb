// The options of the Express middleware: the ones every middleware has
// (middleware-options.ts) over Express's `Request`, and its own (`key`,
// `onLimited`, `validate`), with the documentation users read; their
// defaults; and the schema that checks them (core/check.ts), once, when the
// middleware is made.

import type { NextFunction, Request, Response } from 'express';
import { boolean, normalize, optional, type Normalized } from '../../core/check.js';
import type { LimiterId } from '../../core/identity.js';
import { ownOptions } from '../../options/own-options.js';
import {
  MIDDLEWARE_DEFAULTS,
  middlewareSchema,
  refuseCostWithoutBudget,
  refuseMessageWithOnLimited,
  type MiddlewareOptions,
  type RateLimitMessage,
} from '../middleware-options.js';
import type { HttpRateLimiter, InfoOf } from '../policies.js';

export type { RateLimitMessage } from '../middleware-options.js';

/** Makes the body of a 429 from the request and the decision. */
export type RateLimitMessageFunction<Limiter extends HttpRateLimiter = HttpRateLimiter> = (
  req: Request,
  info: InfoOf<Limiter>,
) => RateLimitMessage | Promise<RateLimitMessage>;

/** The id of a request, as the `key` option finds it. */
export type RateLimitKey = (req: Request) => LimiterId | null | undefined | Promise<LimiterId | null | undefined>;

/** Options of {@link rateLimit}. */
export interface RateLimitOptions<Limiter extends HttpRateLimiter = HttpRateLimiter> extends MiddlewareOptions<Request, Limiter> {
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
  readonly key?: RateLimitKey;
  /**
   * Sends the response to a blocked request yourself, instead of `message`.
   * Called with the status already set to 429 and the headers (`Retry-After`
   * and the rate-limit headers) already set; it must end the response (or
   * call `next`). What it throws or rejects with goes to `next(error)`.
   */
  readonly onLimited?: (req: Request, res: Response, next: NextFunction, info: InfoOf<Limiter>) => void | Promise<void>;
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

/** The defaults of the middleware's optional options (`key`: the client IP, see `ipv6Subnet`). */
const RATE_LIMIT_DEFAULTS = Object.freeze({ ...MIDDLEWARE_DEFAULTS, validate: true } as const);

const RATE_LIMIT_SCHEMA = {
  ...middlewareSchema<RateLimitOptions<HttpRateLimiter>>(),
  validate: optional(boolean, RATE_LIMIT_DEFAULTS.validate),
};

/** {@link RateLimitOptions} once checked, every default filled in. */
export type NormalizedRateLimitOptions = Normalized<typeof RATE_LIMIT_SCHEMA>;

/**
 * Checks the middleware's options once, without touching the caller's
 * object: an unknown option or a wrong type is a `TypeError`, a value out of
 * range a `RangeError`, each naming the option and the value; so is a
 * `cost` the limiter cannot weigh. Only the object's own properties are
 * read: an inherited one is ignored.
 */
export function normalizeRateLimitOptions(options: RateLimitOptions<HttpRateLimiter>): NormalizedRateLimitOptions {
  const checked = normalize(ownOptions(options), RATE_LIMIT_SCHEMA, 'the options');
  refuseMessageWithOnLimited(checked);
  refuseCostWithoutBudget(checked);
  return checked;
}
