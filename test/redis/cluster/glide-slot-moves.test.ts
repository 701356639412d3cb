// Slot moves on a real 3-master Redis Cluster (test/support/slot-move-scenarios.ts),
// with Valkey GLIDE's `GlideClusterClient`: every operation works right after a
// move (calls while slots move, under load: resharding.test.ts).
// And the master the adapter names for a slot (its circuit breaker's domain)
// follows a move within about a second.

import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import { adapterFor } from '../../../src/redis/adapters/create-adapter.js';
import { SLOT_MAP_MAX_AGE_MS } from '../../../src/redis/adapters/glide-slot-map.js';
import type { ConnectedCluster } from '../../support/cluster-clients.js';
import { GLIDE_CLUSTER_CLIENT } from '../../support/glide-clients.js';
import { startRedisCluster, type RedisClusterHandle } from '../../support/redis-cluster.js';
import { idsInSlot, moveSlot, ownerOfSlot } from '../../support/slot-migration.js';
import { describeSlotMoves } from '../../support/slot-move-scenarios.js';

describeSlotMoves([GLIDE_CLUSTER_CLIENT]);

describe('the slot owner a Valkey GLIDE cluster client reports, on a real Redis Cluster', function () {
  this.timeout(60_000);
  let cluster: RedisClusterHandle | undefined;
  let connected: ConnectedCluster | undefined;
  before(async function () {
    this.timeout(60_000);
    cluster = await startRedisCluster();
    connected = await GLIDE_CLUSTER_CLIENT.connect(cluster);
  });
  after(async () => {
    await connected?.close();
    await cluster?.stop();
  });

  it(`names the new master within ${SLOT_MAP_MAX_AGE_MS} ms + 1 s of a completed slot move, and every master before it`, async () => {
    if (cluster === undefined || connected === undefined) throw new Error('no cluster');
    const adapter = adapterFor(connected.client);
    const slot = 4242;
    const [id] = idsInSlot(slot, 1) as [string];
    const ownerNow = async (expected: string): Promise<number> => {
      const startedAt = performance.now();
      for (let poll = 0; poll < 100 && adapter.slotOwner?.(id) !== expected; poll++) await delay(25);
      expect(adapter.slotOwner?.(id), `the slot owner of ${id} (slot ${slot})`).to.equal(expected);
      return performance.now() - startedAt;
    };
    await ownerNow(await ownerOfSlot(cluster, slot));
    const waits: number[] = [];
    for (let move = 0; move < 3; move++) {
      const { to } = await moveSlot(cluster, slot, undefined, { pauseMs: 0 });
      waits.push(await ownerNow(to));
    }
    console.log(`      the slot owner followed each move after ${waits.map(Math.round).join(', ')} ms`);
    for (const wait of waits) expect(wait, 'ms until the slot owner followed a move').to.be.below(SLOT_MAP_MAX_AGE_MS + 1_000);
  });
});
