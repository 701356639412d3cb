// The `onStoreError` policy, applied alike by a single limiter and a stack.

import { StoreError } from '../errors/store-error.js';
import { TimeoutError } from '../errors/timeout-error.js';
import type { AttemptOptions, DryRunOptions, LimiterId } from './identity.js';
import type { RateLimitInfo } from './rate-limit-info.js';

/**
 * A limiter that decides while the store is unavailable, for example an
 * in-memory {@link RollingRateLimiter} with the same rules (for a stack: a
 * {@link RateLimiterStack} of in-memory limiters).
 */
export interface FallbackLimiter<Info extends RateLimitInfo = RateLimitInfo> {
  /**
   * Decides an attempt for `id` in place of the store (called by `limit` and
   * `limitWithInfo`), with the attempt's `actionId` when it has one, so that
   * a job retried during an outage is not counted twice.
   */
  limitWithInfo(id: LimiterId, options?: AttemptOptions): Promise<Info>;
  /** Decides a dry run for `id` in place of the store (called by `wouldLimit` and `wouldLimitWithInfo`), with the attempt's `cost` when it has one. */
  wouldLimitWithInfo(id: LimiterId, options?: DryRunOptions): Promise<Info>;
  /**
   * Gives back an action it admitted (called by `undo`, after the store, when
   * present): an action admitted during an outage was recorded here.
   */
  undo?(id: LimiterId, actionId: string): Promise<boolean>;
  /**
   * Sets the cost of an action it admitted (called by `settle`, after the store, when present): an action admitted
   * during an outage was recorded here.
   */
  settle?(id: LimiterId, actionId: string, cost: number): Promise<boolean>;
}

/**
 * What to do when the store fails ({@link StoreError}) or does not answer in
 * time ({@link TimeoutError}):
 *
 * | policy | the call |
 * | --- | --- |
 * | `'throw'` (default) | rejects with the error |
 * | `'allow'` | resolves as allowed (fail open) |
 * | `'block'` | resolves as blocked (fail closed) |
 * | a fallback limiter | resolves with the fallback's decision |
 *
 * A decision made by the policy carries `storeFailure` in its info, so it can
 * be logged and alerted on. Other errors (a bad id, a bad clock) always throw.
 */
export type StoreErrorPolicy<Info extends RateLimitInfo = RateLimitInfo> = 'throw' | 'allow' | 'block' | FallbackLimiter<Info>;

/** True for the failures a policy may stand in for. */
export function isStoreFailure(error: unknown): error is StoreError | TimeoutError {
  return error instanceof StoreError || error instanceof TimeoutError;
}

/** The errors of one decision that the store refused while it answered the others (a key of another type). */
const refusedAlone = new WeakSet<StoreError>();

/**
 * Marks `error` as one decision's own failure, answered by a store that works
 * (docs/semantics.md, "Failures"): the policy still stands in for it, but it
 * does not count against the store's circuit breaker.
 */
export function refusedByStore(error: StoreError): StoreError {
  refusedAlone.add(error);
  return error;
}

/** True for a failure that says the store itself is failing: a timeout, or a store error that is not one decision's own. */
export function isFailureOfStore(error: unknown): boolean {
  return isStoreFailure(error) && !(error instanceof StoreError && refusedAlone.has(error));
}

/** True when `value` is a valid `onStoreError`. */
export function isStoreErrorPolicy(value: unknown): value is StoreErrorPolicy {
  if (value === 'throw' || value === 'allow' || value === 'block') return true;
  const candidate = value as Partial<Record<'limitWithInfo' | 'wouldLimitWithInfo', unknown>> | null;
  return typeof value === 'object' && typeof candidate?.limitWithInfo === 'function' && typeof candidate.wouldLimitWithInfo === 'function';
}

/**
 * Applies the policy to a store failure: rethrows it for `'throw'`, or returns
 * the decision of `fixed` (`'allow'`, `'block'`) or of the fallback limiter,
 * marked with `storeFailure`. A fallback that fails too rejects with a
 * {@link StoreError} naming both, with the store's as `cause`.
 */
export async function decideOnStoreError<Info extends RateLimitInfo>(
  policy: StoreErrorPolicy<Info>,
  error: StoreError | TimeoutError,
  operation: 'attempt' | 'peek',
  id: LimiterId,
  fixed: (blocked: boolean) => Info,
  actionId?: string,
  cost?: number,
): Promise<Info> {
  if (policy === 'throw') throw error;
  if (policy === 'allow' || policy === 'block') {
    return { ...fixed(policy === 'block'), storeFailure: { policy, error } };
  }
  let info: Info;
  try {
    // The fallback is asked as the limiter was: with the attempt's action id and cost, and no option it was not given.
    const options = { ...(actionId === undefined || operation === 'peek' ? {} : { actionId }), ...(cost === undefined ? {} : { cost }) };
    const given = Object.keys(options).length > 0 ? options : undefined;
    if (operation === 'attempt') info = await policy.limitWithInfo(id, given);
    else info = given === undefined ? await policy.wouldLimitWithInfo(id) : await policy.wouldLimitWithInfo(id, given);
  } catch (fallbackError) {
    const reason = fallbackError instanceof Error ? fallbackError.message : String(fallbackError);
    throw new StoreError(`${error.message}; the fallback limiter failed too: ${reason}`, { cause: error });
  }
  return { ...info, storeFailure: { policy: 'fallback', error } };
}

/**
 * `undo` or `settle` for a limiter or a stack: in the store, then in a fallback limiter that can do the same (it
 * admitted actions while the store was down), whose answer stands in when the store fails; without one, the store's
 * failure rejects. `inFallback` is undefined when the policy has no such fallback.
 */
export async function changeActionWithPolicy(inStore: () => Promise<boolean>, inFallback: (() => Promise<boolean>) | undefined): Promise<boolean> {
  let changed = false;
  try {
    changed = await inStore();
  } catch (error) {
    if (inFallback === undefined || !isStoreFailure(error)) throw error;
  }
  return ((await inFallback?.()) ?? false) || changed;
}

/** `undo` for a limiter or a stack, as {@link changeActionWithPolicy} says. */
export function undoWithPolicy(
  policy: StoreErrorPolicy<RateLimitInfo>,
  id: LimiterId,
  actionId: string,
  undoInStore: () => Promise<boolean>,
): Promise<boolean> {
  const fallback = typeof policy === 'object' && typeof policy.undo === 'function' ? policy : undefined;
  return changeActionWithPolicy(undoInStore, fallback === undefined ? undefined : () => fallback.undo?.(id, actionId) ?? Promise.resolve(false));
}

/** `settle` for a limiter or a stack, as {@link changeActionWithPolicy} says. */
export function settleWithPolicy(
  policy: StoreErrorPolicy<RateLimitInfo>,
  id: LimiterId,
  actionId: string,
  cost: number,
  settleInStore: () => Promise<boolean>,
): Promise<boolean> {
  const fallback = typeof policy === 'object' && typeof policy.settle === 'function' ? policy : undefined;
  return changeActionWithPolicy(settleInStore, fallback === undefined ? undefined : () => fallback.settle?.(id, actionId, cost) ?? Promise.resolve(false));
}
