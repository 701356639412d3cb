// Failover on a real Redis Cluster of 3 masters with one replica each
// (test/support/redis-cluster.ts, cluster-node-timeout 3 s), once per cluster
// client (ioredis Cluster, node-redis 4 and 5 createCluster): while 8 callers
// attempt on ids whose slot a master serves, that master is SIGKILLed. Its
// replica is promoted after the node timeout and an election (4.9 to 5.7 s
// after the kill on a busy 2-core machine); the limiter must work again within
// the circuit breaker's cooldown + 1.5 s of the promotion (the breaker, on by
// default, opened during the outage and lets calls through at its next probe),
// and every call that starts after that must succeed.
// (A node-redis cluster client alone never re-reads its slot map here: the
// adapter notices calls that stall and makes it.)
//
// It also counts what Redis's asynchronous replication costs: a write the
// master acknowledged but had not yet sent to its replica is lost in the
// failover, so an id may admit more than `maxInInterval` in all. The test
// prints, per client, when the replica was promoted, when the limiter worked
// again, how the calls in between failed, and the admissions beyond the limit.

import { expect } from 'chai';
import { setTimeout as delay } from 'node:timers/promises';
import { RollingRateLimiter } from '../../../src/index.js';
import { FAILOVER_CLUSTER_CLIENTS } from '../../support/cluster-clients.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { slotOwners, startRedisCluster, type RedisClusterHandle } from '../../support/redis-cluster.js';
import { idsInSlot, masterServingSlot, ownerOfSlot } from '../../support/slot-migration.js';

const NODE_TIMEOUT_MS = 3_000;
/** The circuit breaker's default cooldown, which the limiters here keep. */
const BREAKER_COOLDOWN_MS = 1_000;
const CALLERS = 8;
const IDS = 4;
const MAX_IN_INTERVAL = 300;
const CALL_TIMEOUT_MS = 300;
/** How long to keep attempting after the kill, at most, and after the limiter works again. */
const OBSERVE_MS = NODE_TIMEOUT_MS + 6_000;
const STEADY_MS = 1_000;

/** One call, its times relative to the kill (ms), and how it went. */
interface Call {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly id: string;
  /** `'admitted'`, `'blocked'`, or the name of the error the call rejected with. */
  readonly outcome: string;
}

