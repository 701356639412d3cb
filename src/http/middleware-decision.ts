// One request's decision as every middleware (Express, Hono) makes it, free of
// any framework: skip, find the key (refusing a request without one), decide,
// report a store failure, and turn the decision into headers; and the body of
// a 429. Each middleware writes the result with its own framework's API.

import { describeValue } from '../core/check.js';
import type { LimiterId } from '../core/identity.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import { retryAfterSeconds } from './header-values.js';
import { headersForPolicies, type NormalizedHeaderOptions } from './headers.js';
import type { RateLimitMessage } from './middleware-options.js';
import { policiesOf, type HttpRateLimiter, type InfoOf } from './policies.js';

/** The default body of a blocked request. */
export interface RateLimitedBody {
  /** Always `'rate_limited'`: tells a blocked request from other errors. */
  readonly error: 'rate_limited';
  /** The same number as the `Retry-After` header. */
  readonly retryAfterSeconds: number;
}

/** What a decided request gets: the decision, and the headers that go on its response. */
export interface Decided {
  readonly info: InfoOf<HttpRateLimiter>;
  readonly headers: Record<string, string>;
}

/** The checked options a decision needs, with the framework's request as `Req`. */
export interface DeciderOptions<Req> extends NormalizedHeaderOptions {
  readonly limiter: HttpRateLimiter;
  readonly key: (req: Req) => LimiterId | null | undefined | Promise<LimiterId | null | undefined>;
  readonly skip: ((req: Req) => boolean | Promise<boolean>) | undefined;
  readonly onStoreFailure: ((req: Req, info: InfoOf<HttpRateLimiter>) => void | Promise<void>) | undefined;
  /** The request in an error message: method and path, without the query string. */
  readonly describe: (req: Req) => string;
  /** Said after the key function's result when the default key found nothing (why the client has no address). */
  readonly noAddress: string | undefined;
}

/**
 * Makes the decision of one middleware: resolves `undefined` for a request
 * `skip` lets through, else the decision and its headers. A request without
 * a key (`undefined`, `null` or `''`) is a `TypeError`, never let through
 * silently.
 */
export function createDecider<Req>(options: DeciderOptions<Req>): (req: Req) => Promise<Decided | undefined> {
  const { limiter, key, skip, onStoreFailure, describe, noAddress } = options;
  const headersFor = headersForPolicies<InfoOf<HttpRateLimiter>>(policiesOf(limiter), options);
  return async (req) => {
    if (skip !== undefined && (await skip(req))) return undefined;
    const id = await key(req);
    if (id === undefined || id === null || id === '') {
      throw new TypeError(
        `rateLimit found no key for ${describe(req)}: the key function returned ${describeValue(id)}` +
          (noAddress === undefined ? '' : ` (${noAddress})`) +
          '; return an id, or use `skip` to let such requests through unlimited',
      );
    }
    const info: InfoOf<HttpRateLimiter> = await limiter.limitWithInfo(id);
    if (info.storeFailure !== undefined && onStoreFailure !== undefined) await onStoreFailure(req, info);
    return { info, headers: headersFor(info) };
  };
}

/** A `message` function: the body of a 429 from the request and the decision. */
type MessageFunction<Req> = (req: Req, info: InfoOf<HttpRateLimiter>) => RateLimitMessage | Promise<RateLimitMessage>;

/** The body of a 429 as text, with its content type. */
export interface LimitedBody {
  readonly text: string;
  readonly contentType: string;
}

/**
 * The body of a 429: `message` (a function of the request and the decision is
 * called), or by default `{ "error": "rate_limited", "retryAfterSeconds": n }`;
 * a string is sent as `text/plain`, anything else as JSON.
 */
export async function limitedBody<Req>(
  message: RateLimitMessage | MessageFunction<Req> | undefined,
  req: Req,
  info: InfoOf<HttpRateLimiter>,
): Promise<LimitedBody> {
  const body: RateLimitMessage =
    message === undefined ? defaultBody(info) : typeof message === 'function' ? await (message as MessageFunction<Req>)(req, info) : message;
  if (typeof body === 'string') return { text: body, contentType: 'text/plain; charset=utf-8' };
  const json = JSON.stringify(body) as string | undefined; // undefined for what JSON cannot carry, such as a function
  return { text: json ?? '', contentType: 'application/json; charset=utf-8' };
}

function defaultBody(info: RateLimitInfo): RateLimitedBody {
  return { error: 'rate_limited', retryAfterSeconds: retryAfterSeconds(info.millisecondsUntilAllowed) };
}
