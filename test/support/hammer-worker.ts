// A child process for the multi-process concurrency tests
// (test/redis/multi-process.test.ts). It shows what no single process can:
// that the limiter stays exact when several OS processes, each with its own
// Redis connection and its own clock, hammer one id at the same moment.
//
// Started with `fork(thisFile, [url], { execArgv: ['--import', 'tsx'] })`. It
// connects one ioredis client to the URL it is given (argv[2], or a round's
// `url`), says `{ type: 'ready' }`, then answers IPC messages:
//   - a {@link HammerRound}: build the round's limiter (one tier) or stack
//     (several tiers) on its client, fire `attempts` calls of `limit(id)` all
//     at once, and reply `{ round, admitted }` (or `{ round, error }`);
//   - `{ type: 'exit' }`: quit the client and exit.
// It also exits when the parent disconnects, so it never outlives its test.
// Nothing here loops: every round is a fixed number of calls.

import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, type MicrosecondClock } from '../../src/index.js';

/** One limiter of a round; several make a {@link RateLimiterStack}. */
export interface HammerTier {
  readonly namespace: string;
  readonly interval: number;
  readonly maxInInterval: number;
  readonly minDifference: number;
  readonly countBlocked: boolean;
}

/** One round of attempts, sent by the parent to a worker. */
export interface HammerRound {
  readonly type: 'round';
  /** Echoed in the reply, so the parent can match it. */
  readonly round: number;
  /** The Redis to use; defaults to the URL the worker was started with. */
  readonly url?: string;
  /** The tiers, at least one: one makes a RollingRateLimiter, several a RateLimiterStack. */
  readonly limiterConfig: readonly HammerTier[];
  /** `'redis'`: Redis TIME; `'local'`: this process's clock, shifted by `clockOffsetMs`. */
  readonly clock: 'local' | 'redis';
  /** How far this worker's local clock runs ahead (positive) or behind (negative), in ms. */
  readonly clockOffsetMs: number;
  /** How many `limit(id)` calls to fire at once. */
  readonly attempts: number;
  /** The id every attempt is for. */
  readonly id: string;
  /** Whether the limiter (or stack) batches its decisions (`batch: true`). */
  readonly batch?: boolean;
}

/** Asks the worker to quit its client and exit. */
export interface HammerExit {
  readonly type: 'exit';
}

/** Anything the parent sends. */
export type HammerRequest = HammerRound | HammerExit;

/** Anything the worker sends back. */
export type HammerReply =
  | { readonly type: 'ready' }
  | { readonly type: 'result'; readonly round: number; readonly admitted: number }
  | { readonly type: 'error'; readonly round: number; readonly error: string };

/** Longest wait for Redis per call: generous, since 8 workers may share 2 cores. */
const STORE_TIMEOUT_MS = 15_000;
/** The most attempts one round may ask for, so a bad message cannot run away. */
const MAX_ATTEMPTS = 100_000;

let client: Redis | undefined;
let clientUrl: string | undefined;

/** Returns the client for `url`, connecting (and dropping the old one) when the URL changes. */
async function clientFor(url: string | undefined): Promise<Redis> {
  const wanted = url ?? clientUrl;
  if (wanted === undefined) throw new Error('No Redis URL: pass it as argv[2] or in the round');
  if (client !== undefined && clientUrl === wanted) return client;
  if (client !== undefined) await client.quit();
  client = new Redis(wanted, { maxRetriesPerRequest: 2 });
  clientUrl = wanted;
  return client;
}

/** `Date.now()` in microseconds shifted by `offsetMs`, strictly increasing across calls. */
function skewedClock(offsetMs: number): MicrosecondClock {
  let last = 0;
  return () => {
    const now = Math.max((Date.now() + offsetMs) * 1000, last + 1);
    last = now;
    return now;
  };
}

/** Builds the round's limiter: one RollingRateLimiter, or a RateLimiterStack for several tiers. */
function buildLimiter(redis: Redis, round: HammerRound): { limit(id: string): Promise<boolean> } {
  // One clock function shared by all tiers: a stack requires the same `clock` on each.
  const clock = round.clock === 'redis' ? 'redis' : skewedClock(round.clockOffsetMs);
  const limiters = round.limiterConfig.map(
    (tier) => new RollingRateLimiter({ ...tier, client: redis, clock, timeout: STORE_TIMEOUT_MS, batch: round.batch === true }),
  );
  const [only] = limiters;
  if (only === undefined) throw new TypeError('A round needs at least one tier');
  return limiters.length === 1 ? only : new RateLimiterStack(limiters, { batch: round.batch === true });
}

/** Runs one round and returns how many attempts were admitted (not blocked). */
async function runRound(round: HammerRound): Promise<number> {
  if (!Number.isInteger(round.attempts) || round.attempts < 0 || round.attempts > MAX_ATTEMPTS) {
    throw new RangeError(`attempts must be an integer from 0 to ${MAX_ATTEMPTS}, got ${round.attempts}`);
  }
  const limiter = buildLimiter(await clientFor(round.url), round);
  const blocked = await Promise.all(Array.from({ length: round.attempts }, () => limiter.limit(round.id)));
  return blocked.filter((isBlocked) => !isBlocked).length;
}

function send(reply: HammerReply): void {
  process.send?.(reply);
}

/** Quits the client (if any) and exits; safe to call more than once. */
async function shutDown(): Promise<void> {
  const redis = client;
  client = undefined;
  try {
    await redis?.quit();
  } finally {
    process.exit(0);
  }
}

async function handle(message: HammerRequest): Promise<void> {
  if (message.type === 'exit') return shutDown();
  try {
    send({ type: 'result', round: message.round, admitted: await runRound(message) });
  } catch (error) {
    send({ type: 'error', round: message.round, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
}

/** Connects to the URL from argv (if any), then listens to the parent. */
async function main(): Promise<void> {
  if (process.send === undefined) throw new Error('hammer-worker must be started with child_process.fork (it needs an IPC channel)');
  process.on('message', (message: HammerRequest) => void handle(message));
  process.on('disconnect', () => void shutDown());
  const url = process.argv[2];
  if (url !== undefined) await (await clientFor(url)).ping();
  send({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
