// What the middlewares (Express, Hono) make of a request's cost that the
// limiter refuses. The cost comes from the request (the `cost` option's
// function), so a refusal is the client's request, not the server, at fault:
//
// - above a tier's whole budget (`maxCostInInterval`), no window could ever
//   hold it: 413 Content Too Large, which the middleware answers itself with
//   a body that says so (waiting never helps, so no `Retry-After`);
// - not a positive safe integer: the limiter's own error goes on to the
//   framework's error handling, marked as a client error the way each
//   framework reads one (`status` and `statusCode` 400 with `expose`, as
//   http-errors marks them for Express; `getResponse()`, as Hono's
//   HTTPException has it), so that the framework's own handler answers 400.
//
// Both are recognised from the error the limiter throws (an invalid-option
// error for `cost`) and the cost itself; any other error is left as it was.

import type { InvalidOptionDetails } from '../errors/invalid-option-error.js';
import { isRateLimiterError } from '../errors/rate-limiter-error.js';
import type { RateLimitPolicy } from './policies.js';

/** The status of a request whose cost is above a tier's whole budget: 413 Content Too Large. */
export const COST_EXCEEDS_BUDGET_STATUS = 413;
/** The status an invalid cost's error carries to the framework's error handling: 400 Bad Request. */
export const INVALID_COST_STATUS = 400;

/** The body of a 413: the request's cost, and the most any request may cost. */
export interface CostExceedsBudgetBody {
  /** Always `'cost_exceeds_budget'`: tells this refusal from a 429 and from other errors. */
  readonly error: 'cost_exceeds_budget';
  /** What the request would cost. */
  readonly cost: number;
  /** The most a request may cost: the smallest `maxCostInInterval` of the limiter's tiers. */
  readonly maxCost: number;
}

/** The body of a 400 from Hono's default error handler, for an invalid cost. */
export interface InvalidCostBody {
  /** Always `'invalid_cost'`. */
  readonly error: 'invalid_cost';
  /** The limiter's message: what the cost was, and what it should be. */
  readonly message: string;
}

/** What the middleware makes of an error from deciding a request with `cost`: a 413's body, or the error to rethrow. */
export type CostRefusal = { readonly exceedsBudget: CostExceedsBudgetBody } | { readonly error: unknown };

/** True when `error` is the limiter's refusal of the `cost` it was given (a `TypeError` or `RangeError` naming `cost`). */
function refusesCost(error: unknown): boolean {
  return (
    isRateLimiterError(error) &&
    (error instanceof TypeError || error instanceof RangeError) &&
    (error as unknown as Partial<InvalidOptionDetails>).option === 'cost'
  );
}

/**
 * Sorts out an error thrown while deciding a request with `cost`: above the smallest budget of `policies`, the
 * body of a 413; not a positive safe integer, the error marked as a client error ({@link asInvalidCost}); anything
 * else (the cost is fine, and the limiter failed for another reason) the error as it was.
 */
export function costRefusal(error: unknown, cost: unknown, policies: readonly RateLimitPolicy[]): CostRefusal {
  if (!refusesCost(error)) return { error };
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost < 1) return { error: asInvalidCost(error) };
  const budgets = policies.flatMap((policy) => (policy.maxCostInInterval === undefined ? [] : [policy.maxCostInInterval]));
  const maxCost = Math.min(...budgets);
  if (error instanceof RangeError && cost > maxCost) return { exceedsBudget: { error: 'cost_exceeds_budget', cost, maxCost } };
  return { error };
}

/**
 * Marks `error` (the limiter's refusal of a request's cost) as the client's: `status` and `statusCode` 400 and
 * `expose` true, which Express's handler (and http-errors' conventions) read, and `getResponse()`, a 400 with an
 * {@link InvalidCostBody}, which Hono's default error handler sends. The error stays what it was (its class, name,
 * message and code).
 */
export function asInvalidCost<E>(error: E): E {
  if (typeof error !== 'object' || error === null) return error;
  const message = error instanceof Error ? error.message : '';
  Object.defineProperties(error, {
    status: { value: INVALID_COST_STATUS, enumerable: true, configurable: true },
    statusCode: { value: INVALID_COST_STATUS, enumerable: true, configurable: true },
    expose: { value: true, enumerable: true, configurable: true },
    getResponse: {
      value: (): Response => {
        const body: InvalidCostBody = { error: 'invalid_cost', message };
        return new Response(JSON.stringify(body), { status: INVALID_COST_STATUS, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
      },
      configurable: true,
    },
  });
  return error;
}
