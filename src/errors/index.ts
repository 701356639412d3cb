export { RateLimiterError, isRateLimiterError, type RateLimiterErrorCode } from './rate-limiter-error.js';
export { InvalidOptionRangeError, InvalidOptionTypeError, type InvalidOptionDetails } from './invalid-option-error.js';
export { StoreError, type StoreErrorCode } from './store-error.js';
export { TimeoutError, type ConnectionProblem } from './timeout-error.js';
export { UnsupportedError } from './unsupported-error.js';
export { RateLimitedError } from './rate-limited-error.js';
