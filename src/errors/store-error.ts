import { RateLimiterError, type RateLimiterErrorCode } from './rate-limiter-error.js';

/** The codes a {@link StoreError} carries. */
export type StoreErrorCode = Extract<RateLimiterErrorCode, 'ERR_RATE_LIMITER_STORE' | 'CIRCUIT_OPEN' | 'NAMESPACE_CONFLICT'>;

/**
 * The store (Redis) failed or answered something the limiter cannot read
 * (`code` `'ERR_RATE_LIMITER_STORE'`), or was not called at all because its
 * circuit breaker is open (`'CIRCUIT_OPEN'`: the store failed
 * `failureThreshold` times in a row), or the id's key holds the records of a
 * limiter of the other kind written under the same namespace
 * (`'NAMESPACE_CONFLICT'`: a limit of actions and a budget of cost; that
 * decision fails alone, and does not count against the circuit breaker).
 * The original error, if any, is the standard `cause`.
 */
export class StoreError extends RateLimiterError {
  /** `'ERR_RATE_LIMITER_STORE'`; `'CIRCUIT_OPEN'` for a call an open circuit kept from the store; `'NAMESPACE_CONFLICT'` for a key of the other kind of limiter. */
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
