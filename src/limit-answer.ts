// How `limit()` turns a store's answer into its promise, shared by single
// limiters and stacks: the cheapest way that keeps every promise finite.

import type { StoreError } from './errors/store-error.js';
import type { TimeoutError } from './errors/timeout-error.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import type { Store, Tier } from './stores/store.js';
import { isStoreFailure } from './store-error-policy.js';
import { callStore } from './with-timeout.js';

const BLOCKED: Promise<boolean> = Promise.resolve(true);
const ALLOWED: Promise<boolean> = Promise.resolve(false);

/** A rejected promise for something thrown instead of returned. */
function rejectionOf(error: unknown): Promise<never> {
  return Promise.reject(error instanceof Error ? error : new Error(String(error)));
}

/** Whether a decision blocked. */
export function blockedOf(info: RateLimitInfo): boolean {
  return info.blocked;
}

/**
 * `limit()` without an action id, for a limiter and a stack alike: builds the
 * tiers and reads the clock (a bad id or a bad clock rejects as it is), asks
 * the store for the verdict alone, and settles with it. A synchronous answer
 * (the in-memory store) cannot hang, so it needs no timer: it becomes one of
 * two promises settled once for all. A promise (Redis) is given `timeoutMs`,
 * as every store call is; a store failure or a timeout goes to the
 * `onStoreError` policy, and any other error rejects as it is.
 *
 * @param tiersOf The tiers of the id being limited; throws a TypeError for a bad id.
 * @param readClock Reads the attempt's time; undefined when the store reads it (`clock: 'redis'`).
 * @param onStoreFailure Applies the policy to a store failure.
 */
export function limitThrough(
  store: Store,
  tiersOf: () => Tier[],
  readClock: (() => number) | undefined,
  timeoutMs: number,
  onStoreFailure: (error: StoreError | TimeoutError) => Promise<RateLimitInfo>,
): Promise<boolean> {
  let tiers: Tier[];
  let now: number | undefined;
  try {
    tiers = tiersOf();
    now = readClock?.();
  } catch (error) {
    return rejectionOf(error);
  }
  let answer: Promise<boolean> | boolean;
  try {
    answer = store.limit(tiers, now);
  } catch (error) {
    answer = rejectionOf(error);
  }
  if (answer === true) return BLOCKED;
  if (answer === false) return ALLOWED;
  const pending = answer;
  return callStore(() => pending, timeoutMs, 'Recording an attempt').then(undefined, async (error: unknown) => {
    if (!isStoreFailure(error)) throw error;
    return blockedOf(await onStoreFailure(error));
  });
}
