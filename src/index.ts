export { RollingRateLimiter } from './rolling-rate-limiter.js';
export type { RollingRateLimiterOptions } from './options.js';
export type { RateLimitInfo } from './rate-limit-info.js';
export type { LimiterId } from './ids.js';
export type { MicrosecondClock } from './clock.js';
export type { RedisClient, IORedisLikeClient } from './redis/client-types.js';
export {
  RateLimiterError,
  StoreError,
  TimeoutError,
  UnsupportedError,
  isRateLimiterError,
  type RateLimiterErrorCode,
} from './errors/index.js';
export { RateLimiterStack, type StackRateLimitInfo, type TierRateLimitInfo } from './rate-limiter-stack.js';
