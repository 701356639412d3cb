import { boolean, normalize, optional, type Normalized } from '../core/check.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import type { StoreErrorPolicy } from '../core/store-error-policy.js';
import { circuitBreakerOption, type CircuitBreakerOptions } from './circuit-breaker-options.js';
import { LIMITER_DEFAULTS, storeErrorPolicy } from './limiter-options.js';

/** Options of {@link RateLimiterStack}. */
export interface RateLimiterStackOptions<Info extends RateLimitInfo = RateLimitInfo> {
  /**
   * What to do when the store fails or does not answer in time; see
   * {@link StoreErrorPolicy}. A fallback is a stack (or anything with
   * `limitWithInfo` and `wouldLimitWithInfo` returning a {@link StackRateLimitInfo}).
   * @default 'throw'
   */
  readonly onStoreError?: StoreErrorPolicy<Info>;
  /**
   * The stack's own circuit breaker around its store calls; see
   * the `circuitBreaker` option of {@link RollingRateLimiter}.
   * @default { failureThreshold: 5, cooldown: 1000 }
   */
  readonly circuitBreaker?: CircuitBreakerOptions | false;
  /**
   * Sends the stack's decisions to Redis in batches, as the `batch` option of
   * {@link RollingRateLimiter} describes: the stack's own setting, whatever
   * its limiters'. Each decision still covers every tier atomically.
   * @default false
   */
  readonly batch?: boolean;
}

const STACK_SCHEMA = {
  onStoreError: storeErrorPolicy,
  circuitBreaker: circuitBreakerOption,
  batch: optional(boolean, LIMITER_DEFAULTS.batch),
};

/** A stack's options after validation, with every default filled in. */
export type NormalizedStackOptions<Info extends RateLimitInfo> = Omit<Normalized<typeof STACK_SCHEMA>, 'onStoreError'> & { readonly onStoreError: StoreErrorPolicy<Info> };

/** Validates a stack's options (an unknown key is refused, as for a limiter) and fills in the defaults. */
export function normalizeStackOptions<Info extends RateLimitInfo>(options: RateLimiterStackOptions<Info> | undefined): NormalizedStackOptions<Info> {
  const { onStoreError, circuitBreaker, batch } = normalize(options, STACK_SCHEMA, "the stack's options", { allowMissing: true });
  return { onStoreError: onStoreError as StoreErrorPolicy<Info>, circuitBreaker, batch };
}