describe('failover of a master of a real Redis Cluster (3 masters, 3 replicas)', function () {
  this.timeout(120_000);
  let cluster: RedisClusterHandle | undefined;
  /** The first slot of each master's range when the cluster started: test i kills the master of the i-th. */
  let firstSlots: number[] = [];
  const namespaces = uniqueNamespaces('failover');

  before(async function () {
    this.timeout(60_000);
    cluster = await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });
    firstSlots = (await slotOwners(cluster)).map((range) => range.start);
  });
  after(async () => cluster?.stop());

  const handle = (): RedisClusterHandle => {
    if (cluster === undefined) throw new Error('no cluster');
    return cluster;
  };

  FAILOVER_CLUSTER_CLIENTS.forEach((clientKind, index) => {
    it(`${clientKind.name}: works again within the breaker's cooldown + 1.5 s of the replica's promotion after the master of its ids is SIGKILLed`, async () => {
      const slot = (firstSlots[index] as number) + 100;
      const ids = idsInSlot(slot, IDS);
      const victim = await ownerOfSlot(handle(), slot);
      const server = handle().servers.find((candidate) => `${candidate.host}:${candidate.port}` === victim);
      if (server === undefined) throw new Error(`no server started here is ${victim}`);
      const connected = await clientKind.connect(handle());
      const limiter = new RollingRateLimiter({
        client: connected.client,
        namespace: namespaces.next(clientKind.name),
        interval: 120_000,
        maxInInterval: MAX_IN_INTERVAL,
        timeout: CALL_TIMEOUT_MS,
      });
      const calls: Call[] = [];
      let killedAt = Number.POSITIVE_INFINITY;
      let stop = false;
      const caller = async (callerIndex: number): Promise<void> => {
        for (let i = 0; !stop && i < 100_000; i++) {
          const id = ids[(callerIndex + i) % IDS] as string;
          const startedAt = performance.now() - killedAt;
          let outcome: Call['outcome'];
          try {
            outcome = (await limiter.limit(id)) ? 'blocked' : 'admitted';
          } catch (error) {
            outcome = error instanceof Error ? error.name : String(error);
            await delay(20); // a failed caller pauses, as a real one would
          }
          calls.push({ startedAt, endedAt: performance.now() - killedAt, id, outcome });
        }
      };

      try {
        const callers = Array.from({ length: CALLERS }, (_, i) => caller(i));
        const admittedSoFar = (): number => calls.filter((call) => call.outcome === 'admitted').length;
        // Kill the master when the ids are half full, so that writes lost in the failover can show as admissions beyond the limit.
        for (let waited = 0; waited < 5_000 && admittedSoFar() < (IDS * MAX_IN_INTERVAL) / 2; waited += 10) await delay(10);
        killedAt = performance.now();
        await server.kill();
        const promotedAfterMs = await timeUntilPromoted(handle(), slot, victim, killedAt);
        // Keep attempting until every call has succeeded for STEADY_MS and every id is full, or OBSERVE_MS have passed.
        const full = (): boolean => ids.every((id) => calls.filter((call) => call.id === id && call.outcome === 'admitted').length >= MAX_IN_INTERVAL);
        for (let waited = 0; waited < OBSERVE_MS; waited += 100) {
          const recovered = recoveryOf(calls);
          if (recovered !== undefined && performance.now() - killedAt - recovered > STEADY_MS && full()) break;
          await delay(100);
        }
        stop = true;
        await Promise.all(callers);

        const recoveredAfterMs = recoveryOf(calls);
        const afterKill = calls.filter((call) => call.startedAt >= 0);
        const failed = afterKill.filter((call) => call.outcome !== 'admitted' && call.outcome !== 'blocked');
        const byError = [...new Set(failed.map((call) => call.outcome))].map((name) => `${name} ×${failed.filter((call) => call.outcome === name).length}`);
        const failedFrom =
          failed.length === 0 ? '' : ` from ${Math.round(failed[0]?.startedAt ?? 0)} to ${Math.round(Math.max(...failed.map((call) => call.startedAt)))} ms`;
        const admitted = ids.map((id) => calls.filter((call) => call.id === id && call.outcome === 'admitted').length);
        const excess = admitted.reduce((sum, count) => sum + Math.max(0, count - MAX_IN_INTERVAL), 0);
        console.log(
          `      ${clientKind.name}: master ${victim} SIGKILLed under ${CALLERS} callers; replica promoted after ${Math.round(promotedAfterMs)} ms; ` +
            `limiter working again after ${recoveredAfterMs === undefined ? 'never' : `${Math.round(recoveredAfterMs)} ms`} ` +
            `(node timeout ${NODE_TIMEOUT_MS} ms); ${failed.length} of ${afterKill.length} calls after the kill failed (${byError.join(', ') || 'none'})${failedFrom}; ` +
            `admitted per id ${admitted.join(', ')} of ${MAX_IN_INTERVAL}: ${excess} beyond the limit`,
        );
        expect(recoveredAfterMs, 'ms from the kill until every later call succeeded').to.be.a('number');
        // The circuit breaker (on by default, 1 s cooldown) opened during the outage: calls reach the new master at its next probe.
        expect((recoveredAfterMs as number) - promotedAfterMs, 'ms from the promotion until every later call succeeded').to.be.at.most(
          BREAKER_COOLDOWN_MS + 1_500,
        );
        expect(recoveredAfterMs, 'ms from the kill until every later call succeeded').to.be.at.most(NODE_TIMEOUT_MS + BREAKER_COOLDOWN_MS + 4_500);
        const lastOf = (id: string): string | undefined => calls.filter((call) => call.id === id).at(-1)?.outcome;
        expect(ids.map(lastOf), 'every id ends blocked: the limit holds after the failover').to.deep.equal(ids.map(() => 'blocked'));
        expect(excess, 'admissions beyond the limit (lost writes: at most one in flight per caller)').to.be.at.most(CALLERS);
      } finally {
        stop = true;
        await Promise.all(ids.map((id) => limiter.clear(id).catch(() => undefined)));
        await connected.close();
      }
    });
  });
});

/**
 * When the limiter worked again, in ms after the kill: the end of the first
 * successful call after which every call that started succeeded; undefined
 * while calls still fail.
 */
function recoveryOf(calls: readonly Call[]): number | undefined {
  const afterKill = [...calls].filter((call) => call.startedAt >= 0).sort((a, b) => a.startedAt - b.startedAt);
  let lastFailure = -1;
  afterKill.forEach((call, i) => {
    if (call.outcome !== 'admitted' && call.outcome !== 'blocked') lastFailure = i;
  });
  if (lastFailure === -1) return 0;
  const firstSteady = afterKill[lastFailure + 1];
  return firstSteady === undefined ? undefined : Math.max(firstSteady.startedAt, 0) + (firstSteady.endedAt - firstSteady.startedAt);
}

/** Polls the live nodes until `slot` is served by a master other than `victim`; ms after `killedAt`. */
async function timeUntilPromoted(cluster: RedisClusterHandle, slot: number, victim: string, killedAt: number): Promise<number> {
  for (let poll = 0; poll < 300; poll++) {
    const owner = await masterServingSlot(cluster, slot).catch(() => victim);
    if (owner !== victim) return performance.now() - killedAt;
    await delay(50);
  }
  throw new Error(`no replica took over slot ${slot} from ${victim} within 15 s`);
}
