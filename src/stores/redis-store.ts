import { UnsupportedError } from '../errors/unsupported-error.js';
import { admittedMember } from '../action-ids.js';
import type { RedisAdapter } from '../redis/adapter.js';
import { readInteger } from '../redis/replies.js';
import { attemptWithMulti, peekWithMulti } from './redis-multi-path.js';
import { decideWithScript } from './redis-script-path.js';
import type { Store, StoreDecision, Tier } from './store.js';

/**
 * The Redis store. It picks, per call, the cheapest way that is exact:
 *
 * - one limiter with `countBlocked: true` and a local clock: the MULTI path
 *   (plain commands, no EVAL permission needed);
 * - anything that must decide before writing (`countBlocked: false`, stacked
 *   tiers, `clock: 'redis'`): the decide script, one EVALSHA;
 * - dry runs: a read-only MULTI, or the script in dry-run mode with the Redis
 *   clock (the time must be read inside Redis).
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
    const [only] = tiers;
    if (actionId === undefined && now !== undefined && tiers.length === 1 && only?.rule.countBlocked) {
      return attemptWithMulti(this.#redis, only, now);
    }
    if (!this.#redis.supportsScripts) {
      throw new UnsupportedError(`Action ids need the decide script, and ${this.#redis.kind} cannot run scripts`);
    }
    return decideWithScript(this.#redis, tiers, now, false, actionId);
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    if (now !== undefined) return peekWithMulti(this.#redis, tiers, now);
    return decideWithScript(this.#redis, tiers, now, true);
  }

  async clear(keys: readonly string[]): Promise<void> {
    await this.#redis.transaction(keys.map((key) => ['del', key]));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    const replies = await this.#redis.transaction(keys.map((key) => ['zrem', key, admittedMember(actionId)]));
    return replies.some((reply) => readInteger(reply, 'ZREM') > 0);
  }

  canDecideWith(other: Store): boolean {
    return other instanceof RedisStore && other.#redis.client === this.#redis.client;
  }
}
