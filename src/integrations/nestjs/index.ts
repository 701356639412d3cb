// `rolling-window-limiter/nestjs`: exact rolling windows for NestJS. A storage
// for @nestjs/throttler 6 (each named throttler an exact rolling window, with
// its block) and a ThrottlerGuard that decides a route's throttlers together
// on it, and a guard of the library's own, `@RateLimit` with
// `RollingWindowGuard`, for the double click (a least gap between requests).
// Nest is loaded by this entry only; the main entry imports nothing of it.
// @nestjs/throttler is needed only by RollingWindowThrottlerGuard, which
// extends its ThrottlerGuard: the entry loads without it, and @RateLimit with
// RollingWindowGuard need only @nestjs/common and @nestjs/core.

export {
  RollingWindowThrottlerStorage,
  type RollingWindowThrottlerStorageOptions,
  type ThrottlerHit,
  type ThrottlerStorageRecord,
} from './throttler-storage.js';
export { RollingWindowThrottlerGuard } from './throttler-guard.js';
export { RateLimit, RATE_LIMIT_METADATA, type RateLimitRule } from './rate-limit-decorator.js';
export { RollingWindowGuard, type RateLimitedResponseBody } from './rolling-window-guard.js';
export type { RateLimitKeyFunction, RollingWindowGuardOptions } from './guard-options.js';
export { ipKey, DEFAULT_IPV6_SUBNET, type Ipv6Subnet } from '../../http/ip-key.js';
export type { RateLimitHeaderStyle } from '../../http/headers.js';
