// A program that lets every store call time out and then fail late, the way a
// Redis server that froze and then died (or whose connection was closed) does,
// on every path that calls a store: test/resilience/late-store-failure.test.ts and
// test/redis/failures/late-store-failure.test.ts run it as
// `node --unhandled-rejections=strict --import tsx late-failure-child.ts <mode> [url]`.
// A late failure that is not handled crashes the process (exit code 1, the
// rejection on stderr); a handled one goes nowhere. It prints one JSON line
// with what each call settled as and how often each fallback limiter was asked.
//
// Modes:
//   stub        a duck-typed ioredis client whose every command rejects LATE_MS after it was sent, past
//               the limiters' TIMEOUT_MS; every policy on every path
//   redis <url> a real ioredis client on <url>: prints `ready`, then waits for `go` on stdin (the test has
//               frozen the server with SIGSTOP), makes one attempt per policy, each of which times out, prints
//               `timed-out`, then waits for `killed` (the test has SIGKILLed the server) and for the client
//               to reject the commands it had queued

import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { rateLimit } from '../../src/http/express/express-middleware.js';
import {
  RateLimiterStack,
  RollingRateLimiter,
  type FallbackLimiter,
  type RateLimitInfo,
  type RollingRateLimiterOptions,
  type StoreErrorPolicy,
} from '../../src/index.js';

const TIMEOUT_MS = 20;
const LATE_MS = 60;
const POLICIES = ['throw', 'allow', 'block', 'fallback'] as const;
type PolicyName = (typeof POLICIES)[number];

const ALLOWED: RateLimitInfo = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false, actionsRemaining: 1, millisecondsUntilAllowed: 0 };

/** A fallback limiter that counts how often it is asked. */
class CountingFallback implements FallbackLimiter {
  calls = 0;
  async limitWithInfo(): Promise<RateLimitInfo> {
    this.calls += 1;
    return { ...ALLOWED, tiers: [] } as RateLimitInfo;
  }
  async wouldLimitWithInfo(): Promise<RateLimitInfo> {
    this.calls += 1;
    return { ...ALLOWED, tiers: [] } as RateLimitInfo;
  }
}

/** An object that passes for an ioredis client and fails every command `lateMs` after it was sent. */
function lateFailingClient(lateMs: number): object {
  const failLate = (): Promise<never> => new Promise((_, reject) => setTimeout(() => reject(new Error('Connection is closed.')), lateMs));
  return { isCluster: false, multi: () => ({ exec: failLate }), pipeline: () => undefined, evalsha: failLate, eval: failLate };
}

/** What a call settled as: `resolved <value>` or `rejected <error name>`. */
async function outcomeOf(call: () => Promise<unknown>): Promise<string> {
  try {
    const value = await call();
    const shown = typeof value === 'object' && value !== null && 'blocked' in value ? `blocked=${String((value as RateLimitInfo).blocked)}` : String(value);
    return `resolved ${shown}`;
  } catch (error) {
    return `rejected ${error instanceof Error ? error.name : typeof error}`;
  }
}

/** The Express middleware on fake request and response objects: resolves with what it ended in. */
function throughMiddleware(limiter: RollingRateLimiter | RateLimiterStack): Promise<string> {
  return new Promise((resolve) => {
    const headers = new Map<string, unknown>();
    const res = {
      statusCode: 200,
      locals: {},
      setHeader: (name: string, value: unknown) => headers.set(name.toLowerCase(), value),
      hasHeader: (name: string) => headers.has(name.toLowerCase()),
      end: () => resolve(`status ${res.statusCode}`),
    };
    const req = { ip: '203.0.113.7', method: 'GET', url: '/', originalUrl: '/', headers: {} };
    const middleware = rateLimit({ limiter });
    middleware(req as never, res as never, (error?: unknown) => resolve(error === undefined ? 'next()' : `next(${(error as Error).name})`));
  });
}

interface Case {
  readonly name: string;
  readonly policy: PolicyName;
  readonly fallbackCalls: number;
  readonly expectedFallbackCalls: number;
  readonly outcome: string;
}

