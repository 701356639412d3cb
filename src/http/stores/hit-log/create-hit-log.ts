// The hit log a store's options ask for, and the keys of one namespace in it.

import { localMicroseconds, type MicrosecondClock } from '../../../core/clock.js';
import { KeyBuilder } from '../../../core/identity.js';
import { adapterFor } from '../../../redis/adapters/create-adapter.js';
import type { RedisClient } from '../../../redis/adapters/client-types.js';
import type { HitLog } from './hit-log.js';
import { MemoryHitLog } from './memory-hit-log.js';
import { RedisHitLog } from './redis-hit-log.js';

/**
 * The hit log for a store's `client` option (checked by the store's schema):
 * on Redis with a client, else in this process's memory.
 * @throws UnsupportedError for a client that is not supported or runs no scripts.
 */
export function createHitLog(client: RedisClient | undefined, clock: MicrosecondClock = localMicroseconds): HitLog {
  return client === undefined ? new MemoryHitLog(clock) : new RedisHitLog(adapterFor(client), clock);
}

/** The keys of one namespace, and the prefix they all start with. */
export class HitKeys {
  readonly #keys: KeyBuilder;
  /** What every key of the namespace starts with (for `clearAll`). */
  readonly prefix: string;

  constructor(namespace: string) {
    this.#keys = new KeyBuilder(namespace);
    this.prefix = this.#keys.keyFor('').slice(0, -1);
  }

  /** The key of one client key, as the host library gives it. */
  keyFor(key: string): string {
    return this.#keys.keyFor(key);
  }
}
