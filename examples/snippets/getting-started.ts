// docs:begin memory
import { RollingRateLimiter } from 'rolling-window-limiter';

const limiter = new RollingRateLimiter({
  interval: '1m', // at most 10 per minute...
  maxInInterval: 10,
  minDifference: '3s', // ...and at least 3 s apart
});

async function notify(userId: string): Promise<void> {
  if (await limiter.limit(userId)) return; // true = blocked: the action must not happen
  await sendPushNotification(userId);
}
// docs:end

async function sendPushNotification(userId: string): Promise<void> {
  console.log(`pushed to ${userId}`);
}

async function explain(userId: string): Promise<void> {
  // docs:begin info
  const info = await limiter.limitWithInfo(userId);
  if (info.blocked) {
    const reason = info.blockedDueToCount ? 'too many in the last minute' : 'too soon after the last one';
    console.log(`blocked (${reason}); try again in ${info.millisecondsUntilAllowed} ms`);
  } else {
    console.log(`allowed; ${info.actionsRemaining} more fit in the window`);
  }
  // docs:end
}

await notify('ada');
await notify('ada'); // blocked: too soon
await explain('grace');
