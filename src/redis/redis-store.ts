import { UnsupportedError } from '../errors/unsupported-error.js';
import { actionRecordsKey, admittedMember } from '../core/identity.js';
import type { RedisAdapter } from './adapters/adapter.js';
import type { ConnectionProblem } from '../errors/timeout-error.js';
import { readInteger } from './replies.js';
import { attemptWithMulti, peekWithMulti } from './multi-path.js';
import { decideWithScript } from './script-path.js';
import { batcherFor } from './decision-batcher.js';
import type { Store, StoreDecision, Tier } from '../stores/store.js';

/**
 * The Redis store. One way per mode:
 *
 * - every attempt, by default: one EVALSHA of the decide script, wherever
 *   the client runs scripts (or one per batch of decisions with
 *   `batch: true`);
 * - `useScript: false`, or a client without scripts (redis-mock): one MULTI
 *   of plain commands, for what can be decided without a script (one
 *   limiter that counts blocked attempts, on the caller's clock, without
 *   action ids);
 * - dry runs: a read-only MULTI, or the decide script in dry-run mode with
 *   the Redis clock (the time must be read inside Redis) or `batch: true`.
 */
export class RedisStore implements Store {
  readonly #redis: RedisAdapter;

  constructor(redis: RedisAdapter) {
    this.#redis = redis;
  }

  get name(): string {
    return this.#redis.kind;
  }

  get canDecideBeforeWriting(): boolean {
    return this.#redis.supportsScripts;
  }

  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    if (tiers[0]?.batch === true) return batcherFor(this.#redis).decide({ tiers, now, dryRun: false, actionId });
    const multiTier = this.#multiTier(tiers, now);
    if (multiTier !== undefined) {
      if (actionId !== undefined) {
        throw new UnsupportedError(
          `Action ids need the decide script, and this limiter decides with plain commands (${this.#redis.supportsScripts ? '`useScript: false`' : `${this.#redis.kind} cannot run scripts`})`,
        );
      }
      return attemptWithMulti(this.#redis, multiTier, now as number);
    }
    this.#requireScripts('This decision needs');
    return decideWithScript(this.#redis, { tiers, now, dryRun: false, actionId });
  }

  /**
   * The one tier an attempt is about when the MULTI path decides it: asked
   * for with `useScript: false`, or the only way on a client without
   * scripts; and only for one tier that counts blocked attempts, on the
   * caller's clock.
   */
  #multiTier(tiers: readonly Tier[], now: number | undefined): Tier | undefined {
    const [only] = tiers;
    if (only === undefined || tiers.length !== 1 || now === undefined || !only.rule.countBlocked) return undefined;
    return only.useScript === false || !this.#redis.supportsScripts ? only : undefined;
  }

  #requireScripts(what: string): void {
    if (!this.#redis.supportsScripts) throw new UnsupportedError(`${what} a Lua script, and ${this.#redis.kind} cannot run scripts`);
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    if (tiers[0]?.batch === true) return batcherFor(this.#redis).decide({ tiers, now, dryRun: true });
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
}
