import { RollingRateLimiter } from '../../src/index.js';
import { describeLimiterContract } from './limiter-contract.js';

describeLimiterContract(
  'the in-memory store',
  () => (options) => new RollingRateLimiter(options),
  { countBlockedFalse: true, modelSchedules: 5000 },
);
