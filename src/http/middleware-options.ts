// What the middlewares (Express, Hono) share of their options, whatever their
// framework's request looks like: the limiter, the callbacks, the 429's body,
// the headers and the IPv6 prefix, each with its check (core/check.ts). Each
// middleware's own file adds its options (Express's `validate`, Hono's
// `connInfo`) and the types users read.

import { either, func, object, optional, string, type Check } from '../core/check.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { HEADER_DEFAULTS, HEADER_SCHEMA } from './headers.js';
import { DEFAULT_IPV6_SUBNET, ipv6SubnetOption } from './ip-key.js';
import { httpLimiter } from './policies.js';

/** A response body for a blocked request: a string is sent as `text/plain`, anything else as JSON. */
export type RateLimitMessage = string | object;

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
