import { UnsupportedError } from '../errors/unsupported-error.js';
import { admittedMember } from '../core/identity.js';
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
 * - one limiter with `countBlocked: true` on the caller's clock, without an
 *   action id: the MULTI path (plain commands, no EVAL permission needed),
 *   unless it asked for the script (`useScript`);
 * - anything else that records (`countBlocked: false`, stacked tiers,
 *   `clock: 'redis'`, action ids): one EVALSHA of the decide script;
 * - dry runs: a read-only MULTI, or the decide script in dry-run mode with
 *   the Redis clock (the time must be read inside Redis);
 * - with `batch: true`, every decision and dry run: the decide script, one
 *   call per batch of decisions.
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
    const multiTier = actionId === undefined ? this.#multiTier(tiers, now) : undefined;
    if (multiTier !== undefined) return attemptWithMulti(this.#redis, multiTier, now as number);
    this.#requireScripts(actionId === undefined ? 'This decision needs' : 'Action ids need');
    return decideWithScript(this.#redis, { tiers, now, dryRun: false, actionId });
  }

  /** The one tier an attempt is about when the MULTI path can decide it (no action id is the caller's part). */
  #multiTier(tiers: readonly Tier[], now: number | undefined): Tier | undefined {
    const [only] = tiers;
    return now !== undefined && tiers.length === 1 && only?.rule.countBlocked === true && only.useScript !== true ? only : undefined;
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
    await this.#redis.transaction(keys.map((key) => ['del', key]));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    const replies = await this.#redis.transaction(keys.map((key) => ['zrem', key, admittedMember(actionId)]));
    return replies.some((reply) => readInteger(reply, 'ZREM') > 0);
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
