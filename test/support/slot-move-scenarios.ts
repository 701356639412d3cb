// Slot moves on a real 3-master Redis Cluster started here (test/support/redis-cluster.ts),
// once per cluster client given (test/redis/cluster/slot-moves.test.ts: ioredis
// and iovalkey `Cluster`, node-redis 4, 5 and 6 `createCluster`;
// glide-slot-moves.test.ts: Valkey GLIDE's `GlideClusterClient`): right after a
// completed move (the client's slot map still points to the old master), every
// operation works at its first call, within 2 s. It prints, per client, the
// slowest first call after a move. Calls while slots move, under load, are
// test/redis/cluster/resharding.test.ts.

import { expect } from 'chai';
import { RateLimiterStack, RollingRateLimiter, type RedisClient } from '../../src/index.js';
import type { ClusterClientKind, ConnectedCluster } from './cluster-clients.js';
import { uniqueNamespaces } from './namespaces.js';
import { startRedisCluster, type RedisClusterHandle } from './redis-cluster.js';
import { idsInSlot, moveSlot } from './slot-migration.js';

/** Describes the slot-move tests for each of `clientKinds`, on a cluster of their own. */
export function describeSlotMoves(clientKinds: readonly ClusterClientKind[]): void {
  describe('slot moves on a real Redis Cluster', function () {
    this.timeout(120_000);
    let cluster: RedisClusterHandle | undefined;
    let nextSlot = 700;
    const namespaces = uniqueNamespaces('slot-moves');

    before(async function () {
      this.timeout(60_000);
      cluster = await startRedisCluster(); // never REDIS_CLUSTER_URLS: moving slots is not for a cluster the user brings
    });
    after(async () => cluster?.stop());

    const handle = (): RedisClusterHandle => {
      if (cluster === undefined) throw new Error('no cluster');
      return cluster;
    };
    /** A slot of its own for each test, so that no test sees another's moves. */
    const freshSlot = (): number => (nextSlot += 997) % 16384;

    for (const clientKind of clientKinds) {
      const { name } = clientKind;
      describe(name, () => {
        let connected: ConnectedCluster | undefined;
        before(async () => {
          connected = await clientKind.connect(handle());
        });
        after(async () => connected?.close());
        const client = (): RedisClient => {
          if (connected === undefined) throw new Error('not connected');
          return connected.client;
        };

        it('every operation works at its first call right after a completed move, within 2 s', async () => {
          const slot = freshSlot();
          const [id] = idsInSlot(slot, 1) as [string];
          const namespace = namespaces.next('ops');
          const limiter = new RollingRateLimiter({ client: client(), namespace, interval: 60_000, maxInInterval: 5 });
          const decideFirst = new RollingRateLimiter({
            client: client(),
            namespace: `${namespace}:cbf`,
            interval: 60_000,
            maxInInterval: 5,
            countBlocked: false,
          });
          const stack = new RateLimiterStack([
            new RollingRateLimiter({ client: client(), namespace: `${namespace}:a`, interval: 60_000, maxInInterval: 5 }),
            new RollingRateLimiter({ client: client(), namespace: `${namespace}:b`, interval: 1_000, maxInInterval: 5 }),
          ]);
          const operations: [string, () => Promise<unknown>][] = [
            ['limit', () => limiter.limit(id)],
            ['limitWithInfo', () => limiter.limitWithInfo(id)],
            ['wouldLimit', () => limiter.wouldLimit(id)],
            ['wouldLimitWithInfo', () => limiter.wouldLimitWithInfo(id)],
            ['limit with an actionId', () => limiter.limit(id, { actionId: 'a1' })],
            ['undo', () => limiter.undo(id, 'a1')],
            ['clear', () => limiter.clear(id)],
            ['limit (countBlocked: false)', () => decideFirst.limit(id)],
            ['stack limit', () => stack.limit(id)],
            ['stack wouldLimitWithInfo', () => stack.wouldLimitWithInfo(id)],
            ['stack clear', () => stack.clear(id)],
          ];
          await limiter.limit(id); // a key in the slot, so that each move migrates something
          const timings: string[] = [];
          let slowestMs = 0;
          for (const [operation, run] of operations) {
            await moveSlot(handle(), slot, undefined, { pauseMs: 0 });
            const startedAt = performance.now();
            const outcome = await run().then(
              () => undefined,
              (error: unknown) => error,
            );
            const ms = performance.now() - startedAt;
            slowestMs = Math.max(slowestMs, ms);
            timings.push(`${operation} ${Math.round(ms)}`);
            expect(outcome, `${operation} right after a move`).to.equal(undefined);
            expect(ms, `${operation} right after a move, ms`).to.be.below(2_000);
          }
          await limiter.clear(id);
          console.log(`      ${name}, first call after a completed move (ms): ${timings.join(', ')}; slowest ${Math.round(slowestMs)} ms`);
        });
      });
    }
  });
}
