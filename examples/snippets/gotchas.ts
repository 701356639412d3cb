import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';

const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const logger = { warn: (fields: object, message: string) => console.warn(message, fields) };
const id = 'user-1';
const userId = 42;

{
  const rules = { client, namespace: 'worker', interval: 60_000, maxInInterval: 10 } as const;
  const limiter = new RollingRateLimiter(rules);
  // docs:begin count
  // Bad: a worker retrying every 100 ms against 10 per minute is blocked for as long as it retries.
  while (await limiter.limit(id)) await sleep(100);
  // Good: wait what the limiter says, and let only admitted work count.
  const patient = new RollingRateLimiter({ ...rules, namespace: 'worker:admitted', countBlocked: false });
  await patient.waitUntilAllowed(id);
  // docs:end
}

{
  // docs:begin namespaces
  // Bad: two rules on one namespace would count each other's actions (this process refuses the second with a TypeError).
  const perMinute = new RollingRateLimiter({ client, namespace: 'push', interval: 60_000, maxInInterval: 10 });
  // const perDay = new RollingRateLimiter({ client, namespace: 'push', interval: 86_400_000, maxInInterval: 100 });
  // Good: one namespace per limiter, and a stack to apply both in one round trip.
  const push = new RateLimiterStack([
    new RollingRateLimiter({ client, namespace: 'push:minute', interval: 60_000, maxInInterval: 10 }),
    new RollingRateLimiter({ client, namespace: 'push:day', interval: 86_400_000, maxInInterval: 100 }),
  ]);
  // docs:end
  console.log(await perMinute.limit(id), await push.limit(id));
}

{
  // docs:begin clocks
  // Bad: servers without NTP sharing one Redis with clock: 'local' over-admit (a 2 s skew admits twice the limit in our tests).
  // Good: keep clocks in sync, or let Redis be the clock.
  const limiter = new RollingRateLimiter({ client, namespace: 'api', interval: 1_000, maxInInterval: 5, clock: 'redis' });
  // docs:end
  console.log(await limiter.limit(id));
}

{
  const limiter = new RollingRateLimiter({ client, namespace: 'ids', interval: 1_000, maxInInterval: 5 });
  // docs:begin braces
  // Bad: '{42}' is a different id from 42, with its own limits.
  await limiter.limit(`{${userId}}`);
  // Good: pass the id as it is; the key is built as `<namespace>:{<id>}` for you.
  await limiter.limit(userId);
  // docs:end
}

{
  const rules = { client, namespace: 'open', interval: 1_000, maxInInterval: 5 } as const;
  // docs:begin fail-open
  // Bad: nobody notices that the limits are off.
  const limiter = new RollingRateLimiter({ ...rules, onStoreError: 'allow' });
  // Good: log and count every decision the policy made.
  const info = await limiter.limitWithInfo(id);
  if (info.storeFailure) logger.warn({ err: info.storeFailure.error }, `rate limit decided by the ${info.storeFailure.policy} policy`);
  // docs:end
}

{
  // docs:begin units
  // Bad: a number is milliseconds: a 60 ms window, 3 ms apart (the limiter warns once: did you mean '60s'?).
  // const limiter = new RollingRateLimiter({ client, namespace: 'units', interval: 60, maxInInterval: 5, minDifference: 3 });
  // Good: write the unit.
  const limiter = new RollingRateLimiter({ client, namespace: 'units', interval: '60s', maxInInterval: 5, minDifference: '3s' });
  // docs:end
  console.log(await limiter.limit(id));
}

{
  // docs:begin cost
  const tokens = new RollingRateLimiter({ client, namespace: 'tokens', interval: '1m', maxCostInInterval: 30_000, countBlocked: false });
  // Bad: an attempt on a budget without its cost is a TypeError (it would otherwise weigh 1 token, unnoticed).
  await tokens.limit(id).catch((error: unknown) => console.log(String(error).split(':')[0]));
  // Good: say what each attempt weighs, or declare what an attempt without a cost weighs.
  await tokens.limit(id, { cost: 1_200 });
  const calls = new RollingRateLimiter({ client, namespace: 'calls', interval: '1m', maxCostInInterval: 30_000, defaultCost: 1_000 });
  await calls.limit(id); // weighs 1,000
  // docs:end
}

await client.quit();
