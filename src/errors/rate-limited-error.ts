import type { RateLimitInfo } from '../core/rate-limit-info.js';
import { RateLimiterError } from './rate-limiter-error.js';

/**
 * An action was not admitted, where the caller asked for an error rather than
 * a result: a function made by `wrap` with `whenLimited: 'reject'`, or
 * `waitUntilAllowed` when the wait would pass `maxWait`. Carries the
 * decision, so a caller can tell the user when to try again.
 */
export class RateLimitedError<Info extends RateLimitInfo = RateLimitInfo> extends RateLimiterError {
  /** The decision that blocked the action. */
  readonly info: Info;
  /** The error's name, `'RateLimitedError'`, as in its stack trace. */
  override readonly name: string = 'RateLimitedError';

  /**
   * @param info The decision that blocked the action.
   * @param message Why the action was not admitted.
   */
  constructor(info: Info, message = `Rate limited: try again in ${info.millisecondsUntilAllowed} ms`) {
    super(message, 'ERR_RATE_LIMITER_LIMITED');
    this.info = info;
  }
}
