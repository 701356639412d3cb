import { localMicroseconds, type MicrosecondClock } from '../../core/clock.js';
import { KeyBuilder } from '../../core/identity.js';
import { describeValue } from '../../core/check.js';
import { rejectUnknownOptions } from '../../core/check.js';
import { InvalidOptionTypeError } from '../../errors/invalid-option-error.js';
import { adapterFor } from '../../redis/adapters/create-adapter.js';
import type { HitLog } from './hit-log.js';
import { MemoryHitLog } from './memory-hit-log.js';
import { RedisHitLog } from './redis-hit-log.js';

/**
 * The hit log for a store's `client` option: on Redis with a client, else in
 * this process's memory.
 * @throws TypeError when `client` is not an object; UnsupportedError for a client that is not supported or runs no scripts.
 */
export function createHitLog(client: unknown, clock: MicrosecondClock = localMicroseconds): HitLog {
  if (client === undefined) return new MemoryHitLog(clock);
  if (typeof client !== 'object' || client === null) {
    throw new InvalidOptionTypeError(`Expected \`client\` to be a Redis client object, got ${describeValue(client)}`, 'client', client);
  }
  return new RedisHitLog(adapterFor(client), clock);
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

/**
 * Checks that a store's options are an object with only the names it knows,
 * with the same checker and message as every other constructor.
 * @throws TypeError naming the first unknown option.
 */
export function checkOptionNames(options: unknown, known: ReadonlySet<string>): void {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionTypeError(`Expected the options to be an object, got ${describeValue(options)}`, 'options', options);
  }
  rejectUnknownOptions(options, known);
}
