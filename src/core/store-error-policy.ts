// The `onStoreError` policy, applied alike by a single limiter and a stack.

import { StoreError } from '../errors/store-error.js';
import { TimeoutError } from '../errors/timeout-error.js';
import type { AttemptOptions, LimiterId } from './identity.js';
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
  /** Decides a dry run for `id` in place of the store (called by `wouldLimit` and `wouldLimitWithInfo`). */
  wouldLimitWithInfo(id: LimiterId): Promise<Info>;
  /**
   * Gives back an action it admitted (called by `undo`, after the store, when
   * present): an action admitted during an outage was recorded here.
   */
  undo?(id: LimiterId, actionId: string): Promise<boolean>;
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
): Promise<Info> {
  if (policy === 'throw') throw error;
  if (policy === 'allow' || policy === 'block') {
    return { ...fixed(policy === 'block'), storeFailure: { policy, error } };
  }
  let info: Info;
  try {
    info = operation === 'attempt' ? await policy.limitWithInfo(id, actionId === undefined ? undefined : { actionId }) : await policy.wouldLimitWithInfo(id);
  } catch (fallbackError) {
    const reason = fallbackError instanceof Error ? fallbackError.message : String(fallbackError);
    throw new StoreError(`${error.message}; the fallback limiter failed too: ${reason}`, { cause: error });
  }
  return { ...info, storeFailure: { policy: 'fallback', error } };
}

/**
 * `undo` for a limiter or a stack: from the store, then from a fallback limiter
 * that can undo (it admitted actions while the store was down), whose answer
 * stands in when the store fails; without one, the store's failure rejects.
 */
export async function undoWithPolicy(
  policy: StoreErrorPolicy<RateLimitInfo>,
  id: LimiterId,
  actionId: string,
  undoInStore: () => Promise<boolean>,
): Promise<boolean> {
  const fallback = typeof policy === 'object' && typeof policy.undo === 'function' ? policy : undefined;
  let removed = false;
  try {
    removed = await undoInStore();
  } catch (error) {
    if (fallback === undefined || !isStoreFailure(error)) throw error;
  }
  return ((await fallback?.undo?.(id, actionId)) ?? false) || removed;
}
