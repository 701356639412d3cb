// Resharding under load, on a real 3-master Redis Cluster started here: every
// cluster client the library supports, batched and not, decides at once
// (test/support/reshard-load.ts: 8 callers on 60 ids each, 40,000 calls, on a
// limiter of actions, a 2-tier stack, and a budget with settle and undo, every
// id cleared at the end) while the slots of 12 of the ids move between the
// masters:
//   - rounds of moves 200 ms apart: no call may fail (on GLIDE, at most 0.1%: its
//     own retries of TRYAGAIN wait 1.28 s, then 2.56 s, and can outlast 5 s);
//   - moves back to back (20 ms between rounds): at most 0.1% of calls may fail;
//   - `redis-cli --cluster reshard` moving 4,096 slots, the hot ones among them:
//     no call may fail.
// Each id must admit exactly its first attempts up to the limit, on the limiter
// and on the stack.
// It prints, per configuration, calls, rejections (with their messages) and the
// slowest call.

import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'chai';
import type { ClusterClientKind, ConnectedCluster } from '../../support/cluster-clients.js';
import { CLUSTER_CLIENTS } from '../../support/cluster-clients.js';
import { GLIDE_CLUSTER_CLIENT } from '../../support/glide-clients.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { reshardWithRedisCli, slotOwners, startRedisCluster, type RedisClusterHandle } from '../../support/redis-cluster.js';
import { loadIds, runLoad, type LoadIds, type LoadResult } from '../../support/reshard-load.js';
import { moveSlot } from '../../support/slot-migration.js';

const CLIENTS: readonly ClusterClientKind[] = [...CLUSTER_CLIENTS, GLIDE_CLUSTER_CLIENT];
const ATTEMPTS = 40_000;
const CALLERS = 8;
const IDS = 60;
const HOT_PER_SLOT = 3;
const HOT_SLOTS = 4;
/** Calls each configuration makes at least during the reshard; it goes on until the reshard is done. */
const RESHARD_LEAST_ATTEMPTS = 2_000;
/**
 * Calls on Valkey GLIDE with moves back to back: each TRYAGAIN holds a GLIDE caller at least 1.28 s (see below), so
 * 40,000 calls took 5 minutes there, where the other clients took 1 to 2; a quarter of them keeps the suite's time.
 */
const GLIDE_BACK_TO_BACK_ATTEMPTS = 10_000;

/**
 * The limiters' `timeout`: the default, 2 s, except on Valkey GLIDE, which itself retries a command refused with
 * TRYAGAIN (the id's keys split between two masters for a moment) after at least 1.28 s, with no setting to change
 * it: two such refusals in a row outlast 2 s (docs/guides/redis-cluster.md, "Resharding").
 */
const timeoutFor = (kind: ClusterClientKind): number => (kind === GLIDE_CLUSTER_CLIENT ? 5_000 : 2_000);

/** One client, batched or not. */
interface Configuration {
  readonly name: string;
  readonly kind: ClusterClientKind;
  readonly connected: ConnectedCluster;
  readonly batch: boolean;
  readonly timeout: number;
}

