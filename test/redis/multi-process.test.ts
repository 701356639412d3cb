// Exactness across OS processes on real Redis. The other Redis tests hammer
// one id from many connections of one Node process; here 8 forked processes
// (test/support/hammer-worker.ts), each with its own client, event loop and
// clock, fire hundreds of attempts at one id at the same moment, round after
// round. It shows that:
//   - the limit is exact under true parallelism, with and without
//     `countBlocked`: every round admits exactly maxInInterval;
//   - a stack of two tiers admits exactly the smaller tier's maximum, and a
//     tier that does not count blocked attempts records only admitted ones;
//   - processes whose local clocks disagree over-admit with `clock: 'local'`
//     (the README's warning, made concrete), and do not with `clock: 'redis'`.
// Each scenario prints a one-line summary of what it measured.

import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { KeyBuilder } from '../../src/core/identity.js';
import type { HammerReply, HammerRequest, HammerRound, HammerTier } from '../support/hammer-worker.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { RECORDS_FROM } from '../support/redis-keys.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';

const WORKER_PATH = fileURLToPath(new URL('../support/hammer-worker.ts', import.meta.url));
const WORKER_COUNT = 8;
const ATTEMPTS_PER_WORKER = 300;
const ROUNDS = 10;
const ID = 'shared';
const LONG_INTERVAL_MS = 600_000;
/** Longest wait for one worker's reply to one round. */
const REPLY_TIMEOUT_MS = 30_000;
/** Grace given to a worker to exit by itself before it is SIGKILLed. */
const EXIT_GRACE_MS = 3_000;

/** A forked hammer worker and the replies it still owes. */
interface Worker {
  readonly child: ChildProcess;
  /** Resolves once the worker is connected to Redis and listening. */
  readonly ready: Promise<void>;
  /** Resolves once the process has exited. */
  readonly exited: Promise<void>;
  readonly pending: Map<number, { resolve(admitted: number): void; reject(error: Error): void }>;
}

/** Every worker forked by this file and not yet exited; SIGKILLed by PID if the test process exits first. */
const liveWorkers = new Set<ChildProcess>();
const killLiveWorkers = (): void => {
  for (const child of liveWorkers) child.kill('SIGKILL'); // signals that child's own PID, nothing else
};

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Forks one worker connected to `url`, and routes its replies to the rounds waiting for them. */
function forkWorker(url: string): Worker {
  const child = fork(WORKER_PATH, [url], { execArgv: ['--import', 'tsx'] });
  liveWorkers.add(child);
  const pending: Worker['pending'] = new Map();
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      liveWorkers.delete(child);
      for (const waiter of pending.values()) waiter.reject(new Error(`worker ${child.pid} exited (code ${code}, signal ${signal})`));
      pending.clear();
      resolve();
    });
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (reply: HammerReply) => {
      if (reply.type === 'ready') return resolve();
      const waiter = pending.get(reply.round);
      pending.delete(reply.round);
      if (reply.type === 'result') waiter?.resolve(reply.admitted);
      else waiter?.reject(new Error(`worker ${child.pid}, round ${reply.round}: ${reply.error}`));
    });
    void exited.then(() => reject(new Error(`worker ${child.pid} exited before it was ready`)));
  });
  return { child, ready, exited, pending };
}

/** Sends one round to one worker and resolves with how many attempts it got admitted. */
function runOn(worker: Worker, round: HammerRound): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      worker.pending.delete(round.round);
      reject(new Error(`worker ${worker.child.pid} did not answer round ${round.round} within ${REPLY_TIMEOUT_MS} ms`));
    }, REPLY_TIMEOUT_MS);
    const settle =
      <T>(fn: (value: T) => void) =>
      (value: T): void => {
        clearTimeout(timer);
        fn(value);
      };
    worker.pending.set(round.round, { resolve: settle(resolve), reject: settle(reject) });
    const request: HammerRequest = round;
    worker.child.send(request);
  });
}

/** Asks a worker to exit, and SIGKILLs it (by its PID) if it has not within the grace period. */
async function stopWorker(worker: Worker): Promise<void> {
  if (hasExited(worker.child)) return;
  if (worker.child.connected) worker.child.send({ type: 'exit' } satisfies HammerRequest);
  const exitedInTime = await Promise.race([worker.exited.then(() => true), delay(EXIT_GRACE_MS).then(() => false)]);
  if (!exitedInTime) worker.child.kill('SIGKILL');
  await worker.exited;
}

let nextRound = 1;

/** What a round asks of each worker, before its round number and clock offset are filled in. */
interface RoundPlan {
  readonly limiterConfig: readonly HammerTier[];
  readonly clock: 'local' | 'redis';
  readonly attempts: number;
  readonly batch?: boolean;
}

