// Demo: rate-limiting push notifications, at most 10 per minute per user and
// at least 3 s apart. Four users behave differently for three simulated
// minutes; the limiter decides each attempt on an injected clock, so the run
// is instant and deterministic. In memory by default; with REDIS_URL set, the
// same scenario runs on Redis (ioredis). Run it with `npm run demo`.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RollingRateLimiter, type RollingRateLimiterOptions } from '../src/index.js';
import { DEFAULT_SEED, generateScenario } from './support/scenario.js';
import { paint, renderBlockedStreaks, renderLegend, renderSummary, renderTimeline, type Attempt } from './support/timeline.js';

const RULES = { interval: 60_000, maxInInterval: 10, minDifference: 3_000 } as const;
/** The simulated start: 2026-01-01T00:00:00Z, in microseconds since the epoch. */
const START_US = Date.UTC(2026, 0, 1) * 1000;
const BUCKET_MS = 2_000;
const LABEL_EVERY_MS = 30_000;

const color = process.stdout.isTTY === true && (process.env.NO_COLOR ?? '') === '';
const redisUrl = process.env.REDIS_URL;

/** Where the REDIS_URL points, without any user name or password it holds. */
function describeRedis(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'REDIS_URL';
  }
}

async function main(): Promise<void> {
  const scenario = generateScenario(DEFAULT_SEED);
  let nowUs = START_US;
  const client = redisUrl === undefined || redisUrl === '' ? undefined : new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  // A connection error also reaches the call that fails (a refused command or a
  // TimeoutError); this keeps ioredis from logging every retry besides.
  client?.on('error', () => undefined);
  const namespace = `demo:push:${randomBytes(4).toString('hex')}`;
  const options: RollingRateLimiterOptions = {
    ...RULES,
    clock: () => nowUs,
    ...(client === undefined ? {} : { client, namespace }),
  };
  const store = client === undefined ? 'in-memory (set REDIS_URL to use Redis)' : `Redis at ${describeRedis(redisUrl ?? '')}, namespace ${namespace}`;

  const attempts: Attempt[] = [];
  let limiter: RollingRateLimiter | undefined;
  try {
    limiter = new RollingRateLimiter(options);
    for (const event of scenario.events) {
      nowUs = START_US + event.atMs * 1000;
      const info = await limiter.limitWithInfo(event.user);
      attempts.push({ user: event.user, atMs: event.atMs, ...info });
    }
  } finally {
    if (client !== undefined) {
      // Leave nothing behind in Redis (even after a failure), then close the connection so the process exits.
      const used = limiter;
      if (used !== undefined) await Promise.allSettled(scenario.users.map((user) => used.clear(user.id)));
      await client.quit().catch(() => client.disconnect());
    }
  }

  const lines = [
    paint(
      `Push notifications: at most ${RULES.maxInInterval} per ${RULES.interval / 1000} s per user, ` +
        `at least ${RULES.minDifference / 1000} s apart. Store: ${store}`,
      '1',
      color,
    ),
    `  ${scenario.events.length} attempts by ${scenario.users.length} users over ` +
      `${scenario.durationMs / 60_000} simulated minutes (seed ${scenario.seed}); blocked attempts count too.`,
    '',
    ...renderTimeline(attempts, {
      rows: scenario.users.map((user) => ({ id: user.id, label: user.id })),
      durationMs: scenario.durationMs,
      bucketMs: BUCKET_MS,
      labelEveryMs: LABEL_EVERY_MS,
      color,
    }),
    '',
    ...renderLegend(BUCKET_MS, color),
    '',
    paint('Blocked streaks: how many each rule blocked, when the last was told to retry, the next send', '1', color),
    ...renderBlockedStreaks(
      attempts,
      scenario.users.map((user) => user.id),
      color,
    ),
    '',
    ...renderSummary(attempts, scenario.users, color),
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((error: unknown) => {
  console.error(`The demo failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
