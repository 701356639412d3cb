import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const push = new RollingRateLimiter({ client: redis, namespace: 'push', interval: '1m', maxInInterval: 10 });
interface Notification {
  id: string;
  text: string;
}
async function deliver(notification: Notification): Promise<void> {
  if (notification.text === '') throw new Error('nothing to deliver');
}

async function send(teacherId: string, notification: Notification): Promise<void> {
  // docs:begin
  const info = await push.limitWithInfo(teacherId, { actionId: notification.id });
  if (info.blocked || info.alreadyAdmitted) return;
  try {
    await deliver(notification);
  } catch (error) {
    await push.undo(teacherId, notification.id); // not delivered: refund the slot
    throw error;
  }
  // docs:end
}

await send('teacher-7', { id: 'n-1', text: 'Lesson moved to room 4' });
await send('teacher-7', { id: 'n-1', text: 'Lesson moved to room 4' }); // a retry: not counted twice
await send('teacher-7', { id: 'n-2', text: '' }).catch((error: unknown) => console.log(`n-2: ${String(error)}`)); // refunded
console.log('remaining:', (await push.wouldLimitWithInfo('teacher-7')).actionsRemaining);
await redis.quit();
