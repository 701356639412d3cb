// The options of the Hono middleware: the ones every middleware has
// (middleware-options.ts) over Hono's `Context`, and its own (`key`,
// `connInfo`, `onLimited`), with the documentation users read; and the schema
// that checks them, once, when the middleware is made. Hono appears here
// only as types.

import type { Context } from 'hono';
import type { GetConnInfo } from 'hono/conninfo';
import { normalize, type Normalized } from '../../core/check.js';
import type { LimiterId } from '../../core/identity.js';
import { InvalidOptionTypeError } from '../../errors/invalid-option-error.js';
import { ownOptions } from '../../options/own-options.js';
import {
  callbackOption,
  middlewareSchema,
  refuseCostWithoutBudget,
  refuseMessageWithOnLimited,
  type MiddlewareOptions,
  type RateLimitMessage,
} from '../middleware-options.js';
import type { HttpRateLimiter, InfoOf } from '../policies.js';

/** Makes the body of a 429 from the request's context and the decision. */
export type RateLimitMessageFunction<Limiter extends HttpRateLimiter = HttpRateLimiter> = (
  c: Context,
  info: InfoOf<Limiter>,
) => RateLimitMessage | Promise<RateLimitMessage>;

/** The id of a request, as the `key` option finds it from the request's context. */
export type RateLimitKey = (c: Context) => LimiterId | null | undefined | Promise<LimiterId | null | undefined>;

/** Options of {@link rateLimit}. */
export interface RateLimitOptions<Limiter extends HttpRateLimiter = HttpRateLimiter> extends MiddlewareOptions<Context, Limiter> {
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
  /**
   * Makes the response to a blocked request yourself, instead of `message`
   * (e.g. `(c, info) => c.json({ wait: info.millisecondsUntilAllowed })`).
   * Called with the status already set to 429 (`c.status`) and the headers
   * (`Retry-After` and the rate-limit headers) already set (`c.header`), so
   * that `c.json`, `c.text` and `c.body` carry them.
   */
  readonly onLimited?: (c: Context, info: InfoOf<Limiter>) => Response | Promise<Response>;
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
 * neither `key` nor `connInfo`, or both, and a `cost` the limiter cannot weigh. Only the object's own properties
 * are read: an inherited one is ignored.
 */
export function normalizeHonoOptions(options: RateLimitOptions<HttpRateLimiter>): NormalizedHonoOptions {
  const checked = normalize(ownOptions(options), HONO_SCHEMA, 'the options');
  refuseMessageWithOnLimited(checked);
  refuseCostWithoutBudget(checked);
  if (checked.key === undefined && checked.connInfo === undefined) {
    throw new InvalidOptionTypeError(
      "rolling-window-limiter/hono needs `key`, a function that returns the id of a request (e.g. `(c) => c.get('userId')`), " +
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