/** Every path that calls a store, under one policy, on `client`. */
async function runPaths(client: object, policy: PolicyName, namespace: string): Promise<Case[]> {
  const cases: Promise<Case>[] = [];
  const add = (name: string, decisions: number, run: (onStoreError: StoreErrorPolicy) => Promise<unknown>): void => {
    const fallback = new CountingFallback();
    const onStoreError: StoreErrorPolicy = policy === 'fallback' ? fallback : policy;
    cases.push(
      outcomeOf(() => run(onStoreError)).then((outcome) => ({
        name,
        policy,
        outcome,
        fallbackCalls: fallback.calls,
        expectedFallbackCalls: policy === 'fallback' ? decisions : 0,
      })),
    );
  };
  const rules = { client: client as NonNullable<RollingRateLimiterOptions['client']>, interval: 60_000, maxInInterval: 5, timeout: TIMEOUT_MS };
  let n = 0;
  const limiter = (onStoreError: StoreErrorPolicy, extra: Partial<RollingRateLimiterOptions> = {}): RollingRateLimiter =>
    new RollingRateLimiter({ ...rules, namespace: `${namespace}:${policy}:${(n += 1)}`, onStoreError, ...extra });
  const stack = (onStoreError: StoreErrorPolicy): RateLimiterStack =>
    new RateLimiterStack([limiter('throw'), limiter('throw', { interval: 1_000, maxInInterval: 2 })], { onStoreError: onStoreError as never });

  add('limit (MULTI)', 1, (p) => limiter(p).limit('user'));
  add('limitWithInfo (MULTI)', 1, (p) => limiter(p).limitWithInfo('user'));
  add('limit (countBlocked: false, script)', 1, (p) => limiter(p, { countBlocked: false }).limit('user'));
  add('limitWithInfo (countBlocked: false, script)', 1, (p) => limiter(p, { countBlocked: false }).limitWithInfo('user'));
  add('limit (useScript)', 1, (p) => limiter(p, { useScript: true }).limit('user'));
  add("limit (clock: 'redis')", 1, (p) => limiter(p, { clock: 'redis' }).limit('user'));
  add('limit with an actionId', 1, (p) => limiter(p).limit('user', { actionId: 'job-1' }));
  add('wouldLimit', 1, (p) => limiter(p).wouldLimit('user'));
  add('wouldLimitWithInfo', 1, (p) => limiter(p).wouldLimitWithInfo('user'));
  add("wouldLimit (clock: 'redis', script)", 1, (p) => limiter(p, { clock: 'redis' }).wouldLimit('user'));
  add('clear', 0, (p) => limiter(p).clear('user'));
  add('undo', 0, (p) => limiter(p).undo('user', 'job-1'));
  // countBlocked: true peeks first, then attempts: two decisions when the peek allows.
  add('waitUntilAllowed', policy === 'fallback' ? 2 : 1, (p) => limiter(p).waitUntilAllowed('user', { maxWaitMs: 5 }));
  add('wrap', 1, (p) => limiter(p).wrap(async () => 'called', { id: () => 'user' })());
  add('stack limit', 1, (p) => stack(p).limit('user'));
  add('stack limitWithInfo', 1, (p) => stack(p).limitWithInfo('user'));
  add('stack wouldLimit', 1, (p) => stack(p).wouldLimit('user'));
  add('stack clear', 0, (p) => stack(p).clear('user'));
  add('stack undo', 0, (p) => stack(p).undo('user', 'job-1'));
  add('middleware', 1, (p) => throughMiddleware(limiter(p)));
  add('stack middleware', 1, (p) => throughMiddleware(stack(p)));
  return Promise.all(cases);
}

async function stubMode(): Promise<object> {
  const client = lateFailingClient(LATE_MS);
  const cases = (await Promise.all(POLICIES.map((policy) => runPaths(client, policy, 'late')))).flat();
  // Every store call has now timed out; let each of them fail late.
  await delay(LATE_MS * 3);
  return { mode: 'stub', cases };
}

/** The next line on stdin. */
function lineReader(): () => Promise<string> {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  return async () => {
    const next = await lines.next();
    return next.done === true ? '' : String(next.value);
  };
}

async function redisMode(url: string): Promise<object> {
  const nextLine = lineReader();
  // A client that gives up on a command at once when the connection is lost, as many applications configure it.
  const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: (times) => (times > 3 ? null : 50) });
  const errorEvents: string[] = [];
  client.on('error', (error: Error) => errorEvents.push(error.message));
  const namespace = `late:${process.pid}`;
  const fallbacks = POLICIES.map(() => new CountingFallback());
  const limiters = POLICIES.map(
    (policy, i) =>
      new RollingRateLimiter({
        client,
        namespace: `${namespace}:${policy}`,
        interval: 60_000,
        maxInInterval: 5,
        timeout: 200,
        onStoreError: policy === 'fallback' ? (fallbacks[i] as CountingFallback) : policy,
      }),
  );
  const before = await Promise.all(limiters.map((limiter) => outcomeOf(() => limiter.limit('user'))));
  process.stdout.write('ready\n');
  if ((await nextLine()) !== 'go') throw new Error('expected `go`');
  const during = await Promise.all(limiters.map((limiter) => outcomeOf(() => limiter.limit('user'))));
  process.stdout.write('timed-out\n');
  if ((await nextLine()) !== 'killed') throw new Error('expected `killed`');
  // The client now finds the connection gone and rejects what it had queued; give it time to.
  for (let i = 0; i < 50 && client.status !== 'end'; i += 1) await delay(100);
  client.disconnect();
  await delay(200);
  process.stdin.destroy();
  return {
    mode: 'redis',
    clientStatus: client.status,
    errorEvents: errorEvents.length,
    cases: POLICIES.map((policy, i) => ({ policy, before: before[i], during: during[i], fallbackCalls: (fallbacks[i] as CountingFallback).calls })),
  };
}

const [mode = '', url = ''] = process.argv.slice(2);
const result = mode === 'stub' ? await stubMode() : mode === 'redis' ? await redisMode(url) : undefined;
if (result === undefined) throw new Error(`unknown mode ${JSON.stringify(mode)}`);
process.stdout.write(`${JSON.stringify(result)}\n`);
