/** Marks this library's errors, across copies of the library (the ES module and CommonJS builds, two versions). */
export const ERROR_BRAND = Symbol.for('rolling-window-limiter.error');

/** Stable codes carried by every error this library throws itself. */
export type RateLimiterErrorCode =
  | 'ERR_RATE_LIMITER_INVALID_OPTION'
  | 'ERR_RATE_LIMITER_LIMITED'
  | 'ERR_RATE_LIMITER_STORE'
  | 'CIRCUIT_OPEN'
  | 'NAMESPACE_CONFLICT'
  | 'ERR_RATE_LIMITER_TIMEOUT'
  | 'ERR_RATE_LIMITER_UNSUPPORTED';

/**
 * Base class of the errors this library throws. The invalid-option errors
 * ({@link InvalidOptionTypeError}, {@link InvalidOptionRangeError}) must be a
 * `TypeError` or a `RangeError`, so they cannot extend it; `instanceof
 * RateLimiterError` and {@link isRateLimiterError} still recognise them (and
 * errors from another copy of the library) by a brand.
 *
 * Being rate limited is never an error: it is the `true` of
 * {@link RollingRateLimiter.limit} or the `blocked` field of
 * {@link RateLimitInfo}.
 */
export class RateLimiterError extends Error {
  /** A stable, machine-readable code; see {@link RateLimiterErrorCode}. */
  readonly code: RateLimiterErrorCode;

  /**
   * @param message What happened and what to do about it.
   * @param code The stable code of this failure.
   * @param options `cause`: the underlying error, when there is one.
   */
  constructor(message: string, code: RateLimiterErrorCode, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    Object.defineProperty(this, ERROR_BRAND, { value: true });
  }

  /** The error's name, `'RateLimiterError'`, as in its stack trace. */
  override readonly name: string = 'RateLimiterError';

  /**
   * `error instanceof RateLimiterError` is true for every error of this
   * library, from any copy of it; `instanceof` a subclass stays the ordinary
   * prototype check.
   */
  static override [Symbol.hasInstance](instance: unknown): boolean {
    if (this === RateLimiterError) return isRateLimiterError(instance);
    return Function.prototype[Symbol.hasInstance].call(this, instance);
  }
}

/**
 * True when `error` is one of this library's errors, even when it comes from
 * another copy of the library (a second version in `node_modules`, or the
 * CommonJS build next to the ES module build).
 *
 * @example
 * ```ts
 * try {
 *   await limiter.limit(userId);
 * } catch (error) {
 *   if (isRateLimiterError(error) && error.code === 'ERR_RATE_LIMITER_TIMEOUT') {
 *     // Redis did not answer in time
 *   }
 *   throw error;
 * }
 * ```
 */
export function isRateLimiterError(error: unknown): error is RateLimiterError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[ERROR_BRAND] === true;
}
