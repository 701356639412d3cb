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

import { FAILOVER_CLUSTER_CLIENTS } from '../../support/cluster-clients.js';
import { expectOneMasterFailed, killMasterUnderLoad } from '../../support/master-kill.js';
import { startRedisCluster, type RedisClusterHandle } from '../../support/redis-cluster.js';

describe('a circuit breaker per master of a real Redis Cluster (3 masters, 3 replicas)', function () {
  this.timeout(120_000);
  let cluster: RedisClusterHandle | undefined;

  before(async function () {
    this.timeout(60_000);
    cluster = await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: 3_000, requireFullCoverage: false });
  });
  after(async () => cluster?.stop());

  for (const clientKind of FAILOVER_CLUSTER_CLIENTS.filter((kind) => kind.name !== 'node-redis 4 createCluster')) {
    it(`${clientKind.name}: a SIGKILLed master fails no call on the ids of the healthy masters, batched or not`, async () => {
      if (cluster === undefined) throw new Error('no cluster');
      const report = await killMasterUnderLoad(cluster, clientKind, { batches: [false, true] });
      expectOneMasterFailed(clientKind.name, report);
    });
  }
});
