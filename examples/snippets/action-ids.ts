import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const push = new RollingRateLimiter({ client: redis, namespace: 'push', interval: '1m', maxInInterval: 10 });
let failures = 1; // the first delivery fails, to show the refund
const deliver = async (id: string): Promise<void> => {
  if (failures-- > 0) throw new Error(`${id}: push service unavailable`);
};

async function sendOnce(teacherId: string, notificationId: string): Promise<string> {
  // The notification's id makes the attempt retry-safe: a retried job is not counted twice.
  const info = await push.limitWithInfo(teacherId, { actionId: notificationId });
  if (info.blocked) return `blocked, retry in ${info.millisecondsUntilAllowed} ms`;
  if (info.alreadyAdmitted) return 'already sent: not counted again';
  try {
    await deliver(notificationId);
    return `delivered, ${info.actionsRemaining} left this minute`;
  } catch {
    await push.undo(teacherId, notificationId); // not delivered: give the slot back
    return 'failed, slot given back';
  }
}

console.log(await sendOnce('teacher-7', 'n-1')); // failed, slot given back
console.log(await sendOnce('teacher-7', 'n-1')); // the job's retry: delivered, 9 left
console.log(await sendOnce('teacher-7', 'n-1')); // a duplicate of the job: already sent
await redis.quit();
