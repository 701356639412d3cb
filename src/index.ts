export { RollingRateLimiter } from './rolling-rate-limiter.js';
export type { RollingRateLimiterOptions } from './options.js';
export type { RateLimitInfo, StoreFailure } from './rate-limit-info.js';
export type { FallbackLimiter, StoreErrorPolicy } from './store-error-policy.js';
export type { WaitOptions, WrapOptions } from './waiting.js';
export type { AttemptOptions } from './action-ids.js';
export type { LimiterId } from './ids.js';
export type { MicrosecondClock } from './clock.js';
export type { Duration, DurationUnit } from './duration.js';
export type {
  CallbackRedisLikeClient,
  IORedisLikeClient,
  NodeRedisLikeClient,
  NodeRedisLikeCluster,
  NodeRedisLikeSentinel,
  RedisClient,
} from './redis/client-types.js';
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
export type { CircuitBreakerOptions } from './circuit-breaker.js';
export { RateLimiterStack, type RateLimiterStackOptions, type StackRateLimitInfo, type TierRateLimitInfo } from './rate-limiter-stack.js';
export {
  CIRCUIT_CHANNEL,
  DECISION_CHANNEL,
  STORE_ERROR_CHANNEL,
  type CircuitMessage,
  type DecisionMessage,
  type StoreErrorMessage,
  type StoreErrorPolicyName,
} from './diagnostics.js';
