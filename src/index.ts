export { RollingRateLimiter } from './limiters/rolling-rate-limiter.js';
export type { TieredLimiter } from './limiters/tiered-limiter.js';
export type { RollingRateLimiterOptions } from './options/limiter-options.js';
export type { RateLimitInfo, StoreFailure } from './core/rate-limit-info.js';
export type { FallbackLimiter, StoreErrorPolicy } from './core/store-error-policy.js';
export type { WaitOptions, WrapOptions } from './core/waiting.js';
export type { AttemptOptions } from './core/identity.js';
export type { LimiterId } from './core/identity.js';
export type { MicrosecondClock } from './core/clock.js';
export type { Duration, DurationUnit } from './core/check.js';
export type {
  CallbackRedisLikeClient,
  GlideLikeClient,
  IORedisLikeClient,
  NodeRedisLikeClient,
  NodeRedisLikeCluster,
  NodeRedisLikeSentinel,
  RedisClient,
} from './redis/adapters/client-types.js';
export {
  RateLimiterError,
  StoreError,
  TimeoutError,
  UnsupportedError,
  isRateLimiterError,
  InvalidOptionRangeError,
  InvalidOptionTypeError,
  RateLimitedError,
  type InvalidOptionDetails,
  type RateLimiterErrorCode,
  type StoreErrorCode,
  type ConnectionProblem,
} from './errors/index.js';
export type { CircuitBreakerOptions } from './options/circuit-breaker-options.js';
export { RateLimiterStack, type RateLimiterStackOptions, type StackRateLimitInfo, type TierRateLimitInfo } from './limiters/rate-limiter-stack.js';
export {
  CIRCUIT_CHANNEL,
  DECISION_CHANNEL,
  STORE_ERROR_CHANNEL,
  type CircuitMessage,
  type DecisionMessage,
  type StoreErrorMessage,
  type StoreErrorPolicyName,
} from './core/diagnostics.js';
