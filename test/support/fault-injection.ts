// Helpers for the fault-injection tests (test/redis/failures*.test.ts): Redis
// clients that record their error events instead of crashing or logging,
// a stopwatch for "how long until the call settled", bounded retry loops,
// and the one-line timing report those tests print.

import { Redis, type RedisOptions } from 'ioredis';
import { createClient } from 'redis5';

/** A node-redis 5 client as `createClient` returns it. */
export type NodeRedis5Client = ReturnType<typeof createClient>;

/** The options `createClient` from redis5 takes. */
export type NodeRedis5Options = NonNullable<Parameters<typeof createClient>[0]>;

/** A connected test client, whichever library it comes from. */
export interface TestConnection {
  /** How the timing lines name it, e.g. `ioredis` or `node-redis 5`. */
  readonly name: string;
  readonly client: Redis | NodeRedis5Client;
  /** Every `error` event the client emitted (an outage emits many). */
  readonly errors: Error[];
  /** The client's connection state and its last error events, for failure messages. */
  describe(): string;
  /** Sends PING; resolves true on PONG, false on any failure or after `timeoutMs`. */
  ping(timeoutMs: number): Promise<boolean>;
  /** Closes the client without waiting for the server (which may be down). */
  close(): Promise<void>;
}

function describeErrors(errors: readonly Error[]): string {
  const last = errors.slice(-3).map((error) => `${error.name}: ${error.message}`);
  return `${errors.length} error events${last.length > 0 ? `, the last: ${last.join(' | ')}` : ''}`;
}

/** Resolves with the promise's value, or `fallback` once `ms` have passed; never rejects. */
async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([promise.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** An ioredis client on `url`, ready (it has answered PING). */
export async function connectIORedis(url: string, options: RedisOptions = {}, name = 'ioredis'): Promise<TestConnection> {
  const client = new Redis(url, options);
  const errors: Error[] = [];
  client.on('error', (error: Error) => errors.push(error));
  const connection: TestConnection = {
    name,
    client,
    errors,
    describe: () => `status ${client.status}; ${describeErrors(errors)}`,
    ping: (timeoutMs) =>
      within(
        client.ping().then((reply) => reply === 'PONG'),
        timeoutMs,
        false,
      ),
    close: async () => client.disconnect(),
  };
  // Wait for 'ready' rather than queue a PING: with `enableOfflineQueue: false` a command before it fails at once.
  const ready = client.status === 'ready' || (await within(new Promise<boolean>((resolve) => client.once('ready', () => resolve(true))), 5_000, false));
  if (!ready || !(await connection.ping(5_000))) {
    client.disconnect();
    throw new Error(`${name} did not connect to ${url} within 5 s`);
  }
  return connection;
}

/** A node-redis 5 client on `url`, connected. */
export async function connectNodeRedis5(url: string, options: NodeRedis5Options = {}, name = 'node-redis 5'): Promise<TestConnection> {
  const client = createClient({ ...options, url });
  const errors: Error[] = [];
  client.on('error', (error: Error) => errors.push(error));
  await within(client.connect(), 5_000, undefined);
  if (!client.isReady) {
    client.destroy();
    throw new Error(`${name} did not connect to ${url} within 5 s`);
  }
  return {
    name,
    client,
    errors,
    describe: () => `isOpen ${client.isOpen}, isReady ${client.isReady}; ${describeErrors(errors)}`,
    ping: (timeoutMs) =>
      within(
        client.ping().then((reply) => reply === 'PONG'),
        timeoutMs,
        false,
      ),
    close: async () => {
      if (client.isOpen) client.destroy();
    },
  };
}

/** How a call settled, and after how long. */
export type Settled<T> = { readonly ms: number } & ({ readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown });

/** Runs `call` and measures the time until it settles, with `performance.now()`. */
export async function settle<T>(call: () => Promise<T>): Promise<Settled<T>> {
  const startedAt = performance.now();
  try {
    const value = await call();
    return { ms: performance.now() - startedAt, ok: true, value };
  } catch (error) {
    return { ms: performance.now() - startedAt, ok: false, error };
  }
}

/** How a call settled, and how late a timer set beside it fired. */
export type TimedSettled<T> = Settled<T> & {
  /**
   * How much later than its `timerMs` a timer set when the call started fired:
   * the event loop's own delay on a loaded machine, by which the limiter's
   * timeout timer, set at the same moment, is late too.
   */
  readonly timerLateMs: number;
};

/**
 * {@link settle}, with a timer of `timerMs` (the limiter's `timeout`) set
 * beside the call, so that a bound on the call can allow for a busy machine
 * firing every timer late, which is no fault of the limiter. Resolves once
 * both the call and the timer are done.
 */
export async function settleBesideTimer<T>(call: () => Promise<T>, timerMs: number): Promise<TimedSettled<T>> {
  const startedAt = performance.now();
  const timer = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - startedAt - timerMs), timerMs));
  const settled = await settle(call);
  return { ...settled, timerLateMs: Math.max(0, await timer) };
}

