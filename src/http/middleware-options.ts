// What the middlewares (Express, Hono) share of their options, whatever their
// framework's request looks like: the limiter, the callbacks, the 429's body,
// the headers and the IPv6 prefix, typed once over the request
// (`MiddlewareOptions`) and each checked (core/check.ts). Each middleware's
// own file instantiates the type with its request (Express's `Request`,
// Hono's `Context`) and adds what differs: `key` and `onLimited`, whose
// defaults and signatures are the framework's, and Express's `validate` or
// Hono's `connInfo`. A request's `cost` is checked here against the tiers
// once, when the middleware is made.

import { describeValue, either, func, object, optional, string, type Check } from '../core/check.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { HEADER_DEFAULTS, HEADER_SCHEMA, type RateLimitHeaderStyle } from './headers.js';
import { DEFAULT_IPV6_SUBNET, ipv6SubnetOption, type Ipv6Subnet } from './ip-key.js';
import { httpLimiter, policiesOf, type HttpRateLimiter, type InfoOf, type RateLimitPolicy } from './policies.js';

/** A response body for a blocked request: a string is sent as `text/plain`, anything else as JSON. */
export type RateLimitMessage = string | object;

/** What a request costs, from the request (Express's `req`, Hono's context `c`): a positive safe integer. */
export type RateLimitCostFunction<Req> = (request: Req) => number | Promise<number>;

/** The action id of a request, from the request; nothing (`undefined`, `null`, `''`) lets the middleware make one. */
export type RateLimitActionIdFunction<Req> = (request: Req) => string | null | undefined | Promise<string | null | undefined>;

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
  /**
   * What a request costs, on a limiter with `maxCostInInterval` (or a stack with such a tier; its tiers of actions
   * count the request once): a positive safe integer, or a function of the request (Express's `req`, Hono's
   * context `c`) returning one, or a promise of one. Reserve the most the request may use (an LLM call: the
   * prompt's tokens plus the answer's cap), then settle it to what it used with `settle` (Express:
   * `res.locals.rateLimit.settle(used)`, Hono: `c.var.rateLimit.settle(used)`); a reservation never settled stands.
   * The middleware gives each such request an action id (see `actionId`).
   *
   * Refused when the middleware is made (a `TypeError`) on a limiter without a tier that counts cost, and a fixed
   * cost above a tier's `maxCostInInterval` (a `RangeError`: it could never be admitted). What a function returns is
   * checked per request, as the request's own: above a tier's `maxCostInInterval`, the middleware answers 413
   * (Content Too Large) with `{ "error": "cost_exceeds_budget", "cost": n, "maxCost": m }` and counts nothing; not
   * a positive safe integer (not a number, a `TypeError`; 0, negative, a fraction, `NaN`, the limiter's
   * `RangeError`), the error goes to the framework's error handling with `status` and `statusCode` 400, so that
   * the framework's own handler answers 400 (Hono's through the error's `getResponse()`). For requests that cost
   * nothing, use `skip`. Left out on a budget of cost, each request weighs the limiter's `defaultCost`; a limiter
   * without one is refused when the middleware is made (a `TypeError`): a budget weighs what each request says.
   * @default 1 on a limiter that counts actions; on a budget, the limiter's `defaultCost`
   */
  readonly cost?: number | RateLimitCostFunction<Req>;
  /**
   * The request's action id, from the request: the id under which its attempt is recorded, and settled or undone
   * (`limiter.settle(key, actionId, used)` from elsewhere, such as a job that learns the cost later). When it
   * returns nothing (`undefined`, `null` or `''`), or is not given, the middleware makes a short unique id for
   * each request on a limiter with a tier that counts cost, and none on one without (where there is nothing to
   * settle). The id a request had is in `actionId` of the request's decision.
   *
   * An action id makes the attempt idempotent: a second request with an id already admitted in the window is
   * admitted again without being counted. So return only an id your server made or can trust to be used once
   * (a request id your gateway assigns, an idempotency key your app deduplicates), never one a client chooses
   * freely, or a client could repeat one id and never be counted.
   */
  readonly actionId?: RateLimitActionIdFunction<Req>;
}

/** The defaults of the options every middleware has (`key`: the client IP, see `ipv6Subnet`). */
export const MIDDLEWARE_DEFAULTS = Object.freeze({ ...HEADER_DEFAULTS, ipv6Subnet: DEFAULT_IPV6_SUBNET } as const);

/** The callbacks every middleware takes, each typed by the middleware's own options. */
type CallbackName = 'key' | 'skip' | 'onLimited' | 'onStoreFailure' | 'actionId';

/** What a middleware's options hold of the shared ones, for typing the checks. */
type SharedOptions = { readonly [Name in CallbackName | 'message' | 'cost']?: unknown };

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

/** A positive safe integer, or a function of the request (whose results the limiter checks per request). */
function costOption<T>(): Check<T | undefined> {
  return (value, name) => {
    if (value === undefined || typeof value === 'function') return value as T | undefined;
    const expected = `Expected \`${name}\` to be a positive safe integer or a function of the request, got ${describeValue(value)}`;
    if (typeof value !== 'number') throw new InvalidOptionTypeError(expected, name, value);
    if (!Number.isSafeInteger(value) || value < 1) throw new InvalidOptionRangeError(expected, name, value);
    return value as T;
  };
}

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
    cost: costOption<NonNullable<Options['cost']>>(),
    actionId: callback<'actionId'>(),
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

/**
 * Refuses a `cost` (a number or a function) for a limiter without a tier that counts cost, where no request has a
 * cost, and a fixed cost above a tier's `maxCostInInterval`, which no request could ever be admitted with; and no
 * `cost` for a limiter with such a tier and no `defaultCost`, where every request must say what it weighs.
 */
export function refuseCostWithoutBudget(checked: { readonly limiter: HttpRateLimiter; readonly cost?: unknown }): void {
  const { limiter, cost } = checked;
  const budgets = policiesOf(limiter).filter((policy) => policy.maxCostInInterval !== undefined);
  if (cost === undefined) {
    if (budgets.length === 0 || typeof limiter.defaultCost === 'number') return;
    throw new InvalidOptionTypeError(
      `Expected \`cost\` for a limiter with a budget of cost (\`maxCostInInterval\`, namespace ${budgets.map(({ namespace }) => `\`${namespace}\``).join(', ')}), ` +
        "got none: give each request's cost (a number, or a function of the request), or declare `defaultCost` on the limiter",
      'cost',
      cost,
    );
  }
  if (budgets.length === 0) {
    throw new InvalidOptionTypeError(
      `Got \`cost\` ${describeValue(cost)} for a limiter that counts actions (\`maxInInterval\`): a request's cost is weighed only by a limiter ` +
        'with `maxCostInInterval` (or a stack with such a tier); leave `cost` out to count each request once',
      'cost',
      cost,
    );
  }
  for (const { namespace, maxCostInInterval } of budgets) {
    if (typeof cost === 'number' && cost > (maxCostInInterval as number)) {
      throw new InvalidOptionRangeError(
        `Expected \`cost\` to be at most \`maxCostInInterval\` (${maxCostInInterval}, namespace \`${namespace}\`), got ${describeValue(cost)}: ` +
          'no request could ever be admitted',
        'cost',
        cost,
      );
    }
  }
}
