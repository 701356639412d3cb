import { RateLimiterError } from './rate-limiter-error.js';

/**
 * The store (Redis) failed or answered something the limiter cannot read.
 * The original error, if any, is the standard `cause`.
 */
export class StoreError extends RateLimiterError {
  /**
   * @param message What failed.
   * @param options `cause`: the client's own error, when there is one.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'ERR_RATE_LIMITER_STORE', options);
  }

  /** The error's name, `'StoreError'`, as in its stack trace. */
  override readonly name: string = 'StoreError';
}
