// The circuit breaker's unit on a real Redis Cluster is one master: with 3
// masters + 3 replicas (node timeout 3 s), 8 callers per limiter attempt on 90
// ids spread over every master, through a limiter with `batch: false` and one
// with `batch: true` on the same client (`timeout: 1000`, default breaker,
// `onStoreError: 'throw'`), and one master is SIGKILLed (test/support/master-kill.ts).
// No call on an id of a healthy master may fail; the killed master's ids work
// again soon after its replica is promoted (which starts with a closed circuit).
//
// The cluster runs with `cluster-require-full-coverage no`: with Redis's
// default, every master answers CLUSTERDOWN from the moment the cluster marks
// the master failed until the promotion (about a second here), and calls
// that wait longer than their timeout fail on healthy masters too, whatever
// the client does (docs/guides/redis-cluster.md).

import { expect } from 'chai';
import { CLUSTER_CLIENTS } from '../../support/cluster-clients.js';
import { killMasterUnderLoad, type SideCount } from '../../support/master-kill.js';
import { startRedisCluster, type RedisClusterHandle } from '../../support/redis-cluster.js';

/** The circuit breaker's default cooldown: the killed master's ids may fail until its replica is promoted, then for at most about this long. */
const BREAKER_COOLDOWN_MS = 1_000;

const describeSide = (side: SideCount): string =>
  `${side.failed} of ${side.calls} failed${side.failed === 0 ? '' : ` (${Object.entries(side.byError).map(([code, n]) => `${code} ×${n}`).join(', ')})`}`;

describe('a circuit breaker per master of a real Redis Cluster (3 masters, 3 replicas)', function () {
  this.timeout(120_000);
  let cluster: RedisClusterHandle | undefined;

  before(async function () {
    this.timeout(60_000);
    cluster = await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: 3_000, requireFullCoverage: false });
  });
  after(async () => cluster?.stop());

  for (const clientKind of CLUSTER_CLIENTS.filter((kind) => kind.name !== 'node-redis 4 createCluster')) {
    it(`${clientKind.name}: a SIGKILLed master fails no call on the ids of the healthy masters, batched or not`, async () => {
      if (cluster === undefined) throw new Error('no cluster');
      const report = await killMasterUnderLoad(cluster, clientKind, { batches: [false, true] });
      for (const { batch, healthy, dead } of report.limiters) {
        console.log(
          `      ${clientKind.name}, batch: ${String(batch)}: master ${report.victim} SIGKILLed, replica promoted after ${Math.round(report.promotedAfterMs)} ms; ` +
            `healthy masters' ids: ${describeSide(healthy)}; killed master's ids: ${describeSide(dead)}` +
            (dead.lastFailureAfterPromotionMs === undefined ? '' : `, the last ${Math.round(dead.lastFailureAfterPromotionMs)} ms after the promotion`),
        );
      }
      for (const { batch, healthy, dead } of report.limiters) {
        expect(healthy.calls, `calls on healthy masters' ids (batch: ${String(batch)})`).to.be.above(100);
        expect(healthy.failed, `failed calls on healthy masters' ids (batch: ${String(batch)}): ${JSON.stringify(healthy.byError)}`).to.equal(0);
        expect(dead.failed, `the killed master's ids fail while it is down (batch: ${String(batch)})`).to.be.above(0);
        expect(dead.lastFailureAfterPromotionMs, `ms from the promotion to the last failure on the killed master's ids (batch: ${String(batch)})`).to.be.below(
          BREAKER_COOLDOWN_MS + 1_500,
        );
      }
    });
  }
});
