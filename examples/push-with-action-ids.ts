// Sending push notifications with action ids: each notification's id makes
// its attempt idempotent (a retried job is not counted twice) and refundable
// (a notification that could not be delivered gives its slot back).
// In memory by default; set REDIS_URL to run it on Redis.
//
//   npx tsx examples/push-with-action-ids.ts

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from '../src/index.js';

const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined;
const run = randomBytes(4).toString('hex');
const store = redis ? { client: redis } : {};
// Per teacher: at most 3 per minute, and at least 3 s apart; only delivered pushes count.
const perMinute = new RollingRateLimiter({ ...store, namespace: `example:push:minute:${run}`, interval: 60_000, maxInInterval: 3, countBlocked: false });
const spacing = new RollingRateLimiter({ ...store, namespace: `example:push:3s:${run}`, interval: 3_000, maxInInterval: 1, countBlocked: false });
const push = new RateLimiterStack([perMinute, spacing]);

/** A pretend delivery service that fails for one notification. */
async function deliver(notificationId: string): Promise<void> {
  if (notificationId === 'n3') throw new Error('device token expired');
}

/** One job of the push queue: may run more than once for the same notification. */
async function sendJob(teacherId: string, notificationId: string): Promise<string> {
  const info = await push.limitWithInfo(teacherId, { actionId: notificationId });
  if (info.alreadyAdmitted) return `${notificationId}: already sent by an earlier run of this job, not counted again`;
  if (info.blocked) {
    const by = info.tiers.filter((tier) => tier.blocked).map((tier) => tier.namespace.split(':')[2]);
    return `${notificationId}: blocked by the ${by.join(' and ')} tier; retry in ${info.millisecondsUntilAllowed} ms`;
  }
  try {
    await deliver(notificationId);
    return `${notificationId}: sent (${info.tiers[0]?.actionsRemaining ?? 0} more this minute)`;
  } catch (error) {
    await push.undo(teacherId, notificationId); // not delivered: give the slot back
    return `${notificationId}: delivery failed (${(error as Error).message}), slot refunded`;
  }
}

try {
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  console.log(await sendJob('teacher-7', 'n1'));
  console.log(await sendJob('teacher-7', 'n1')); // the queue retried the job
  console.log(await sendJob('teacher-7', 'n2')); // too soon after n1
  await sleep(3_000);
  console.log(await sendJob('teacher-7', 'n3'));
  await sleep(3_000);
  console.log(await sendJob('teacher-7', 'n2'));
} finally {
  await push.clear('teacher-7');
  await redis?.quit();
}