/** Sends the same round to every worker at once (each with its clock offset) and returns the total admitted. */
async function hammer(workers: readonly Worker[], plan: RoundPlan, clockOffsetMs = 0): Promise<number> {
  const round: HammerRound = { type: 'round', round: nextRound++, id: ID, clockOffsetMs, ...plan };
  const admitted = await Promise.all(workers.map((worker) => runOn(worker, round)));
  return admitted.reduce((sum, n) => sum + n, 0);
}

/** A tier with no gap rule. */
function tier(namespace: string, interval: number, maxInInterval: number, countBlocked: boolean): HammerTier {
  return { namespace, interval, maxInInterval, minDifference: 0, countBlocked };
}

/** "25 in every round", or the list when rounds differ. */
function describeAdmitted(admitted: readonly number[]): string {
  const [first] = admitted;
  return admitted.every((n) => n === first) ? `${first} in every round` : `[${admitted.join(', ')}] per round`;
}

/** Prints a summary line, indented like the spec reporter's output. */
function report(line: string): void {
  console.log(`      ${line}`);
}

const keyOf = (namespace: string, id: string): string => new KeyBuilder(namespace).keyFor(id);

describe('many processes hammering one id on real Redis', function () {
  const namespaces = uniqueNamespaces('multi-process');
  let redis: UsedRedis | undefined;
  let client: Redis | undefined;
  let workers: Worker[] = [];

  before(async function () {
    this.timeout(90_000);
    process.on('exit', killLiveWorkers);
    redis = await useRedis();
    client = new Redis(redis.url);
    const { url } = redis;
    workers = Array.from({ length: WORKER_COUNT }, () => forkWorker(url));
    await Promise.all(workers.map((worker) => worker.ready));
  });

  after(async function () {
    this.timeout(30_000);
    try {
      await Promise.all(workers.map(stopWorker));
    } finally {
      killLiveWorkers();
      process.off('exit', killLiveWorkers);
      await client?.quit();
      await redis?.stop();
    }
  });

  /** Deletes the keys a round wrote, so a REDIS_URL server is left as it was. */
  async function forget(...roundNamespaces: string[]): Promise<void> {
    await client?.del(...roundNamespaces.map((namespace) => keyOf(namespace, ID)));
  }

  /** Runs ROUNDS rounds of one limiter, each on a fresh namespace, and returns the admitted total of each. */
  async function singleTierRounds(maxInInterval: number, countBlocked: boolean, batch: boolean): Promise<number[]> {
    const admitted: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const namespace = namespaces.next(`single-${String(countBlocked)}`);
      const limiterConfig = [tier(namespace, LONG_INTERVAL_MS, maxInInterval, countBlocked)];
      admitted.push(await hammer(workers, { limiterConfig, clock: 'local', attempts: ATTEMPTS_PER_WORKER, batch }));
      await forget(namespace);
    }
    return admitted;
  }

  for (const [countBlocked, batch] of [
    [true, false],
    [false, false],
    [true, true],
    [false, true],
  ] as const) {
    const mode = `countBlocked: ${String(countBlocked)}${batch ? ', batch: true' : ''}`;
    it(`admits exactly maxInInterval in every round with ${mode}`, async function () {
      this.timeout(60_000);
      const maxInInterval = 25;
      const admitted = await singleTierRounds(maxInInterval, countBlocked, batch);
      report(
        `${mode}: ${ROUNDS} rounds × ${WORKER_COUNT} workers × ${ATTEMPTS_PER_WORKER} attempts, ` +
          `maxInInterval ${maxInInterval}, admitted ${describeAdmitted(admitted)}`,
      );
      expect(admitted).to.deep.equal(Array<number>(ROUNDS).fill(maxInInterval));
    });
  }

  /** One stack round's outcome: the total admitted and what each tier's key holds afterwards. */
  interface StackRound {
    admitted: number;
    zcardA: number;
    zcardB: number;
  }

  /** Runs ROUNDS rounds of a two-tier stack (A: 20, never counting blocked; B: 50) on fresh namespaces. */
  async function stackRounds(tierBCountsBlocked: boolean, batch = false): Promise<StackRound[]> {
    const results: StackRound[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      const a = namespaces.next('tier-a');
      const b = namespaces.next('tier-b');
      const limiterConfig = [tier(a, 60_000, 20, false), tier(b, LONG_INTERVAL_MS, 50, tierBCountsBlocked)];
      const admitted = await hammer(workers, { limiterConfig, clock: 'local', attempts: ATTEMPTS_PER_WORKER, batch });
      const zcardA = (await client?.zcount(keyOf(a, ID), RECORDS_FROM, '+inf')) ?? -1;
      const zcardB = (await client?.zcount(keyOf(b, ID), RECORDS_FROM, '+inf')) ?? -1;
      results.push({ admitted, zcardA, zcardB });
      await forget(a, b);
    }
    return results;
  }

  it('admits exactly the smaller tier’s maximum through a 2-tier stack, recording only admitted attempts in tier B', async function () {
    this.timeout(60_000);
    const results = await stackRounds(false);
    report(
      `stack A 20 + B 50 (neither counts blocked): ${ROUNDS} rounds × ${WORKER_COUNT} workers × ${ATTEMPTS_PER_WORKER} attempts, ` +
        `admitted ${describeAdmitted(results.map((r) => r.admitted))}, tier B holds ${describeAdmitted(results.map((r) => r.zcardB))}`,
    );
    expect(results).to.deep.equal(Array<StackRound>(ROUNDS).fill({ admitted: 20, zcardA: 20, zcardB: 20 }));
  });

  it('admits exactly 20 through the same stack with batch: true', async function () {
    this.timeout(60_000);
    const results = await stackRounds(false, true);
    report(
      `stack A 20 + B 50, batch: true: admitted ${describeAdmitted(results.map((r) => r.admitted))}, tier B holds ${describeAdmitted(results.map((r) => r.zcardB))}`,
    );
    expect(results).to.deep.equal(Array<StackRound>(ROUNDS).fill({ admitted: 20, zcardA: 20, zcardB: 20 }));
  });

  it('still admits exactly 20 when tier B counts blocked attempts (and B is full)', async function () {
    this.timeout(60_000);
    const results = await stackRounds(true);
    report(
      `stack A 20 + B 50 (B counts blocked): ${ROUNDS} rounds × ${WORKER_COUNT} workers × ${ATTEMPTS_PER_WORKER} attempts, ` +
        `admitted ${describeAdmitted(results.map((r) => r.admitted))}, tier B holds ${describeAdmitted(results.map((r) => r.zcardB))}`,
    );
    // Every attempt is recorded in B, which keeps only its newest maxInInterval (50) members.
    expect(results).to.deep.equal(Array<StackRound>(ROUNDS).fill({ admitted: 20, zcardA: 20, zcardB: 50 }));
  });

  describe('with clocks 2 s apart in either direction', function () {
    const SKEW_MS = 2_000;
    const SKEW_INTERVAL_MS = 5_000;
    const SKEW_MAX = 10;
    /** Real time between the behind group's round and the ahead group's: well inside the 5 s window. */
    const PAUSE_MS = 1_200;

    /**
     * The "behind" half of the workers (clock −2 s) fills the window, then,
     * 1.2 s of real time later, the "ahead" half (clock +2 s) attempts. The
     * ahead clocks read ≥ 3.2 s past the behind entries' real time, so they
     * see those entries (stamped 2 s early) as more than 5 s old.
     */
    async function skewedRound(clock: 'local' | 'redis'): Promise<{ behind: number; ahead: number }> {
      const namespace = namespaces.next(`skew-${clock}`);
      const plan: RoundPlan = { limiterConfig: [tier(namespace, SKEW_INTERVAL_MS, SKEW_MAX, false)], clock, attempts: ATTEMPTS_PER_WORKER };
      const half = WORKER_COUNT / 2;
      const behind = await hammer(workers.slice(0, half), plan, -SKEW_MS);
      await delay(PAUSE_MS);
      const ahead = await hammer(workers.slice(half), plan, SKEW_MS);
      await forget(namespace);
      return { behind, ahead };
    }

    /** The summary line of a skewed round. */
    function skewSummary(clock: 'local' | 'redis', { behind, ahead }: { behind: number; ahead: number }): string {
      const half = WORKER_COUNT / 2;
      return (
        `skewed clocks ±${SKEW_MS / 1000} s, clock '${clock}': ${half} workers at −${SKEW_MS / 1000} s then ${half} at ` +
        `+${SKEW_MS / 1000} s ${PAUSE_MS / 1000} s later, × ${ATTEMPTS_PER_WORKER} attempts, interval ${SKEW_INTERVAL_MS / 1000} s, ` +
        `maxInInterval ${SKEW_MAX}: admitted ${behind} + ${ahead} = ${behind + ahead}`
      );
    }

    it("over-admits with clock: 'local' (the ahead processes see the window as already empty)", async function () {
      this.timeout(30_000);
      const result = await skewedRound('local');
      report(skewSummary('local', result));
      expect(result.behind).to.equal(SKEW_MAX);
      expect(result.behind + result.ahead).to.be.greaterThan(SKEW_MAX);
    });

    it("admits exactly maxInInterval with clock: 'redis', whatever the processes' clocks say", async function () {
      this.timeout(30_000);
      const result = await skewedRound('redis');
      report(skewSummary('redis', result));
      expect(result.behind + result.ahead).to.equal(SKEW_MAX);
    });
  });
});
