import { RateLimiterError, type RateLimiterErrorCode } from './rate-limiter-error.js';

/**
 * The codes a {@link StoreError} carries: `'ERR_RATE_LIMITER_STORE'` when the
 * store failed, `'CIRCUIT_OPEN'` when the call did not go to
 * the store at all because its circuit breaker is open (the store failed
 * `failureThreshold` times in a row; the last failure is the `cause`).
 */
export type StoreErrorCode = Extract<RateLimiterErrorCode, 'ERR_RATE_LIMITER_STORE' | 'CIRCUIT_OPEN'>;

/**
 * The store (Redis) failed or answered something the limiter cannot read, or
 * was not called because its circuit breaker is open (`code`
 * `'CIRCUIT_OPEN'`). The original error, if any, is the
 * standard `cause`.
 */
export class StoreError extends RateLimiterError {
  /** `'ERR_RATE_LIMITER_STORE'`, or `'CIRCUIT_OPEN'` for a call an open circuit kept from the store. */
  declare readonly code: StoreErrorCode;

  /**
   * @param message What failed.
   * @param options `cause`: the client's own error, when there is one; `code`: `'ERR_RATE_LIMITER_STORE'` unless given.
   */
  constructor(message: string, options?: { cause?: unknown; code?: StoreErrorCode }) {
    super(message, options?.code ?? 'ERR_RATE_LIMITER_STORE', options);
  }

  /** The error's name, `'StoreError'`, as in its stack trace. */
  override readonly name: string = 'StoreError';
}
