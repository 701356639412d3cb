// The options of the Hono middleware: their types with the documentation users
// read, and the schema that checks them (the options every middleware shares,
// middleware-options.ts, and Hono's own `connInfo`), once, when the
// middleware is made. Hono appears here only as types.

import type { Context } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import { normalize, type Normalized } from '../../core/check.js';
import type { LimiterId } from '../../core/identity.js';
import { InvalidOptionTypeError } from '../../errors/invalid-option-error.js';
import type { RateLimitHeaderStyle } from '../headers.js';
import type { Ipv6Subnet } from '../ip-key.js';
import { ownOptions } from '../../options/own-options.js';
import { callbackOption, middlewareSchema, refuseMessageWithOnLimited, type RateLimitMessage } from '../middleware-options.js';
import type { HttpRateLimiter, InfoOf, RateLimitPolicy } from '../policies.js';

/** Makes the body of a 429 from the request's context and the decision. */
export type RateLimitMessageFunction<Limiter extends HttpRateLimiter = HttpRateLimiter> = (
  c: Context,
  info: InfoOf<Limiter>,
) => RateLimitMessage | Promise<RateLimitMessage>;

/** The id of a request, as the `key` option finds it from the request's context. */
export type RateLimitKey = (c: Context) => LimiterId | null | undefined | Promise<LimiterId | null | undefined>;

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
   * The id to limit a request by, e.g. `(c) => c.get('userId')`. Give this
   * or `connInfo`: Hono runs on many runtimes, and the client's address is
   * read differently on each, so the middleware has no default of its own.
   *
   * A request without a key (the function returns `undefined`, `null` or
   * `''`) is never let through silently: the middleware throws a
   * `TypeError`, which Hono's error handler answers (by default with a 500).
   * To let such requests pass, say so with `skip`.
   */
  readonly key?: RateLimitKey;
  /**
   * Keys requests by client IP, read with your runtime adapter's
   * `getConnInfo`: `import { getConnInfo } from '@hono/node-server/conninfo'`
   * on Node.js, `'hono/bun'` on Bun, `'hono/deno'` on Deno,
   * `'hono/cloudflare-workers'` on Cloudflare Workers. The address is reduced
   * by {@link ipKey}: an IPv6 address to its `/56` prefix (see `ipv6Subnet`),
   * an IPv4-mapped IPv6 address to its IPv4 address. A request whose address
   * is unknown, or not an IP address, is refused with a `TypeError`.
   *
   * Behind a reverse proxy or load balancer this is the proxy's address, and
   * every client would share one limit: give a `key` that reads the address
   * your proxy writes instead (and only from a proxy you trust).
   * Not together with `key`.
   */
  readonly connInfo?: GetConnInfo;
  /** Requests for which this returns `true` are neither counted nor limited, and get no rate-limit headers. */
  readonly skip?: (c: Context) => boolean | Promise<boolean>;
  /**
   * The body of a 429: a string (sent as `text/plain`), an object (sent as
   * JSON), or a function of the context and the decision returning either.
   * Default: `{ "error": "rate_limited", "retryAfterSeconds": <n> }`.
   * Not together with `onLimited`.
   */
  readonly message?: RateLimitMessage | RateLimitMessageFunction<Limiter>;
  /**
   * Makes the response to a blocked request yourself, instead of `message`
   * (e.g. `(c, info) => c.json({ wait: info.millisecondsUntilAllowed })`).
   * Called with the status already set to 429 (`c.status`) and the headers
   * (`Retry-After` and the rate-limit headers) already set (`c.header`), so
   * that `c.json`, `c.text` and `c.body` carry them.
   */
  readonly onLimited?: (c: Context, info: InfoOf<Limiter>) => Response | Promise<Response>;
  /** Which rate-limit headers every response gets; see {@link RateLimitHeaderStyle}. @default 'draft' */
  readonly headers?: RateLimitHeaderStyle;
  /** The public name of each tier in the headers; default its namespace. See {@link RateLimitHeaderOptions.policyName}. */
  readonly policyName?: (policy: RateLimitPolicy) => string;
  /**
   * Called when the limiter's `onStoreError` policy decided instead of the
   * store (`info.storeFailure` is set), before the response goes on as the
   * decision says: the place to log and alert.
   */
  readonly onStoreFailure?: (c: Context, info: InfoOf<Limiter>) => void | Promise<void>;
  /**
   * How much of an IPv6 address is one client, for the `connInfo` key: a
   * prefix length from 32 to 64, or `false` for the whole address. One IPv6
   * client normally holds a whole /64, often a /56, and can send from any
   * address in it; keyed by the full address it would get a fresh limit per
   * address. Ignored when `key` is given (use {@link ipKey} in your own key
   * function).
   * @default 56
   */
  readonly ipv6Subnet?: Ipv6Subnet;
}

const HONO_SCHEMA = {
  ...middlewareSchema<RateLimitOptions<HttpRateLimiter>>(),
  connInfo: callbackOption<GetConnInfo>(),
};

/** {@link RateLimitOptions} once checked, every default filled in. */
export type NormalizedHonoOptions = Normalized<typeof HONO_SCHEMA>;

/**
 * Checks the middleware's options once, without touching the caller's
 * object: an unknown option or a wrong type is a `TypeError`, a value out of
 * range a `RangeError`, each naming the option and the value; so is giving
 * neither `key` nor `connInfo`, or both. Only the object's own properties
 * are read: an inherited one is ignored.
 */
export function normalizeHonoOptions(options: RateLimitOptions<HttpRateLimiter>): NormalizedHonoOptions {
  const checked = normalize(ownOptions(options), HONO_SCHEMA, 'the options');
  refuseMessageWithOnLimited(checked);
  if (checked.key === undefined && checked.connInfo === undefined) {
    throw new InvalidOptionTypeError(
      'rolling-window-limiter/hono needs `key`, a function that returns the id of a request (e.g. `(c) => c.get(\'userId\')`), ' +
        "or `connInfo` from your runtime's adapter to key by client IP (`getConnInfo` of '@hono/node-server/conninfo' on Node.js, " +
        "'hono/bun' on Bun, 'hono/deno' on Deno): the middleware cannot tell which runtime serves it",
      'key',
      undefined,
    );
  }
  if (checked.key !== undefined && checked.connInfo !== undefined) {
    throw new InvalidOptionTypeError('Give either `key` or `connInfo`, not both: `key` alone decides the id when it is given', 'connInfo', checked.connInfo);
  }
  return checked;
}
