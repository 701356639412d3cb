import { Redis } from 'ioredis';
import { RollingRateLimiter as Limiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const limiter = new Limiter({ client: redis, namespace: 'push', interval: 60_000, maxInInterval: 10, onStoreError: 'block' });
const logger = { error: (error: unknown) => console.error(error) };
async function sendPush(userId: string): Promise<void> {
  console.log(`pushed to ${userId}`);
}

// docs:begin
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isRateLimiterError, type RollingRateLimiter } from 'rolling-window-limiter';

/** Gives back `actionId`'s slot once Redis answers again: the attempt may have been recorded there after it timed out. */
async function undoWhenStoreAnswers(limiter: RollingRateLimiter, id: string, actionId: string): Promise<void> {
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      // A dry run that Redis answered (no `storeFailure`): what was sent before it on this connection, the
      // timed-out attempt included, has been decided.
      if ((await limiter.wouldLimitWithInfo(id)).storeFailure === undefined) {
        await limiter.undo(id, actionId);
        return;
      }
    } catch (error) {
      if (!isRateLimiterError(error)) throw error; // under 'throw', Redis is still down
    }
    await sleep(1_000);
  }
}

// onStoreError: 'block'
async function notify(userId: string): Promise<void> {
  const actionId = randomUUID();
  const info = await limiter.limitWithInfo(userId, { actionId });
  if (info.blocked) {
    if (info.storeFailure) undoWhenStoreAnswers(limiter, userId, actionId).catch((error: unknown) => logger.error(error));
    return;
  }
  await sendPush(userId);
}
// docs:end

await notify('user-1');
await redis.quit();
