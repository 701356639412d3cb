// One request's decision as every middleware (Express, Hono) makes it, free of
// any framework: skip, find the key (refusing a request without one), find the
// request's cost and action id, decide, report a store failure, and turn the
// decision into headers, with the `settle` of the request's reservation; a
// cost the limiter refuses as cost-refusal.ts says (a 413, or a client error);
// and the body of a 429. Each middleware writes the result with its own
// framework's API.

import { describeValue } from '../core/check.js';
import { nextMember, type AttemptOptions, type LimiterId } from '../core/identity.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { asInvalidCost, costRefusal } from './cost-refusal.js';
import { retryAfterSeconds } from './header-values.js';
import { headersForPolicies, type NormalizedHeaderOptions } from './headers.js';
import type { RateLimitActionIdFunction, RateLimitCostFunction, RateLimitMessage } from './middleware-options.js';
import { countsCost, policiesOf, type HttpRateLimiter, type InfoOf } from './policies.js';

/** The default body of a blocked request. */
export interface RateLimitedBody {
  /** Always `'rate_limited'`: tells a blocked request from other errors. */
  readonly error: 'rate_limited';
  /** The same number as the `Retry-After` header. */
  readonly retryAfterSeconds: number;
}

/**
 * What the middleware adds to a request's decision: its action id, its cost, and `settle`, which sets the cost
 * the request actually used.
 */
export interface RequestCost {
  /**
   * The id the request's attempt was recorded under: the `actionId` option's, or one the middleware made (on a
   * limiter with a tier that counts cost); `undefined` when the attempt had none.
   */
  readonly actionId: string | undefined;
  /** What the request reserved: the `cost` option's value for it, the limiter's `defaultCost`, or 1 (each request weighs 1 on a tier of actions). */
  readonly cost: number;
  /**
   * Sets the cost of this request, admitted with its reservation (`cost`), to what it actually used, in every tier
   * that counts cost, atomically (the limiter's `settle`): less gives the rest back to the budget at once, more
   * records the truth (later requests wait until the window drains), 0 gives it all back (tiers of actions still
   * count the request). Settling again sets it again: twice to the same cost is one settlement. A request never
   * settled keeps its reservation.
   *
   * Resolves `true` when the request's admitted record was settled, `false` when there was none: the request was
   * blocked, the `onStoreError` policy admitted it without the store (`'allow'`), or its record has left the
   * window or was undone. Rejects with a `TypeError` on a limiter without a tier that counts cost, or for a cost
   * that is not a number; a `RangeError` for a negative or fractional cost; and as the limiter's `settle` when the
   * store fails.
   */
  readonly settle: (cost: number) => Promise<boolean>;
}

/**
 * A request's decision as the middleware leaves it for later handlers (Express: `res.locals.rateLimit`, Hono:
 * `c.get('rateLimit')`) and hands to its callbacks: the limiter's info (a `StackRateLimitInfo` for a stack),
 * with the request's {@link RequestCost}.
 */
export type RequestRateLimit<Limiter extends HttpRateLimiter = HttpRateLimiter> = InfoOf<Limiter> & RequestCost;

/** What a decided request gets: the decision, and the headers that go on its response. */
export interface Decided {
  readonly info: RequestRateLimit;
  readonly headers: Record<string, string>;
}

/** A request whose cost is above a tier's whole budget: never decided, answered 413 with this body. */
export interface ExceedsBudget {
  readonly exceedsBudget: LimitedBody;
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
  /** The request's cost, checked to be a positive safe integer or a function (and refused for a limiter that counts actions). */
  readonly cost: number | RateLimitCostFunction<Req> | undefined;
  readonly actionId: RateLimitActionIdFunction<Req> | undefined;
}

/**
 * Makes the decision of one middleware: resolves `undefined` for a request
 * `skip` lets through, else the decision and its headers. A request without
 * a key (`undefined`, `null` or `''`) is a `TypeError`, never let through
 * silently. On a limiter with a tier that counts cost, each request is
 * attempted with its cost and an action id, which its `settle` settles; a
 * cost above a tier's whole budget resolves {@link ExceedsBudget} (a 413),
 * and one that is not a positive safe integer rejects with the limiter's
 * error marked as the client's (a 400; see cost-refusal.ts).
 */
