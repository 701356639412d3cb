import { ERROR_BRAND, type RateLimiterErrorCode } from './rate-limiter-error.js';

/** What the invalid-option errors carry besides their message. */
export interface InvalidOptionDetails {
  /** The option's name, e.g. `maxInInterval`. */
  readonly option: string;
  /** The value received. */
  readonly received: unknown;
}

/**
 * An option has the wrong type (or is unknown, or missing). A `TypeError`, as
 * JavaScript users expect, that {@link isRateLimiterError} and
 * `instanceof RateLimiterError` also recognise.
 */
export class InvalidOptionTypeError extends TypeError implements InvalidOptionDetails {
  /** Always `'ERR_RATE_LIMITER_INVALID_OPTION'`; see {@link RateLimiterErrorCode}. */
  readonly code: RateLimiterErrorCode = 'ERR_RATE_LIMITER_INVALID_OPTION';
  /** The error's name, `'InvalidOptionTypeError'`, as in its stack trace. */
  override readonly name: string = 'InvalidOptionTypeError';

  /**
   * @param message Names the option, what it expects and the value received.
   * @param option The option's name.
   * @param received The value received.
   */
  constructor(
    message: string,
    readonly option: string,
    readonly received: unknown,
  ) {
    super(message);
    Object.defineProperty(this, ERROR_BRAND, { value: true });
  }
}

/**
 * An option is out of range. A `RangeError`, as JavaScript users expect, that
 * {@link isRateLimiterError} and `instanceof RateLimiterError` also recognise.
 */
export class InvalidOptionRangeError extends RangeError implements InvalidOptionDetails {
  /** Always `'ERR_RATE_LIMITER_INVALID_OPTION'`; see {@link RateLimiterErrorCode}. */
  readonly code: RateLimiterErrorCode = 'ERR_RATE_LIMITER_INVALID_OPTION';
  /** The error's name, `'InvalidOptionRangeError'`, as in its stack trace. */
  override readonly name: string = 'InvalidOptionRangeError';

  /**
   * @param message Names the option, its range and the value received.
   * @param option The option's name.
   * @param received The value received.
   */
  constructor(
    message: string,
    readonly option: string,
    readonly received: unknown,
  ) {
    super(message);
    Object.defineProperty(this, ERROR_BRAND, { value: true });
  }
}
