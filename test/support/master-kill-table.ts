// Prints, per cluster client and batch mode, what a master's SIGKILL does to
// calls on the ids of the healthy masters and of the killed one (see
// master-kill.ts), on a 3-master + 3-replica cluster (node timeout 3 s) it
// starts and stops. Run: npx tsx test/support/master-kill-table.ts [--no-full-coverage]
// (`--no-full-coverage`: `cluster-require-full-coverage no`, so that the
// healthy masters do not answer CLUSTERDOWN during the election).

import { FAILOVER_CLUSTER_CLIENTS } from './cluster-clients.js';
import { killMasterUnderLoad, type SideCount } from './master-kill.js';
import { startRedisCluster } from './redis-cluster.js';

const clients = FAILOVER_CLUSTER_CLIENTS.filter((kind) => kind.name !== 'node-redis 4 createCluster');
const requireFullCoverage = !process.argv.includes('--no-full-coverage');
const cluster = await startRedisCluster({ replicasPerMaster: 1, nodeTimeoutMs: 3_000, requireFullCoverage });
const describe = (side: SideCount): string =>
  `${side.failed} of ${side.calls} failed${
    side.failed === 0
      ? ''
      : ` (${Object.entries(side.byError)
          .map(([code, n]) => `${code} ×${n}`)
          .join(', ')})`
  }`;
try {
  console.log("| client | batch | healthy masters' ids | killed master's ids | last failure after promotion |");
  console.log('| --- | --- | --- | --- | --- |');
  for (const kind of clients) {
    for (const batch of [false, true]) {
      const report = await killMasterUnderLoad(cluster, kind, { batches: [batch] });
      const [outcome] = report.limiters;
      if (outcome === undefined) continue;
      const last = outcome.dead.lastFailureAfterPromotionMs;
      console.log(
        `| ${kind.name} | ${String(batch)} | ${describe(outcome.healthy)} | ${describe(outcome.dead)} | ` +
          `${last === undefined ? '-' : `${Math.round(last)} ms`} (promoted ${Math.round(report.promotedAfterMs)} ms after the kill) |`,
      );
    }
  }
} finally {
  await cluster.stop();
}