/** The value of a call expected to resolve; fails with the rejection otherwise. */
export function valueOf<T>(settled: Settled<T>, what: string): T {
  if (!settled.ok) throw new Error(`${what} rejected: ${String(settled.error)}`, { cause: settled.error });
  return settled.value;
}

/** The error of a call expected to reject; fails with the value otherwise. */
export function errorOf(settled: Settled<unknown>, what: string): unknown {
  if (settled.ok) throw new Error(`${what} resolved with ${JSON.stringify(settled.value)} instead of rejecting`);
  return settled.error;
}

/** What a call settled with, for the timing line: the rejection's name, or the name of the store failure a policy stood in for. */
function outcomeOf(call: Settled<unknown>): string {
  if (!call.ok) return `rejected ${call.error instanceof Error ? call.error.name : String(call.error)}`;
  if (typeof call.value === 'boolean') return call.value ? 'blocked' : 'allowed';
  const info = call.value as { blocked?: unknown; storeFailure?: { error?: unknown } } | null;
  const decision = info?.blocked === true ? 'blocked' : 'allowed';
  const failure = info?.storeFailure?.error;
  return failure instanceof Error ? `${decision} on ${failure.name}` : decision;
}

/**
 * Prints one timing line, indented like mocha's output:
 * `settle (ioredis, stopped, allow): 201 ms (limit 201 allowed, limitWithInfo 200 allowed on TimeoutError)`;
 * the first number is the slowest call.
 */
export function reportSettle(labels: readonly string[], settled: readonly Settled<unknown>[], names: readonly string[]): void {
  const slowest = Math.max(...settled.map((call) => call.ms));
  const each = settled.map((call, i) => `${names[i] ?? `call ${i + 1}`} ${Math.round(call.ms)} ${outcomeOf(call)}`).join(', ');
  console.log(`      settle (${labels.join(', ')}): ${Math.round(slowest)} ms (${each})`);
}

/**
 * Calls `attempt` until it resolves with something other than `undefined`,
 * at most until `timeoutMs` has passed (and at most `maxAttempts` times),
 * pausing `pauseMs` between attempts. Throws, with the last failure, when it
 * never does.
 */
export async function retryUntil<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  { timeoutMs = 5_000, pauseMs = 50, maxAttempts = 200 }: { timeoutMs?: number; pauseMs?: number; maxAttempts?: number } = {},
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let lastFailure: unknown;
  for (let i = 0; i < maxAttempts && performance.now() < deadline; i += 1) {
    try {
      const result = await attempt();
      if (result !== undefined) return result;
    } catch (error) {
      lastFailure = error;
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  throw new Error(`${what}: not done within ${timeoutMs} ms (last failure: ${String(lastFailure)})`, { cause: lastFailure });
}
