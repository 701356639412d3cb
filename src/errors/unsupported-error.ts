import { RateLimiterError } from './rate-limiter-error.js';

/**
 * The options ask for something this client or this version cannot do, for
 * example an unknown kind of Redis client. Thrown at construction, never at
 * the first call.
 */
export class UnsupportedError extends RateLimiterError {
  /** @param message What is not supported, and what is. */
  constructor(message: string) {
    super(message, 'ERR_RATE_LIMITER_UNSUPPORTED');
  }

  /** The error's name, `'UnsupportedError'`, as in its stack trace. */
  override readonly name: string = 'UnsupportedError';
}