export function createDecider<Req>(options: DeciderOptions<Req>): (req: Req) => Promise<Decided | ExceedsBudget | undefined> {
  const { limiter, key, skip, onStoreFailure, describe, noAddress, cost: costOption, actionId: actionIdOption } = options;
  const policies = policiesOf(limiter);
  const weighs = countsCost(policies);
  // Without a `cost` option, a request on a budget weighs the limiter's `defaultCost` (made without either, the
  // middleware was refused), given to the limiter as the request's cost.
  const fixedCost = costOption ?? (weighs ? limiter.defaultCost : undefined);
  const headersFor = headersForPolicies<InfoOf<HttpRateLimiter>>(policies, options);
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
    const cost = typeof fixedCost === 'function' ? await fixedCost(req) : fixedCost;
    if (typeof costOption === 'function' && typeof cost !== 'number') {
      throw asInvalidCost(
        new InvalidOptionTypeError(
          `rateLimit's \`cost\` returned ${describeValue(cost)} for ${describe(req)}: return the request's cost, a positive safe integer`,
          'cost',
          cost,
        ),
      );
    }
    const givenActionId = await actionIdOption?.(req);
    // An id the middleware makes is this request's alone: single-use, so that a flood of blocked requests on a budget
    // keeps no more records than one without ids (the flood bound).
    const made = givenActionId === undefined || givenActionId === null || givenActionId === '';
    const actionId = made ? (weighs ? nextMember() : undefined) : givenActionId;
    const attempt: AttemptOptions | undefined =
      actionId === undefined && cost === undefined
        ? undefined
        : { ...(actionId === undefined ? {} : made ? { actionId, singleUse: true } : { actionId }), ...(cost === undefined ? {} : { cost }) };
    let decision: InfoOf<HttpRateLimiter>;
    try {
      decision = await limiter.limitWithInfo(id, attempt);
    } catch (error) {
      if (cost === undefined) throw error;
      const refusal = costRefusal(error, cost, policies);
      if ('exceedsBudget' in refusal) return { exceedsBudget: { text: JSON.stringify(refusal.exceedsBudget), contentType: JSON_CONTENT_TYPE } };
      throw refusal.error;
    }
    const info: RequestRateLimit = { ...decision, actionId, cost: cost ?? 1, settle: settlement(limiter, weighs, id, actionId, decision) };
    if (info.storeFailure !== undefined && onStoreFailure !== undefined) await onStoreFailure(req, info);
    return { info, headers: headersFor(decision) };
  };
}

/** The `settle` of one request's decision (see {@link RequestCost.settle}). */
function settlement(
  limiter: HttpRateLimiter,
  weighs: boolean,
  id: LimiterId,
  actionId: string | undefined,
  decision: RateLimitInfo,
): (cost: number) => Promise<boolean> {
  return async (cost) => {
    if (!weighs) {
      throw new InvalidOptionTypeError(
        '`settle` sets the cost of a request, and this limiter counts actions: give it `maxCostInInterval`, or stack one that has it',
        'cost',
        cost,
      );
    }
    const expected = `Expected the cost to settle to be a safe integer from 0, got ${describeValue(cost)}`;
    if (typeof cost !== 'number') throw new InvalidOptionTypeError(expected, 'cost', cost);
    if (!Number.isSafeInteger(cost) || cost < 0) throw new InvalidOptionRangeError(expected, 'cost', cost);
    // A blocked request has no admitted record (with `countBlocked` it is recorded as blocked, which no settle changes),
    // nor has one a policy admitted without any store: nothing to settle, and no store to ask.
    const policy = decision.storeFailure?.policy;
    if (decision.blocked || actionId === undefined || policy === 'allow' || policy === 'block') return false;
    return limiter.settle(id, actionId, cost);
  };
}

/** A `message` function: the body of a 429 from the request and the decision. */
type MessageFunction<Req> = (req: Req, info: InfoOf<HttpRateLimiter>) => RateLimitMessage | Promise<RateLimitMessage>;

/** The content type of the middleware's JSON bodies. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The body of a 429 (or a 413) as text, with its content type. */
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
  return { text: json ?? '', contentType: JSON_CONTENT_TYPE };
}

function defaultBody(info: RateLimitInfo): RateLimitedBody {
  return { error: 'rate_limited', retryAfterSeconds: retryAfterSeconds(info.millisecondsUntilAllowed) };
}