describe('resharding under load on a real Redis Cluster', function () {
  this.timeout(900_000);
  let cluster: RedisClusterHandle | undefined;
  const configurations: Configuration[] = [];
  const namespaces = uniqueNamespaces('reshard');
  let seed = 1;

  before(async function () {
    this.timeout(120_000);
    cluster = await startRedisCluster(); // never the user's cluster: moving slots is not for a cluster the user brings
    for (const kind of CLIENTS) {
      const connected = await kind.connect(cluster);
      for (const batch of [false, true]) {
        configurations.push({ name: `${kind.name}${batch ? ', batch: true' : ''}`, kind, connected, batch, timeout: timeoutFor(kind) });
      }
    }
  });
  after(async () => {
    await Promise.all([...new Set(configurations.map(({ connected }) => connected))].map((connected) => connected.close()));
    await cluster?.stop();
  });

  const handle = (): RedisClusterHandle => {
    if (cluster === undefined) throw new Error('no cluster');
    return cluster;
  };

  /** Every configuration's load at once, on the same ids, `attemptsOf` it calls each and on while `keepGoing`. */
  const loadEverywhere = (ids: LoadIds, attemptsOf: (kind: ClusterClientKind) => number, keepGoing?: () => boolean): Promise<LoadResult[]> =>
    Promise.all(
      configurations.map(({ name, kind, connected, batch, timeout }) =>
        runLoad({
          name,
          client: connected.client,
          batch,
          timeout,
          namespace: namespaces.next(name),
          ids,
          attempts: attemptsOf(kind),
          keepGoing,
          callers: CALLERS,
          seed: seed++,
        }),
      ),
    );

  const report = (title: string, results: readonly LoadResult[]): void => {
    console.log(`      ${title}:`);
    for (const result of results) {
      const messages = result.messages.length > 0 ? `; ${result.messages.join(' | ')}` : '';
      console.log(`        ${result.name}: ${result.rejected} of ${result.attempts} rejected, slowest ${Math.round(result.slowestMs)} ms${messages}`);
    }
  };

  // Keys move 10 per MIGRATE at redis-cli's pace; back to back, one at a time, so an id's keys stay split longer.
  // Back to back, at most 0.1% of each client's calls may fail; paced, none but GLIDE's (0.1%, see timeoutFor).
  for (const { pacing, roundPauseMs, keysPerBatch, backToBack } of [
    { pacing: 'rounds of moves 200 ms apart', roundPauseMs: 200, keysPerBatch: 10, backToBack: false },
    { pacing: 'moves back to back', roundPauseMs: 20, keysPerBatch: 1, backToBack: true },
  ]) {
    const attemptsOf = (kind: ClusterClientKind): number => (backToBack && kind === GLIDE_CLUSTER_CLIENT ? GLIDE_BACK_TO_BACK_ATTEMPTS : ATTEMPTS);
    it(`${pacing}: ${backToBack ? 'at most 0.1% of calls fail' : 'no call fails (GLIDE: at most 0.1%)'} and every id stays exact, on every client, batched and not`, async () => {
      const hotSlots = Array.from({ length: HOT_SLOTS }, (_, i) => (1_200 + 4_099 * i + roundPauseMs) % 16_384);
      const ids = loadIds(hotSlots, HOT_PER_SLOT, IDS);
      let loading = true;
      let moves = 0;
      const mover = (async () => {
        while (loading) {
          for (const slot of hotSlots) {
            await moveSlot(handle(), slot, undefined, { keysPerBatch, pauseMs: 2 });
            moves += 1;
          }
          await delay(roundPauseMs);
        }
      })();
      const results = await loadEverywhere(ids, attemptsOf).finally(() => {
        loading = false;
      });
      await mover;
      report(`${pacing}, ${moves} slot moves`, results);
      results.forEach((result, i) => {
        // GLIDE may lose a call to its own retries of TRYAGAIN (1.28 s, then 2.56 s, ...) however paced the moves.
        const mayFail = backToBack || configurations[i]?.kind === GLIDE_CLUSTER_CLIENT;
        expect(result.inexact, `${result.name}: ids whose admissions are not exact`).to.deep.equal([]);
        expect(result.rejected, `${result.name}: rejected calls (${result.messages.join(' | ')})`).to.be.at.most(
          mayFail ? Math.floor(result.attempts / 1_000) : 0,
        );
      });
    });
  }

  it('redis-cli --cluster reshard of 4,096 slots while callers decide: no call fails and every id stays exact', async () => {
    const ranges = await slotOwners(handle());
    const source = ranges[0];
    const target = ranges.find((range) => range.master.id !== source?.master.id);
    if (source === undefined || target === undefined) throw new Error('fewer than two masters');
    // redis-cli takes a source's slots from its lowest: the hot ids live in slots the reshard moves.
    const hotSlots = Array.from({ length: HOT_SLOTS }, (_, i) => source.start + 37 + 1_000 * i);
    const ids = loadIds(hotSlots, HOT_PER_SLOT, IDS);
    let resharding = true;
    const reshard = reshardWithRedisCli(handle(), { from: source.master.id, to: target.master.id, slots: 4_096 }).finally(() => {
      resharding = false;
    });
    const results = await loadEverywhere(
      ids,
      () => RESHARD_LEAST_ATTEMPTS,
      () => resharding,
    );
    await reshard;
    const after = await slotOwners(handle());
    const moved = after.filter((range) => range.master.id === target.master.id).reduce((sum, range) => sum + range.end - range.start + 1, 0);
    report(`redis-cli --cluster reshard, ${target.master.id.slice(0, 8)} now serves ${moved} slots`, results);
    for (const result of results) {
      expect(result.inexact, `${result.name}: ids whose admissions are not exact`).to.deep.equal([]);
      expect(result.rejected, `${result.name}: rejected calls (${result.messages.join(' | ')})`).to.equal(0);
    }
  });
});
