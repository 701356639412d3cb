import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const limiter = new RollingRateLimiter({ client: redis, namespace: 'push', interval: 60_000, maxInInterval: 10 });
function serviceUnavailable(): void {
  console.log('503');
}
async function sendPush(userId: string): Promise<void> {
  console.log(`pushed to ${userId}`);
}

// docs:begin
import { isRateLimiterError } from 'rolling-window-limiter';

/** The codes of a store that is down: it failed, did not answer within `timeout`, or its circuit is open. */
const STORE_UNAVAILABLE = new Set(['ERR_RATE_LIMITER_STORE', 'ERR_RATE_LIMITER_TIMEOUT', 'CIRCUIT_OPEN']);

async function sendIfAllowed(userId: string): Promise<void> {
  try {
    if (await limiter.limit(userId)) return;
  } catch (error) {
    if (isRateLimiterError(error) && STORE_UNAVAILABLE.has(error.code)) {
      return serviceUnavailable();
    }
    throw error;
  }
  await sendPush(userId);
}
// docs:end

await sendIfAllowed('user-1');
await redis.quit();
