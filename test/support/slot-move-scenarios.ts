// Slot moves on a real 3-master Redis Cluster started here (test/support/redis-cluster.ts),
// once per cluster client given (test/redis/cluster/slot-moves.test.ts: ioredis
// `Cluster`, node-redis 4 and 5 `createCluster`; glide-slot-moves.test.ts:
// Valkey GLIDE's `GlideClusterClient`).
//   - While one slot moves back and forth between two masters (IMPORTING /
//     MIGRATING, its keys MIGRATEd one at a time, SETSLOT NODE), 8 concurrent
//     callers attempt on ids whose keys live in that slot, in the default mode,
//     with `countBlocked: false`, and on a 2-tier stack: no call may fail, and
//     each id admits exactly `maxInInterval` actions.
//   - Right after a completed move (the client's slot map still points to the
//     old master), every operation works at its first call, within 2 s.
// It prints, per client and mode, the attempts, moves, rejections and the
// slowest call, and per client the slowest first call after a move.

import { expect } from 'chai';
import { RateLimiterStack, RollingRateLimiter, type RedisClient } from '../../src/index.js';
import type { ClusterClientKind, ConnectedCluster } from './cluster-clients.js';
import { uniqueNamespaces } from './namespaces.js';
import { startRedisCluster, type RedisClusterHandle } from './redis-cluster.js';
import { idsInSlot, moveSlot, ownerOfSlot } from './slot-migration.js';

/** What the callers attempt through: a limiter or a stack, deciding `limit(id)`. */
interface Subject {
  limit(id: string): Promise<boolean>;
  clear(id: string): Promise<void>;
}

const MAX_IN_INTERVAL = 25;
const MODES: { name: string; make(client: RedisClient, namespace: string): Subject }[] = [
  {
    name: 'the default mode',
    make: (client, namespace) => new RollingRateLimiter({ client, namespace, interval: 60_000, maxInInterval: MAX_IN_INTERVAL }),
  },
  {
    name: 'countBlocked: false',
    make: (client, namespace) => new RollingRateLimiter({ client, namespace, interval: 60_000, maxInInterval: MAX_IN_INTERVAL, countBlocked: false }),
  },
  {
    name: 'a 2-tier stack',
    make: (client, namespace) =>
      new RateLimiterStack([
        new RollingRateLimiter({ client, namespace: `${namespace}:minute`, interval: 60_000, maxInInterval: MAX_IN_INTERVAL }),
        new RollingRateLimiter({ client, namespace: `${namespace}:hour`, interval: 3_600_000, maxInInterval: 10_000 }),
      ]),
  },
];

const CALLERS = 8;
const IDS = 4;
const MOVES = 6;
const MAX_ATTEMPTS = 2_000;

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

        for (const mode of MODES) {
          it(`${mode.name}: no call fails while a slot moves back and forth under ${CALLERS} concurrent callers`, async () => {
            const slot = freshSlot();
            const ids = idsInSlot(slot, IDS);
            const subject = mode.make(client(), namespaces.next(mode.name));
            const home = await ownerOfSlot(handle(), slot);
            const admitted = new Map<string, number>(ids.map((id) => [id, 0]));
            const failures: unknown[] = [];
            let attempts = 0;
            let slowestMs = 0;
            let moving = true;

            const mover = (async () => {
              const moves = [];
              try {
                for (let i = 0; i < MOVES; i++) moves.push(await moveSlot(handle(), slot, i % 2 === 0 ? undefined : home, { pauseMs: 5 }));
              } finally {
                moving = false;
              }
              return moves;
            })();
            const caller = async (index: number): Promise<void> => {
              for (let i = 0; (moving || i < 20) && attempts < MAX_ATTEMPTS; i++) {
                const id = ids[(index + i) % IDS] as string;
                attempts += 1;
                const startedAt = performance.now();
                try {
                  if (!(await subject.limit(id))) admitted.set(id, (admitted.get(id) ?? 0) + 1);
                } catch (error) {
                  failures.push(error);
                }
                slowestMs = Math.max(slowestMs, performance.now() - startedAt);
              }
            };
            await Promise.all(Array.from({ length: CALLERS }, (_, index) => caller(index)));
            const moves = await mover;
            await Promise.all(ids.map((id) => subject.clear(id)));

            const keysMoved = moves.reduce((sum, move) => sum + move.keysMoved, 0);
            const messages = [...new Set(failures.map((error) => String(error)))].slice(0, 3);
            console.log(
              `      ${name}, ${mode.name}: ${attempts} attempts during ${moves.length} moves of slot ${slot} (${keysMoved} keys migrated), ` +
                `${failures.length} rejected, slowest ${Math.round(slowestMs)} ms${messages.length > 0 ? `; ${messages.join(' | ')}` : ''}`,
            );
            expect(failures, `rejections: ${messages.join(' | ')}`).to.have.length(0);
            expect([...admitted.values()], 'admitted per id').to.deep.equal(ids.map(() => MAX_IN_INTERVAL));
          });
        }

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
