// `@RateLimit(rule)`: the rule of a route handler (or of every handler of a
// controller), checked once when the decorator runs and left as Nest
// metadata for RollingWindowGuard to read.

import { SetMetadata } from '@nestjs/common';
import { boolean, duration, integer, MAX_INTEGER, MAX_MILLISECONDS, normalize, optional, string, type Duration, type Normalized } from '../../core/check.js';
import { RollingRateLimiter } from '../../limiters/rolling-rate-limiter.js';

/** The rule of {@link RateLimit}: one exact rolling window, with an optional least gap, per client of a handler. */
export interface RateLimitRule {
  /** The rolling window: milliseconds, or a duration such as `'10s'` or `'1m'`. */
  readonly interval: Duration;
  /** The most requests a client may make in any window of `interval`. */
  readonly maxInInterval: number;
  /**
   * The least time between two requests of a client (the double click):
   * milliseconds or a duration, at most `interval`.
   * @default 0
   */
  readonly minDifference?: Duration;
  /**
   * Whether refused requests count too: with `true`, a client that keeps
   * retrying stays refused until it slows down; with `false`, only admitted
   * requests count. See the library's `countBlocked`.
   * @default true
   */
  readonly countBlocked?: boolean;
  /**
   * The limit's name: its keys are `<guard namespace>:<name>`, and it is the
   * policy's name in the `RateLimit-Policy` and `RateLimit` headers. Handlers
   * with the same name share one limit per client (give them the same rule).
   * @default '<controller class name>.<handler name>'
   */
  readonly name?: string;
}

/** The key of the metadata {@link RateLimit} sets, which {@link RollingWindowGuard} reads. */
export const RATE_LIMIT_METADATA = 'rolling-window-limiter:rate-limit';

/** The defaults of {@link RateLimitRule}. */
const RULE_DEFAULTS = Object.freeze({ minDifference: 0, countBlocked: true });
const RULE_SCHEMA = {
  interval: duration(1, MAX_MILLISECONDS),
  maxInInterval: integer(1, MAX_INTEGER),
  minDifference: optional(duration(0, MAX_MILLISECONDS), RULE_DEFAULTS.minDifference),
  countBlocked: optional(boolean, RULE_DEFAULTS.countBlocked),
  name: optional(string, undefined),
};

/** A {@link RateLimitRule} once checked, in milliseconds, the defaults filled in. */
export type NormalizedRateLimitRule = Normalized<typeof RULE_SCHEMA>;

/**
 * Limits a route handler, or with a class every handler of a controller
 * (each on its own limit, unless they share a `name`), when
 * {@link RollingWindowGuard} guards it: each client (the signed-in user, else
 * the client IP) gets at most `maxInInterval` requests in any rolling window
 * of `interval`, at least `minDifference` apart. A refused request is
 * answered 429 with `Retry-After`. A rule on the handler wins over one on
 * its class.
 *
 * @example
 * ```ts
 * @Controller('orders')
 * @UseGuards(new RollingWindowGuard({ client: redis, namespace: 'orders' }))
 * export class OrdersController {
 *   // One order per 2 seconds per user (a double click is refused), at most 10 a minute.
 *   @RateLimit({ interval: '1m', maxInInterval: 10, minDifference: '2s' })
 *   @Post()
 *   create(): string {
 *     return 'ordered';
 *   }
 * }
 * ```
 *
 * @throws TypeError when an option has the wrong type or is unknown.
 * @throws RangeError when a value is out of range, or `minDifference` exceeds `interval`.
 */
export function RateLimit(rule: RateLimitRule): MethodDecorator & ClassDecorator {
  const checked: NormalizedRateLimitRule = Object.freeze(normalize(rule, RULE_SCHEMA, 'the @RateLimit options'));
  // The limiter's own checks of the values together (minDifference within interval), at once rather than at the first request.
  void new RollingRateLimiter({ interval: checked.interval, maxInInterval: checked.maxInInterval, minDifference: checked.minDifference });
  return SetMetadata(RATE_LIMIT_METADATA, checked);
}
