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
  /** The adapter of the store's client. */
  readonly adapter: RedisAdapter;
  /** The way this store decides. */
  readonly path: RedisPath;

  constructor(adapter: RedisAdapter, path: RedisPath) {
    this.adapter = adapter;
    this.path = path;
  }

  /** A store on the same client that decides another way (a stack's own, for example with `batch: true`). */
  withPath(path: RedisPath): RedisStore {
    return path === this.path ? this : new RedisStore(this.adapter, path);
  }

  get name(): string {
    return this.adapter.kind;
  }

  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    if (this.path === 'batch') return batcherFor(this.adapter).decide({ tiers, now, dryRun: false, actionId });
    if (this.path === 'script') return decideWithScript(this.adapter, { tiers, now, dryRun: false, actionId });
    if (actionId !== undefined) {
      // Action ids come with each call, so this is the one refusal that cannot be made when the limiter is built.
      throw new UnsupportedError(
        `Action ids need the decide script, and this limiter decides with plain commands (${this.adapter.supportsScripts ? '`useScript: false`' : `${this.adapter.kind} cannot run scripts`})`,
      );
    }
    return attemptWithMulti(this.adapter, tiers[0] as Tier, now as number);
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    if (this.path === 'batch') return batcherFor(this.adapter).decide({ tiers, now, dryRun: true });
    if (now !== undefined) return peekWithMulti(this.adapter, tiers, now);
    return decideWithScript(this.adapter, { tiers, now, dryRun: true });
  }

  async clear(keys: readonly string[]): Promise<void> {
    await this.adapter.transaction(keys.flatMap((key) => [['del', key], ['del', actionRecordsKey(key)]]));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    const member = admittedMember(actionId);
    const replies = await this.adapter.transaction(keys.flatMap((key) => [['zrem', key, member], ['zrem', actionRecordsKey(key), member]]));
    // Every other reply is the key's own.
    return replies.some((reply, i) => i % 2 === 0 && readInteger(reply, 'ZREM') > 0);
  }

  connectionProblem(): ConnectionProblem | undefined {
    return this.adapter.connectionProblem?.();
  }

  sharesKeysWith(other: Store): boolean {
    return other instanceof RedisStore && other.adapter.client === this.adapter.client;
  }

  canDecideWith(other: Store): boolean {
    return this.sharesKeysWith(other);
  }

  slotOwner(key: string): string | undefined {
    return this.adapter.slotOwner?.(key);
  }
}
