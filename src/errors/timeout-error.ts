import { RateLimiterError } from './rate-limiter-error.js';

/**
 * The store did not answer within the limiter's `timeout`. The call's outcome
 * is unknown: the attempt may or may not have been recorded.
 */
export class TimeoutError extends RateLimiterError {
  /** The timeout that ran out, in milliseconds. */
  readonly timeoutMs: number;

  /** @param timeoutMs The timeout that ran out, in milliseconds. */
  constructor(timeoutMs: number) {
    super(
      `The store did not answer within ${timeoutMs} ms; check that Redis is reachable, or raise the \`timeout\` option`,
      'ERR_RATE_LIMITER_TIMEOUT',
    );
    this.timeoutMs = timeoutMs;
  }

  /** The error's name, `'TimeoutError'`, as in its stack trace. */
  override readonly name: string = 'TimeoutError';
}
