// What the middlewares (Express, Hono) share of their options, whatever their
// framework's request looks like: the limiter, the callbacks, the 429's body,
// the headers and the IPv6 prefix, typed once over the request
// (`MiddlewareOptions`) and each checked (core/check.ts). Each middleware's
// own file instantiates the type with its request (Express's `Request`,
// Hono's `Context`) and adds what differs: `key` and `onLimited`, whose
// defaults and signatures are the framework's, and Express's `validate` or
// Hono's `connInfo`.

import { either, func, object, optional, string, type Check } from '../core/check.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { HEADER_DEFAULTS, HEADER_SCHEMA, type RateLimitHeaderStyle } from './headers.js';
import { DEFAULT_IPV6_SUBNET, ipv6SubnetOption, type Ipv6Subnet } from './ip-key.js';
import { httpLimiter, type HttpRateLimiter, type InfoOf, type RateLimitPolicy } from './policies.js';

/** A response body for a blocked request: a string is sent as `text/plain`, anything else as JSON. */
export type RateLimitMessage = string | object;

/**
 * The options every middleware has, over what its framework hands it for a
 * request (`Req`: Express's `req`, Hono's context `c`). Each middleware's
 * `RateLimitOptions` extends it with `key`, `onLimited` and its own options.
 */
export interface MiddlewareOptions<Req, Limiter extends HttpRateLimiter> {
  /**
   * What decides: a {@link rolling-window-limiter!RollingRateLimiter | RollingRateLimiter}, or a
   * {@link rolling-window-limiter!RateLimiterStack | RateLimiterStack}
   * whose tiers are all enforced (and all announced in `RateLimit-Policy`).
   * Its `onStoreError` policy decides what a store failure does (see
   * {@link rateLimit}).
   */
  readonly limiter: Limiter;
  /** Requests for which this returns `true` are neither counted nor limited, and get no rate-limit headers. */
  readonly skip?: (request: Req) => boolean | Promise<boolean>;
  /**
   * The body of a 429: a string (sent as `text/plain`), an object (sent as
   * JSON), or a function of the request (Express's `req`, Hono's context `c`)
   * and the decision returning either.
   * Default: `{ "error": "rate_limited", "retryAfterSeconds": <n> }`.
   * Not together with `onLimited`.
   */
  readonly message?: RateLimitMessage | ((request: Req, info: InfoOf<Limiter>) => RateLimitMessage | Promise<RateLimitMessage>);
  /** Which rate-limit headers every response gets; see {@link RateLimitHeaderStyle}. @default 'draft' */
  readonly headers?: RateLimitHeaderStyle;
  /** The public name of each tier in the headers; default its namespace. See {@link RateLimitHeaderOptions.policyName}. */
  readonly policyName?: (policy: RateLimitPolicy) => string;
  /**
   * Called when the limiter's `onStoreError` policy decided instead of the
   * store (`info.storeFailure` is set), before the response goes on as the
   * decision says: the place to log and alert.
   */
  readonly onStoreFailure?: (request: Req, info: InfoOf<Limiter>) => void | Promise<void>;
  /**
   * How much of an IPv6 address is one client, for the key by client IP
   * (Express's default key, Hono's `connInfo`): a prefix length from 32 to
   * 64, or `false` for the whole address. One IPv6 client normally holds a
   * whole /64, often a /56, and can send from any address in it; keyed by the
   * full address it would get a fresh limit per address. Ignored when `key`
   * is given (use {@link ipKey} in your own key function).
   * @default 56
   */
  readonly ipv6Subnet?: Ipv6Subnet;
}

/** The defaults of the options every middleware has (`key`: the client IP, see `ipv6Subnet`). */
export const MIDDLEWARE_DEFAULTS = Object.freeze({ ...HEADER_DEFAULTS, ipv6Subnet: DEFAULT_IPV6_SUBNET } as const);

/** The callbacks every middleware takes, each typed by the middleware's own options. */
type CallbackName = 'key' | 'skip' | 'onLimited' | 'onStoreFailure';

/** What a middleware's options hold of the shared ones, for typing the checks. */
type SharedOptions = { readonly [Name in CallbackName | 'message']?: unknown };

/** An optional callback option (checked to be a function; what it returns, the middleware checks when it calls it). */
export function callbackOption<T>(): Check<T | undefined> {
  return optional(func<T>(), undefined);
}

/** A string, an object (sent as JSON), or a function of the request and the decision. */
const messageOption: Check<unknown> = either(
  func<unknown>(),
  either(string, object<object>('a string, an object or a function'), (value) => typeof value === 'string'),
  (value) => typeof value === 'function',
);

/**
 * The checks of the options every middleware has, in the order their
 * messages list them; `Options` types each callback as the middleware
 * declares it.
 */
export function middlewareSchema<Options extends SharedOptions>() {
  const callback = <Name extends CallbackName>(): Check<NonNullable<Options[Name]> | undefined> => callbackOption<NonNullable<Options[Name]>>();
  return {
    limiter: httpLimiter,
    key: callback<'key'>(),
    skip: callback<'skip'>(),
    message: optional(messageOption as Check<NonNullable<Options['message']>>, undefined),
    onLimited: callback<'onLimited'>(),
    ...HEADER_SCHEMA,
    onStoreFailure: callback<'onStoreFailure'>(),
    ipv6Subnet: ipv6SubnetOption,
  };
}

/** Refuses `message` together with `onLimited`, which sends the response itself. */
export function refuseMessageWithOnLimited(checked: { readonly message?: unknown; readonly onLimited?: unknown }): void {
  if (checked.message !== undefined && checked.onLimited !== undefined) {
    throw new InvalidOptionTypeError('Give either `message` or `onLimited`, not both: `onLimited` sends the response itself', 'message', checked.message);
  }
}
