// The circuit breaker against a real redis-server frozen with SIGSTOP: 200
// calls a second, each timing out after 300 ms while the circuit is closed.
// Once it opens, calls settle at once (decided by `onStoreError: 'allow'`);
// once Redis is back (SIGCONT), calls go to it again within `cooldownMs` + 1 s.
// Asserted loosely (a shared 2-core machine); the figures are printed.

import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../../src/index.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';

interface Call {
  readonly startedAt: number;
  readonly ms: number;
  readonly byStore: boolean;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;
}

describe('the circuit breaker on a frozen real Redis', function () {
  this.timeout(60_000);
  let server: RedisServer;
  let client: Redis;
  before(async () => {
    server = await startRedisServer();
    client = new Redis(server.url);
    client.on('error', () => {});
  });
  after(async () => {
    client?.disconnect();
    await server?.stop();
  });

  it('settles calls at once while Redis is frozen, and goes back to Redis within cooldownMs + 1 s once it is back', async () => {
    const limiter = new RollingRateLimiter({
      client,
      namespace: `breaker:${process.pid}`,
      interval: 60_000,
      maxInInterval: 1_000_000,
      timeout: 300,
      onStoreError: 'allow',
    });
    expect(await limiter.limit('warm')).to.equal(false);
    const calls: Call[] = [];
    const pending: Promise<void>[] = [];
    const call = (): void => {
      const startedAt = performance.now();
      pending.push(
        limiter.limitWithInfo(`id-${calls.length + pending.length}`).then((info) => {
          calls.push({ startedAt, ms: performance.now() - startedAt, byStore: info.storeFailure === undefined });
        }),
      );
    };
    // 200 calls a second: one every 5 ms, for 3 s frozen.
    server.pause();
    const frozenAt = performance.now();
    while (performance.now() - frozenAt < 3_000) {
      call();
      await delay(5);
    }
    server.resume();
    const resumedAt = performance.now();
    let backAt: number | undefined;
    while (backAt === undefined && performance.now() - resumedAt < 5_000) {
      call();
      await delay(5);
      backAt = calls.find((c) => c.byStore && c.startedAt >= resumedAt)?.startedAt;
    }
    await Promise.all(pending);
    const afterFirstSecond = calls.filter((c) => c.startedAt >= frozenAt + 1_000 && c.startedAt < resumedAt).map((c) => c.ms);
    const fast = afterFirstSecond.filter((ms) => ms < 10).length / afterFirstSecond.length;
    const recoveryMs = backAt === undefined ? Infinity : backAt - resumedAt;
    console.log(
      `      frozen 3 s at 200 calls/s: ${afterFirstSecond.length} calls after the first second, ${(fast * 100).toFixed(1)}% within 10 ms ` +
        `(p50 ${percentile(afterFirstSecond, 50).toFixed(2)} ms, p95 ${percentile(afterFirstSecond, 95).toFixed(2)} ms, p99 ${percentile(afterFirstSecond, 99).toFixed(2)} ms); ` +
        `back on Redis ${Math.round(recoveryMs)} ms after SIGCONT (cooldownMs 1000)`,
    );
    expect(fast, 'share of calls after the first second that settled within 10 ms').to.be.at.least(0.95);
    expect(recoveryMs, 'ms from SIGCONT to the first call decided by Redis').to.be.below(1_000 + 1_000);
  });
});
