import type { MicrosecondClock } from '../../../core/clock.js';
import { nextMember } from '../../../core/identity.js';
import { UnsupportedError } from '../../../errors/unsupported-error.js';
import type { RedisAdapter } from '../../../redis/adapters/adapter.js';
import { HIT_LOG_SCRIPT } from './hit-log-script.js';
import { runScript } from '../../../redis/adapters/run-script.js';
import { callStore } from '../../../resilience/store-call.js';
import {
  BLOCK_KEY_SUFFIX,
  REFUSED_KEY_SUFFIX,
  RULES_KEY_SUFFIX,
  type BlockingCount,
  type BlockingHit,
  type BlockingRule,
  type HitCount,
  type HitLog,
  type HitRule,
  type RecordedHit,
} from './hit-log.js';

/** How long one call may take before it fails with a TimeoutError (the library's default `timeout`). */
const TIMEOUT_MS = 2000;
/** Keys per SCAN step and per DEL in `clearAll`. */
const SCAN_COUNT = 500;

/** Reads the script's `{count, at, blockedUntil}` triples, one per rule. */
function repliesOf(reply: unknown, nowUs: number, rules: readonly HitRule[]): BlockingCount[] {
  if (!Array.isArray(reply) || reply.length !== 3 * rules.length) throw new TypeError(`Unexpected reply from the hit-log script: ${String(reply)}`);
  return rules.map((rule, i) => {
    const [count, at, blockedUntil] = reply.slice(3 * i, 3 * i + 3).map(Number) as [number, number, number];
    return { count, changesAtUs: at < 0 ? undefined : at + rule.windowUs, nowUs, blockedUntilUs: blockedUntil < 0 ? undefined : blockedUntil };
  });
}

/** The Cluster hash tag of a key (what is between its first `{` and the next `}`), or the key when it has none. */
function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** A count without the block field, which only {@link RedisHitLog.hitOrBlock} reports. */
function withoutBlock({ blockedUntilUs: _blockedUntilUs, ...count }: BlockingCount): HitCount {
  return count;
}

/**
 * The hit log on Redis: one script call per hit or read (one round trip), a
 * sorted set per key, and beside it, on the same Cluster slot, its rules key
 * and the sorted set of its refused hits (which exists only while it has some).
 */
export class RedisHitLog implements HitLog {
  readonly #redis: RedisAdapter;
  readonly #clock: MicrosecondClock;

  /** @throws UnsupportedError for a client that cannot run Lua scripts (redis-mock). */
  constructor(redis: RedisAdapter, clock: MicrosecondClock) {
    if (!redis.supportsScripts) {
      throw new UnsupportedError(
        `The HTTP stores run a Lua script on Redis, which a ${redis.kind} client cannot: use ioredis or node-redis, or no client (memory)`,
      );
    }
    this.#redis = redis;
    this.#clock = clock;
  }

  hit(key: string, rule: HitRule): Promise<RecordedHit> {
    const member = nextMember();
    return this.#run([key], [rule], member, false).then(([count]) => ({ ...withoutBlock(count as BlockingCount), member }));
  }

  /**
   * One script call for every key; on a Cluster, one per hash tag (the keys of one tag share a slot), each
   * atomic on its own keys only.
   */
  hitOrBlock(hits: readonly BlockingHit[]): Promise<BlockingCount[]> {
    const tags = new Map<string, number[]>();
    hits.forEach(({ key }, i) => {
      const tag = this.#redis.isCluster ? hashTagOf(key) : '';
      tags.set(tag, [...(tags.get(tag) ?? []), i]);
    });
    const answers: BlockingCount[] = [];
    const member = nextMember();
    const calls = [...tags.values()].map((indexes) =>
      this.#run(
        indexes.map((i) => (hits[i] as BlockingHit).key),
        indexes.map((i) => (hits[i] as BlockingHit).rule),
        member,
        true,
      ).then((counts) => {
        indexes.forEach((i, n) => (answers[i] = counts[n] as BlockingCount));
      }),
    );
    return Promise.all(calls).then(() => answers);
  }

  read(key: string, rule: HitRule): Promise<HitCount> {
    return this.#run([key], [rule], '', false).then(([count]) => withoutBlock(count as BlockingCount));
  }

  /** Removes the member from the log and, were it a refused hit, from the refused key: one MULTI, one round trip. */
  remove(key: string, member: string): Promise<void> {
    const commands = [
      ['zrem', key, member],
      ['zrem', key + REFUSED_KEY_SUFFIX, member],
    ] as const;
    return this.#call(() => this.#redis.transaction(commands), 'Giving back a hit').then(() => undefined);
  }

  clear(key: string): Promise<void> {
    return this.#call(
      () => this.#redis.transaction([['del', key, key + RULES_KEY_SUFFIX, key + REFUSED_KEY_SUFFIX, key + BLOCK_KEY_SUFFIX]]),
      'Clearing a key',
    ).then(() => undefined);
  }

  /**
   * SCANs for the prefix's keys and deletes them, a batch at a time. Not
   * atomic: hits recorded meanwhile may survive. Not on a Cluster, whose keys
   * are spread over nodes that one SCAN does not see.
   */
  async clearAll(prefix: string): Promise<void> {
    if (this.#redis.isCluster)
      throw new UnsupportedError('Resetting every key needs a SCAN of every node, which this store does not do on a Redis Cluster: reset keys one by one');
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    do {
      const [reply] = await this.#call(() => this.#redis.transaction([['scan', cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT]]), 'Resetting every key');
      const [next, keys] = reply as [unknown, unknown[]];
      cursor = String(next);
      if (keys.length > 0) await this.#call(() => this.#redis.transaction([['del', ...keys.map(String)]]), 'Resetting every key');
    } while (cursor !== '0');
  }

  /** One script call on `keys`, each judged by its rule; with `blocking`, each with its block key and length (see the script's header). */
  #run(keys: readonly string[], rules: readonly (HitRule | BlockingRule)[], member: string, blocking: boolean): Promise<BlockingCount[]> {
    const nowUs = this.#clock();
    const scriptKeys: string[] = [];
    const args: (string | number)[] = [nowUs, member, blocking ? 4 : 3];
    keys.forEach((key, i) => {
      const rule = rules[i] as BlockingRule;
      scriptKeys.push(key, key + RULES_KEY_SUFFIX, key + REFUSED_KEY_SUFFIX, ...(blocking ? [key + BLOCK_KEY_SUFFIX] : []));
      args.push(rule.windowUs, rule.limit, ...(blocking ? [rule.blockUs] : []));
    });
    return this.#call(
      () => runScript(this.#redis, HIT_LOG_SCRIPT, scriptKeys, args, (reply) => repliesOf(reply, nowUs, rules)),
      member === '' ? 'Reading a count' : 'Recording a hit',
    );
  }

  #call<T>(operation: () => Promise<T>, what: string): Promise<T> {
    return callStore(operation, TIMEOUT_MS, what, this.#redis.connectionProblem?.bind(this.#redis));
  }
}
