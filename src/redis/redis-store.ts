import { UnsupportedError } from '../errors/unsupported-error.js';
import { actionRecordsKey, admittedMember } from '../core/identity.js';
import type { RedisAdapter } from './adapters/adapter.js';
import type { ConnectionProblem } from '../errors/timeout-error.js';
import { readInteger } from './replies.js';
import { attemptWithMulti, peekWithMulti } from './decide/multi-path.js';
import { decideWithScript } from './decide/script-path.js';
import { batcherFor } from './decide/decision-batcher.js';
import type { Store, StoreDecision, Tier } from '../core/store.js';

/**
 * How a Redis store decides, fixed when it is assembled (options/assemble.ts
 * is the one place that chooses):
 *
 * - `'script'`: every attempt is one EVALSHA of the decide script;
 * - `'batch'`: attempts and dry runs go in the next batch of decide script
 *   calls of the client;
 * - `'multi'`: one MULTI of plain commands (`useScript: false`, or a client
 *   without scripts such as redis-mock), for one limiter that counts blocked
 *   attempts, on the caller's clock, without action ids.
 *
 * Outside a batch, a dry run is a read-only MULTI, or the decide script in
 * dry-run mode with the Redis clock (the time must be read inside Redis).
 */
export type RedisPath = 'script' | 'batch' | 'multi';

/** The Redis store: one client, one way to decide. */
export class RedisStore implements Store {
  readonly #redis: RedisAdapter;
  readonly #path: RedisPath;

  constructor(redis: RedisAdapter, path: RedisPath) {
    this.#redis = redis;
    this.#path = path;
  }

  /** The way this store decides. */
  get path(): RedisPath {
    return this.#path;
  }

  /** The adapter of the store's client. */
  get adapter(): RedisAdapter {
    return this.#redis;
  }

  /** A store on the same client that decides another way (a stack's own, for example with `batch: true`). */
  withPath(path: RedisPath): RedisStore {
    return path === this.#path ? this : new RedisStore(this.#redis, path);
  }

  get name(): string {
    return this.#redis.kind;
  }

  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    if (this.#path === 'batch') return batcherFor(this.#redis).decide({ tiers, now, dryRun: false, actionId });
    if (this.#path === 'script') return decideWithScript(this.#redis, { tiers, now, dryRun: false, actionId });
    if (actionId !== undefined) {
      // Action ids come with each call, so this is the one refusal that cannot be made when the limiter is built.
      throw new UnsupportedError(
        `Action ids need the decide script, and this limiter decides with plain commands (${this.#redis.supportsScripts ? '`useScript: false`' : `${this.#redis.kind} cannot run scripts`})`,
      );
    }
    return attemptWithMulti(this.#redis, tiers[0] as Tier, now as number);
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    if (this.#path === 'batch') return batcherFor(this.#redis).decide({ tiers, now, dryRun: true });
    if (now !== undefined) return peekWithMulti(this.#redis, tiers, now);
    return decideWithScript(this.#redis, { tiers, now, dryRun: true });
  }

  async clear(keys: readonly string[]): Promise<void> {
    await this.#redis.transaction(keys.flatMap((key) => [['del', key], ['del', actionRecordsKey(key)]]));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    const member = admittedMember(actionId);
    const replies = await this.#redis.transaction(keys.flatMap((key) => [['zrem', key, member], ['zrem', actionRecordsKey(key), member]]));
    // Every other reply is the key's own.
    return replies.some((reply, i) => i % 2 === 0 && readInteger(reply, 'ZREM') > 0);
  }

  connectionProblem(): ConnectionProblem | undefined {
    return this.#redis.connectionProblem?.();
  }

  sharesKeysWith(other: Store): boolean {
    return other instanceof RedisStore && other.#redis.client === this.#redis.client;
  }

  canDecideWith(other: Store): boolean {
    return this.sharesKeysWith(other);
  }

  slotOwner(key: string): string | undefined {
    return this.#redis.slotOwner?.(key);
  }
}
