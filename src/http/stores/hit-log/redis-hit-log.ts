import type { MicrosecondClock } from '../../../core/clock.js';
import { nextMember } from '../../../core/identity.js';
import { UnsupportedError } from '../../../errors/unsupported-error.js';
import type { RedisAdapter } from '../../../redis/adapters/adapter.js';
import { HIT_LOG_SCRIPT } from '../../../redis/scripts/hit-log-script.js';
import { runScript } from '../../../redis/scripts/run-script.js';
import { callStore } from '../../../resilience/store-call.js';
import { BLOCK_KEY_SUFFIX, RULES_KEY_SUFFIX, type BlockingCount, type BlockingRule, type HitCount, type HitLog, type HitRule, type RecordedHit } from './hit-log.js';

/** How long one call may take before it fails with a TimeoutError (the library's default `timeout`). */
const TIMEOUT_MS = 2000;
/** Keys per SCAN step and per DEL in `clearAll`. */
const SCAN_COUNT = 500;

/** Reads the script's `{count, at, blockedUntil}` reply. */
function replyOf(reply: unknown, nowUs: number, rule: HitRule): BlockingCount {
  if (!Array.isArray(reply) || reply.length !== 3) throw new TypeError(`Unexpected reply from the hit-log script: ${String(reply)}`);
  const count = Number(reply[0]);
  const at = Number(reply[1]);
  const blockedUntil = Number(reply[2]);
  return { count, changesAtUs: at < 0 ? undefined : at + rule.windowUs, nowUs, blockedUntilUs: blockedUntil < 0 ? undefined : blockedUntil };
}

/** A count without the block field, which only {@link RedisHitLog.hitOrBlock} reports. */
function withoutBlock({ blockedUntilUs: _blockedUntilUs, ...count }: BlockingCount): HitCount {
  return count;
}

/**
 * The hit log on Redis: one script call per hit or read (one round trip), a
 * sorted set per key and its rules key beside it, on the same Cluster slot.
 */
export class RedisHitLog implements HitLog {
  readonly #redis: RedisAdapter;
  readonly #clock: MicrosecondClock;

  /** @throws UnsupportedError for a client that cannot run Lua scripts (redis-mock). */
  constructor(redis: RedisAdapter, clock: MicrosecondClock) {
    if (!redis.supportsScripts) {
      throw new UnsupportedError(`The HTTP stores run a Lua script on Redis, which a ${redis.kind} client cannot: use ioredis or node-redis, or no client (memory)`);
    }
    this.#redis = redis;
    this.#clock = clock;
  }

  hit(key: string, rule: HitRule): Promise<RecordedHit> {
    const member = nextMember();
    return this.#run(key, rule, member).then((count) => ({ ...withoutBlock(count), member }));
  }

  hitOrBlock(key: string, rule: BlockingRule): Promise<BlockingCount> {
    return this.#run(key, rule, nextMember(), rule.blockUs);
  }

  read(key: string, rule: HitRule): Promise<HitCount> {
    return this.#run(key, rule, '').then(withoutBlock);
  }

  remove(key: string, member: string): Promise<void> {
    return this.#call(() => this.#redis.transaction([['zrem', key, member]]), 'Giving back a hit').then(() => undefined);
  }

  clear(key: string): Promise<void> {
    return this.#call(() => this.#redis.transaction([['del', key, key + RULES_KEY_SUFFIX, key + BLOCK_KEY_SUFFIX]]), 'Clearing a key').then(() => undefined);
  }

  /**
   * SCANs for the prefix's keys and deletes them, a batch at a time. Not
   * atomic: hits recorded meanwhile may survive. Not on a Cluster, whose keys
   * are spread over nodes that one SCAN does not see.
   */
  async clearAll(prefix: string): Promise<void> {
    if (this.#redis.isCluster) throw new UnsupportedError('Resetting every key needs a SCAN of every node, which this store does not do on a Redis Cluster: reset keys one by one');
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [reply] = await this.#call(() => this.#redis.transaction([['scan', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT]]), 'Resetting every key');
      const [next, keys] = reply as [unknown, unknown[]];
      cursor = String(next);
      if (keys.length > 0) await this.#call(() => this.#redis.transaction([['del', ...keys.map(String)]]), 'Resetting every key');
    } while (cursor !== '0');
  }

  /** One script call; with `blockUs`, the block key and the block's length go with it (see the script's header). */
  #run(key: string, rule: HitRule, member: string, blockUs?: number): Promise<BlockingCount> {
    const nowUs = this.#clock();
    const keys = [key, key + RULES_KEY_SUFFIX];
    const args: (string | number)[] = [nowUs, rule.windowUs, rule.limit, member];
    if (blockUs !== undefined) {
      keys.push(key + BLOCK_KEY_SUFFIX);
      args.push(blockUs);
    }
    return this.#call(
      () => runScript(this.#redis, HIT_LOG_SCRIPT, keys, args, (reply) => replyOf(reply, nowUs, rule)),
      member === '' ? 'Reading a count' : 'Recording a hit',
    );
  }

  #call<T>(operation: () => Promise<T>, what: string): Promise<T> {
    return callStore(operation, TIMEOUT_MS, what, this.#redis.connectionProblem?.bind(this.#redis));
  }
}
