// How `limit()` turns a store's answer into its promise, shared by single
// limiters and stacks: the cheapest way that keeps every promise finite.

import type { StoreError } from './errors/store-error.js';
import type { TimeoutError } from './errors/timeout-error.js';
import type { LimiterId } from './ids.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import type { Store, Tier } from './stores/store.js';
import { settleInTime } from './with-timeout.js';

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
 * What `limit()` needs of a limiter or a stack, made once when it is built so
 * that a call allocates nothing for it.
 */
export interface LimitRoute {
  readonly store: Store;
  /** The tiers of the id being limited; throws a TypeError for a bad id. */
  readonly tiersOf: (id: LimiterId) => Tier[];
  /** Reads the attempt's time; undefined when the store reads it (`clock: 'redis'`). */
  readonly readClock: (() => number) | undefined;
  readonly timeoutMs: number;
  /** Applies the `onStoreError` policy to a store failure. */
  readonly onStoreFailure: (error: StoreError | TimeoutError, id: LimiterId) => Promise<RateLimitInfo>;
}

/**
 * `limit()` without an action id, for a limiter and a stack alike: builds the
 * tiers and reads the clock (a bad id or a bad clock rejects as it is), asks
 * the store for the verdict alone, and settles with it. A synchronous answer
 * (the in-memory store) cannot hang, so it needs no timer: it becomes one of
 * two promises settled once for all. A promise (Redis) is given the route's
 * timeout, as every store call is; a store failure or a timeout goes to the
 * `onStoreError` policy, and any other error rejects as it is.
 */
export function limitThrough(route: LimitRoute, id: LimiterId): Promise<boolean> {
  let tiers: Tier[];
  let now: number | undefined;
  try {
    tiers = route.tiersOf(id);
    now = route.readClock?.();
  } catch (error) {
    return rejectionOf(error);
  }
  let answer: Promise<boolean> | boolean;
  try {
    answer = route.store.limit(tiers, now);
  } catch (error) {
    answer = rejectionOf(error);
  }
  if (answer === true) return BLOCKED;
  if (answer === false) return ALLOWED;
  return settleInTime(answer, route.timeoutMs, 'Recording an attempt', (failure) => route.onStoreFailure(failure, id).then(blockedOf));
}
