export { RollingRateLimiter } from './limiters/rolling-rate-limiter.js';
export type { TieredLimiter } from './limiters/tiered-limiter.js';
export type { RollingRateLimiterOptions, ValidateOptions } from './options/limiter-options.js';
export { OPTION_WARNING_CODES } from './options/option-warnings.js';
export type { RateLimitInfo, StoreFailure } from './core/rate-limit-info.js';
export type { FallbackLimiter, StoreErrorPolicy } from './core/store-error-policy.js';
export type { WaitOptions, WrapOptions } from './core/waiting.js';
export type { AttemptOptions, DryRunOptions, LimiterId } from './core/identity.js';
export type { MicrosecondClock } from './core/clock.js';
export type { Duration, DurationUnit } from './core/check.js';
export { isDuration, parseDuration } from './core/check.js';
export { parseRule, parseRules, type LimiterRule } from './options/limiter-rules.js';
export type {
  CallbackRedisLikeClient,
  GlideLikeClient,
  IORedisLikeClient,
  NodeRedisLikeClient,
  NodeRedisLikeCluster,
  NodeRedisLikeSentinel,
  RedisClient,
  UpstashLikeClient,
} from './redis/adapters/client-types.js';
export { RateLimiterError, isRateLimiterError, type RateLimiterErrorCode } from './errors/rate-limiter-error.js';
export { InvalidOptionRangeError, InvalidOptionTypeError, type InvalidOptionDetails } from './errors/invalid-option-error.js';
export { StoreError, type StoreErrorCode } from './errors/store-error.js';
export { TimeoutError, type ConnectionProblem } from './errors/timeout-error.js';
export { UnsupportedError } from './errors/unsupported-error.js';
export { RateLimitedError } from './errors/rate-limited-error.js';
export type { CircuitBreakerOptions } from './options/circuit-breaker-options.js';
export { RateLimiterStack, type RateLimiterStackOptions, type StackRateLimitInfo, type TierRateLimitInfo } from './limiters/rate-limiter-stack.js';
export {
  CIRCUIT_CHANNEL,
  DECISION_CHANNEL,
  STORE_ERROR_CHANNEL,
  WARNING_CHANNEL,
  type CircuitMessage,
  type DecisionMessage,
  type StoreErrorMessage,
  type StoreErrorPolicyName,
  type WarningMessage,
} from './core/diagnostics.js';
export { SERVER_WARNING_CODES } from './redis/server-checks.js';
