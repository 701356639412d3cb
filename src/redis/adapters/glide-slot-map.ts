// Which master holds each hash slot, as a Valkey GLIDE cluster client's
// cluster says (GLIDE shows no slot map; docs/guides/redis-cluster.md says
// what follows): `CLUSTER SLOTS` read through the client when it is made, and
// at the first lookup once the answer is a second old or a call failed, one
// read at a time. A failed read keeps the last answer.

import type { GlideLikeClient } from './client-types.js';
import { keySlot } from './key-slot.js';

/** How old an answer may get before a lookup has it read again. */
export const SLOT_MAP_MAX_AGE_MS = 1_000;

/** `customCommand` with GLIDE's cluster routing option. */
interface RoutedCalls {
  customCommand(args: string[], options: { route: 'randomNode' }): Promise<unknown>;
}

/** The slot map of one GLIDE cluster client, read with `CLUSTER SLOTS`. */
export class GlideSlotMap {
  readonly #client: RoutedCalls;
  /** The master (`host:port`) of each slot, by slot number; undefined where the last answer named none. */
  #owners: readonly (string | undefined)[] = [];
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  constructor(client: GlideLikeClient) {
    this.#client = client;
    this.#read();
  }

  /** The master that held `key`'s slot when the map was last read; starts a new read when that is too long ago. */
  ownerOf(key: string): string | undefined {
    if (performance.now() - this.#readAt >= SLOT_MAP_MAX_AGE_MS) this.#read();
    return this.#owners[keySlot(key)];
  }

  /** Has the next lookup read the map again (a call failed: the cluster may have changed). */
  markStale(): void {
    this.#readAt = Number.NEGATIVE_INFINITY;
  }

  #read(): void {
    if (this.#reading !== undefined) return;
    const startedAt = performance.now();
    this.#reading = this.#client
      .customCommand(['CLUSTER', 'SLOTS'], { route: 'randomNode' })
      .then(
        (reply) => {
          this.#owners = ownersOf(reply);
          this.#readAt = startedAt;
        },
        () => undefined,
      )
      .finally(() => {
        this.#reading = undefined;
      });
  }
}

/**
 * The master of each slot from a `CLUSTER SLOTS` reply: one entry per range,
 * `[start, end, [host, port, id, …], …replicas]`. Ranges of any other shape
 * are skipped (their slots have no owner until the next read).
 */
export function ownersOf(reply: unknown): (string | undefined)[] {
  const owners: (string | undefined)[] = [];
  if (!Array.isArray(reply)) return owners;
  for (const range of reply as unknown[]) {
    if (!Array.isArray(range)) continue;
    const [start, end, master] = range as unknown[];
    if (typeof start !== 'number' || typeof end !== 'number' || !Array.isArray(master)) continue;
    const [host, port] = master as unknown[];
    if (typeof host !== 'string' || host === '' || (typeof port !== 'number' && typeof port !== 'string')) continue;
    const address = `${host}:${String(port)}`;
    for (let slot = Math.max(0, start); slot <= Math.min(end, 16_383); slot++) owners[slot] = address;
  }
  return owners;
}
