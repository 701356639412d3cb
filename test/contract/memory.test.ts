import { RollingRateLimiter } from '../../src/index.js';
import { describeLimiterContract } from './limiter-contract.js';
import { describeStackContract } from './stack-contract.js';
import { describeActionIdContract } from './action-ids-contract.js';
import { describeCostContract } from './cost-contract.js';

describeLimiterContract('the in-memory store', () => (options) => new RollingRateLimiter(options), {
  countBlockedFalse: true,
  actionIds: true,
  modelSchedules: 5000,
});
describeStackContract('the in-memory store', () => (options) => new RollingRateLimiter(options), { modelSchedules: 2000, ownStatePerLimiter: true });
describeActionIdContract('the in-memory store', () => (options) => new RollingRateLimiter(options));
describeCostContract('the in-memory store', () => (options) => new RollingRateLimiter(options));
