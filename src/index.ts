export { RollingRateLimiter } from './rolling-rate-limiter.js';
export type { TieredLimiter } from './core/tiered-limiter.js';
export type { RollingRateLimiterOptions } from './core/options.js';
export type { RateLimitInfo, StoreFailure } from './core/rate-limit-info.js';
export type { FallbackLimiter, StoreErrorPolicy } from './resilience/store-error-policy.js';
export type { WaitOptions, WrapOptions } from './core/waiting.js';
export type { AttemptOptions } from './core/identity.js';
export type { LimiterId } from './core/identity.js';
export type { MicrosecondClock } from './core/clock.js';
export type { Duration, DurationUnit } from './core/duration.js';
export type {
  CallbackRedisLikeClient,
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
export type { CircuitBreakerOptions } from './resilience/circuit-breaker.js';
export { RateLimiterStack, type RateLimiterStackOptions, type StackRateLimitInfo, type TierRateLimitInfo } from './rate-limiter-stack.js';
export {
  CIRCUIT_CHANNEL,
  DECISION_CHANNEL,
  STORE_ERROR_CHANNEL,
  type CircuitMessage,
  type DecisionMessage,
  type StoreErrorMessage,
  type StoreErrorPolicyName,
} from './core/diagnostics.js';
