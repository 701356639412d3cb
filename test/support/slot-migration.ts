// Moves one hash slot of a running Redis Cluster to another master, the way
// `redis-cli --cluster reshard` does it, step by step so that tests can run
// traffic through every stage of the move:
//   1. the target says CLUSTER SETSLOT <slot> IMPORTING <source-id>,
//   2. the source says CLUSTER SETSLOT <slot> MIGRATING <target-id>
//      (from here the source answers ASK for keys it no longer holds, and
//      TRYAGAIN to a multi-key command whose keys are split),
//   3. MIGRATE moves the slot's keys, a few at a time, with a pause between
//      batches (the longer the pause, the longer the window of ASK/TRYAGAIN),
//   4. CLUSTER SETSLOT <slot> NODE <target-id>, on the target, then on the
//      source, then on every other master (from here, MOVED).
// It also finds ids whose keys land on a given slot.

import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { escapeIdentifier } from '../../src/core/identity.js';
import { keySlot, slotOwners, type RedisClusterHandle } from './redis-cluster.js';

/** How a slot move is paced. */
export interface SlotMoveOptions {
  /** Keys per MIGRATE. @default 1 */
  readonly keysPerBatch?: number;
  /** Pause after IMPORTING/MIGRATING and between batches, in ms. @default 5 */
  readonly pauseMs?: number;
}

/** What a move did. */
export interface SlotMove {
  readonly slot: number;
  readonly from: string;
  readonly to: string;
  readonly keysMoved: number;
  readonly ms: number;
}

const MAX_BATCHES = 10_000;
/** Times `ownerOfSlot` asks the masters before it gives up. */
const OWNER_ASKS = 10;
const MIGRATE_TIMEOUT_MS = 5_000;

/** `count` ids (`<prefix>0`, `<prefix>1`, ...) whose keys, in any namespace, hash to `slot`. */
export function idsInSlot(slot: number, count: number, prefix = 'id-'): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count && i < 50_000_000; i++) {
    const id = `${prefix}${i}`;
    if (keySlot(escapeIdentifier(id)) === slot) ids.push(id);
  }
  if (ids.length < count) throw new Error(`found only ${ids.length} ids in slot ${slot}`);
  return ids;
}

async function withConnection<T>(url: string, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { maxRetriesPerRequest: 0, commandTimeout: MIGRATE_TIMEOUT_MS + 1_000, retryStrategy: () => null });
  redis.on('error', () => {}); // reported by the command's rejection
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** The master of every `host:port` of the cluster: its URL and node id. */
async function mastersOf(cluster: RedisClusterHandle): Promise<Map<string, { url: string; id: string }>> {
  const owners = await slotOwners(cluster);
  const masters = new Map<string, { url: string; id: string }>();
  for (const { master } of owners) masters.set(`${master.host}:${master.port}`, { url: `redis://${master.host}:${master.port}`, id: master.id });
  return masters;
}

/**
 * Which master (`host:port`) serves `slot` as the first node that answers
 * `CLUSTER SLOTS` sees it: what clients learn when they refresh their slot map.
 */
export async function masterServingSlot(cluster: RedisClusterHandle, slot: number): Promise<string> {
  const range = (await slotOwners(cluster)).find((candidate) => candidate.start <= slot && slot <= candidate.end);
  if (range === undefined) throw new Error(`slot ${slot} is not served`);
  return `${range.master.host}:${range.master.port}`;
}

/**
 * The id of the node whose own line in `CLUSTER NODES` (the one flagged
 * `myself`) claims `slot` as a master, or undefined when that node does not
 * think it serves the slot.
 */
function selfClaimOf(clusterNodes: string, slot: number): string | undefined {
  const own = clusterNodes.split('\n').find((line) => line.split(' ')[2]?.split(',').includes('myself'));
  if (own === undefined) return undefined;
  const [id, , flags, , , , , , ...slots] = own.trim().split(' ');
  if (id === undefined || !(flags ?? '').split(',').includes('master')) return undefined;
  for (const entry of slots) {
    if (entry.startsWith('[')) continue; // an IMPORTING or MIGRATING mark, not ownership
    const [first, last = first] = entry.split('-').map(Number);
    if (first !== undefined && last !== undefined && first <= slot && slot <= last) return id;
  }
  return undefined;
}

/**
 * Which master (`host:port`) serves `slot` now, by its own account: the master
 * whose `CLUSTER NODES` says it owns the slot. Not from one node's view of the
 * others (`CLUSTER SLOTS`), which may lag a completed move while the cluster
 * gossips, and would send the next move to the wrong source.
 */
export async function ownerOfSlot(cluster: RedisClusterHandle, slot: number): Promise<string> {
  // A master that did not answer in time (a loaded machine), or nodes still gossiping a change, can leave the slot
  // claimed by none or two for a moment: asked again, a few times, 100 ms apart.
  let claimants: string[] = [];
  for (let asked = 0; asked < OWNER_ASKS; asked++) {
    if (asked > 0) await delay(100);
    const masters = await mastersOf(cluster);
    const claims = await Promise.all(
      [...masters.values()].map(({ url }) =>
        withConnection(url, async (redis) => selfClaimOf(String(await redis.call('CLUSTER', 'NODES')), slot)).catch(() => undefined),
      ),
    );
    claimants = [...masters].filter(([, master]) => claims.includes(master.id)).map(([address]) => address);
    if (claimants.length === 1) return claimants[0] as string;
  }
  if (claimants.length > 1) throw new Error(`slot ${slot} is claimed by ${claimants.join(' and ')}, asked ${OWNER_ASKS} times`);
  // No master's own line claims it (met once in the whole suite, never alone): what a node's CLUSTER SLOTS says.
  return masterServingSlot(cluster, slot);
}

/**
 * Moves `slot` to the master `to` (`host:port`), or to the next master after
 * its owner when `to` is omitted; resolves once every master has been told
 * the new owner.
 */
export async function moveSlot(cluster: RedisClusterHandle, slot: number, to?: string, options: SlotMoveOptions = {}): Promise<SlotMove> {
  const { keysPerBatch = 1, pauseMs = 5 } = options;
  const startedAt = performance.now();
  const masters = await mastersOf(cluster);
  const from = await ownerOfSlot(cluster, slot);
  const addresses = [...masters.keys()].sort();
  const destination = to ?? addresses[(addresses.indexOf(from) + 1) % addresses.length] ?? from;
  const source = masters.get(from);
  const target = masters.get(destination);
  if (source === undefined || target === undefined || from === destination) throw new Error(`cannot move slot ${slot} from ${from} to ${destination}`);
  const [targetHost, targetPort] = destination.split(':') as [string, string];

  let keysMoved = 0;
  await withConnection(target.url, (redis) => redis.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id));
  await withConnection(source.url, async (redis) => {
    await redis.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
    await delay(pauseMs);
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const keys = (await redis.call('CLUSTER', 'GETKEYSINSLOT', slot, keysPerBatch)) as string[];
      if (keys.length === 0) return;
      await redis.call('MIGRATE', targetHost, targetPort, '', 0, MIGRATE_TIMEOUT_MS, 'KEYS', ...keys);
      keysMoved += keys.length;
      await delay(pauseMs);
    }
    throw new Error(`slot ${slot} still had keys after ${MAX_BATCHES} batches`);
  });
  for (const address of [destination, from, ...addresses.filter((a) => a !== destination && a !== from)]) {
    await withConnection((masters.get(address) as { url: string }).url, (redis) => redis.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id));
  }
  return { slot, from, to: destination, keysMoved, ms: performance.now() - startedAt };
}
