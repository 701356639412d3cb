// How `limit()` turns a store's answer into its promise, shared by single
// limiters and stacks: the cheapest way that keeps every promise finite.

import type { StoreError } from './errors/store-error.js';
import type { TimeoutError } from './errors/timeout-error.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import { isStoreFailure } from './store-error-policy.js';
import { callStore } from './with-timeout.js';

const BLOCKED: Promise<boolean> = Promise.resolve(true);
const ALLOWED: Promise<boolean> = Promise.resolve(false);

/** A rejected promise for something thrown before the store was asked (a bad id, a bad clock). */
export function rejectionOf(error: unknown): Promise<never> {
  return Promise.reject(error instanceof Error ? error : new Error(String(error)));
}

/** Whether a decision blocked. */
export function blockedOf(info: RateLimitInfo): boolean {
  return info.blocked;
}

/**
 * Settles `limit()` with the store's answer. A synchronous answer (the
 * in-memory store) cannot hang, so it needs no timer: it becomes one of two
 * promises settled once for all. A promise (Redis) is given `timeoutMs`, as
 * every store call is; a store failure or a timeout goes to the
 * `onStoreError` policy, and any other error rejects as it is.
 *
 * @param ask Asks the store; may throw.
 * @param onStoreFailure Applies the limiter's policy to a store failure.
 */
export function answerLimit(
  ask: () => Promise<boolean> | boolean,
  timeoutMs: number,
  onStoreFailure: (error: StoreError | TimeoutError) => Promise<RateLimitInfo>,
): Promise<boolean> {
  let answer: Promise<boolean> | boolean;
  try {
    answer = ask();
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
