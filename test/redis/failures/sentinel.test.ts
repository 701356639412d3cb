// Redis Sentinel on loopback (test/support/redis-sentinel.ts: a primary, a
// replica, three sentinels, down-after 1 s), with an ioredis client given
// sentinels and a node-redis 5 `createSentinel` client:
//   - limit() limits exactly, in the default mode, with countBlocked: false and
//     on a stack;
//   - after `SENTINEL FAILOVER` (the replica promoted, the old primary made its
//     replica), the limiter works again within a few seconds while 8 callers
//     keep attempting, and every call that starts after that succeeds.
// It prints how long the failover took, when the limiter worked again, and how
// the calls in between went.

import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createSentinel } from 'redis5';
import { RateLimiterStack, RollingRateLimiter, type RedisClient } from '../../../src/index.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { SENTINEL_MASTER_NAME, startRedisSentinel, type RedisSentinelHandle } from '../../support/redis-sentinel.js';

interface SentinelClient {
  readonly client: RedisClient;
  close(): Promise<void>;
}

const CLIENTS: { name: string; connect(handle: RedisSentinelHandle): Promise<SentinelClient> }[] = [
  {
    name: 'ioredis with sentinels',
    connect: async (handle) => {
      const client = new Redis({ sentinels: [...handle.sentinelNodes], name: SENTINEL_MASTER_NAME });
      client.on('error', () => {}); // the failover closes its connection on purpose
      await client.ping();
      return { client, close: async () => void client.disconnect() };
    },
  },
  {
    name: 'node-redis 5 createSentinel',
    connect: async (handle) => {
      const client = createSentinel({ name: SENTINEL_MASTER_NAME, sentinelRootNodes: [...handle.sentinelNodes] });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => void client.destroy() };
    },
  },
];

const CALLERS = 8;
const RECOVERY_LIMIT_MS = 5_000;

describe('Redis Sentinel (a primary, a replica, three sentinels)', function () {
  this.timeout(90_000);
  let handle: RedisSentinelHandle | undefined;
  const namespaces = uniqueNamespaces('sentinel');

  before(async function () {
    this.timeout(60_000);
    handle = await startRedisSentinel();
  });
  after(async () => handle?.stop());

  const sentinel = (): RedisSentinelHandle => {
    if (handle === undefined) throw new Error('no sentinel set-up');
    return handle;
  };

  for (const clientKind of CLIENTS) {
    describe(clientKind.name, () => {
      let connected: SentinelClient | undefined;
      before(async () => {
        connected = await clientKind.connect(sentinel());
      });
      after(async () => connected?.close());
      const client = (): RedisClient => {
        if (connected === undefined) throw new Error('not connected');
        return connected.client;
      };

      it('limits exactly, in the default mode, with countBlocked: false and on a stack', async () => {
        const rules = { client: client(), interval: 60_000, maxInInterval: 3 };
        const byDefault = new RollingRateLimiter({ ...rules, namespace: namespaces.next('default') });
        const decideFirst = new RollingRateLimiter({ ...rules, namespace: namespaces.next('cbf'), countBlocked: false });
        const stack = new RateLimiterStack([
          new RollingRateLimiter({ ...rules, namespace: namespaces.next('minute') }),
          new RollingRateLimiter({ ...rules, namespace: namespaces.next('second'), interval: 1_000, maxInInterval: 10 }),
        ]);
        for (const subject of [byDefault, decideFirst, stack]) {
          const results: boolean[] = [];
          for (let i = 0; i < 4; i++) results.push(await subject.limit('user-1'));
          expect(results).to.deep.equal([false, false, false, true]);
          expect((await subject.wouldLimitWithInfo('user-1')).blocked).to.equal(true);
          await subject.clear('user-1');
        }
      });

      it(`works again within ${RECOVERY_LIMIT_MS / 1_000} s after SENTINEL FAILOVER, under ${CALLERS} callers`, async () => {
        const limiter = new RollingRateLimiter({
          client: client(),
          namespace: namespaces.next('failover'),
          interval: 60_000,
          maxInInterval: 1_000_000,
          timeout: 300,
        });
        const calls: { startedAt: number; endedAt: number; ok: boolean; error?: string }[] = [];
        let failoverAt = Number.POSITIVE_INFINITY;
        let stop = false;
        const caller = async (index: number): Promise<void> => {
          for (let i = 0; !stop && i < 1_000_000; i++) {
            const startedAt = performance.now() - failoverAt;
            try {
              await limiter.limit(`user-${index}`);
              calls.push({ startedAt, endedAt: performance.now() - failoverAt, ok: true });
            } catch (error) {
              calls.push({ startedAt, endedAt: performance.now() - failoverAt, ok: false, error: error instanceof Error ? error.message : String(error) });
              await delay(20);
            }
          }
        };
        const callers = Array.from({ length: CALLERS }, (_, i) => caller(i));
        try {
          await delay(200);
          failoverAt = performance.now();
          const failover = await sentinel().failover();
          // Attempt on until every call has succeeded for a second, or RECOVERY_LIMIT_MS + 3 s have passed.
          for (let waited = 0; waited < RECOVERY_LIMIT_MS + 3_000; waited += 100) {
            const lastFailure = Math.max(-1, ...calls.filter((call) => !call.ok).map((call) => call.startedAt));
            if (performance.now() - failoverAt - Math.max(lastFailure, failover.ms) > 1_000) break;
            await delay(100);
          }
          stop = true;
          await Promise.all(callers);

          const afterFailover = calls.filter((call) => call.startedAt >= 0);
          const failed = afterFailover.filter((call) => !call.ok);
          const lastFailedStart = Math.max(-1, ...failed.map((call) => call.startedAt));
          const firstSteady = afterFailover.filter((call) => call.startedAt > lastFailedStart).sort((a, b) => a.startedAt - b.startedAt)[0];
          const recoveredMs = failed.length === 0 ? 0 : firstSteady?.endedAt;
          const errors = [...new Set(failed.map((call) => call.error))].slice(0, 2).join(' | ');
          console.log(
            `      ${clientKind.name}: SENTINEL FAILOVER ${failover.from} -> ${failover.to} reported after ${Math.round(failover.ms)} ms; ` +
              `limiter working again after ${recoveredMs === undefined ? 'never' : `${Math.round(recoveredMs)} ms`}; ` +
              `${failed.length} of ${afterFailover.length} calls failed${errors === '' ? '' : ` (${errors})`}`,
          );
          expect(await sentinel().primary()).to.equal(failover.to);
          expect(recoveredMs, 'ms from SENTINEL FAILOVER until every later call succeeded').to.be.a('number').and.at.most(RECOVERY_LIMIT_MS);
          expect(await limiter.limit('after-failover'), 'a call on the new primary').to.equal(false);
        } finally {
          stop = true;
          await Promise.all(callers);
        }
      });
    });
  }
});
