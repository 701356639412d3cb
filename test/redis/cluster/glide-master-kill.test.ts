// A master of a real Redis Cluster (3 masters, 3 replicas, node timeout 3 s,
// `cluster-require-full-coverage no`) SIGKILLed under load through Valkey
// GLIDE's `GlideClusterClient` (test/support/master-kill.ts), with a limiter
// with `batch: false` and one with `batch: true`: no call on an id of a
// healthy master fails, and the killed master's ids work again within the
// circuit breaker's cooldown + 1.5 s of its replica's promotion. The adapter
// reads the cluster's slot map itself (GLIDE shows its own to no one), so this
// also checks that each failure is charged to the master that failed.

import { GLIDE_CLUSTER_CLIENT } from '../../support/glide-clients.js';
import { expectOneMasterFailed, killMasterUnderLoad } from '../../support/master-kill.js';
import { startRedisCluster, type RedisClusterHandle } from '../../support/redis-cluster.js';

describe('a master of a real Redis Cluster SIGKILLed under Valkey GLIDE (3 masters, 3 replicas)', function () {
  this.timeout(120_000);
  let cluster: RedisClusterHandle | undefined;

  before(async function () {
    this.timeout(60_000);
    cluster = await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: 3_000, requireFullCoverage: false });
  });
  after(async () => cluster?.stop());

  it(`${GLIDE_CLUSTER_CLIENT.name}: fails no call on the ids of the healthy masters, and works again soon after the promotion, batched or not`, async () => {
    if (cluster === undefined) throw new Error('no cluster');
    const report = await killMasterUnderLoad(cluster, GLIDE_CLUSTER_CLIENT, { batches: [false, true] });
    expectOneMasterFailed(GLIDE_CLUSTER_CLIENT.name, report);
  });
});
