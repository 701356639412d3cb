// The hit log behind the stores for express-rate-limit and @fastify/rate-limit.
// Those libraries count hits and compare the count with each request's own
// limit themselves, keeping one counter per key whatever rule a request has.
// The log does the same on an exact rolling window: every request to a key is
// one hit (blocked ones too), and a request under the rule (window, limit) is
// answered with the hits of the key in its window, capped at limit + 1, and
// when that changes. What a key keeps is trimmed by the largest window and the
// largest limit + 1 that any rule has used on it, never by a smaller rule.
//
// A hit may be given back (`remove`, express-rate-limit's `decrement`), and
// only its own record goes: so a key keeps two kinds of hits apart. An
// admitted hit (its window had room for it) is kept while it is in the key's
// largest window: under one rule a window never holds more than `limit` of
// them, so the bound of the newest largest-limit + 1 admitted hits never
// drops one a decision counts. A refused hit (over its rule's limit) is kept
// among the newest largest-limit + 1 refused hits only: what a flood adds is
// bounded, and the oldest refused hit goes first. Dropping a refused hit
// never frees an admitted slot (the admitted hits are all still there), and
// its give-back then removes nothing, since its record is gone already. The
// count is unchanged by the bound: a dropped hit in a window means the
// limit + 1 newer hits of its kind are in it too.
// Under blocking rules (the NestJS throttler storage's), one request is judged
// on one or more keys together and recorded only when every key admits it:
// one that would take a key's window over its limit is refused and starts a
// block of that key, during which every request to it is refused and not
// recorded.
// The same steps run in memory (memory-hit-log.ts) and in one Lua script on
// Redis (redis-hit-log.ts, hit-log-script.ts).

/** The rule one request is judged by. */
export interface HitRule {
  /** The window, in microseconds (>= 1). */
  readonly windowUs: number;
  /** The most hits the window may hold with this request admitted (>= 0). */
  readonly limit: number;
}

/** A rule that records admitted requests only, and blocks: a request over the limit refuses the key's requests for a while. */
export interface BlockingRule extends HitRule {
  /** How long a block lasts, in microseconds (>= 0; 0: no block, the request over the limit is only refused). */
  readonly blockUs: number;
}

/** One key of a request judged under blocking rules, and its rule. */
export interface BlockingHit {
  readonly key: string;
  readonly rule: BlockingRule;
}

/** What the log answers for one request. */
export interface HitCount {
  /** The hits in the window (the recorded one included), capped at `limit + 1`. */
  readonly count: number;
  /**
   * When this changes, in microseconds since the epoch; undefined when the
   * window is empty. While the window has room (this hit included), when its
   * oldest hit leaves; else when a request would be admitted again. A read
   * answers as the hit it did not record would have been answered.
   */
  readonly changesAtUs: number | undefined;
  /** The moment the answer is for, in microseconds since the epoch. */
  readonly nowUs: number;
}

/** One recorded hit, to be given back with {@link HitLog.remove}. */
export interface RecordedHit extends HitCount {
  /** The member the hit was recorded as. */
  readonly member: string;
}

/** What the log answers for one request under a {@link BlockingRule}. */
export interface BlockingCount extends HitCount {
  /**
   * The end of the block that refuses this request (one that was on, or one
   * this request started), in microseconds since the epoch; undefined when
   * no block refuses it. While a block lasts nothing is recorded, and the
   * count is read as by {@link HitLog.read}.
   */
  readonly blockedUntilUs: number | undefined;
}

/** A log of hits per key, in memory or on Redis; keys are built by the caller. */
export interface HitLog {
  /** Records a hit for `key` now, judged by `rule`. */
  hit(key: string, rule: HitRule): Promise<RecordedHit>;
  /**
   * Judges one request on every key of `hits` (distinct keys) at one moment,
   * atomically, and records it on every key when every key admits it: no
   * block of the key lasts, and its window holds fewer than `rule.limit`
   * hits. Otherwise nothing is recorded: a key refusing by the count answers
   * `count = limit + 1` and, when `rule.blockUs > 0`, starts a block; the
   * others answer their count as {@link read} does. One answer per key, in order.
   */
  hitOrBlock(hits: readonly BlockingHit[]): Promise<BlockingCount[]>;
  /** Reads the count of `key` under `rule`, writing nothing. */
  read(key: string, rule: HitRule): Promise<HitCount>;
  /**
   * Removes one recorded hit, the one recorded as `member` and no other;
   * nothing happens when it has left already, or was a refused hit dropped
   * by the bound on refused hits (which freed no admitted slot).
   */
  remove(key: string, member: string): Promise<void>;
  /** Forgets every hit of `key`. */
  clear(key: string): Promise<void>;
  /** Forgets every hit of every key that starts with `prefix`. */
  clearAll(prefix: string): Promise<void>;
}

/** The suffix of a key's rules key (after the closing `}` of the key's hash tag, so on the same Cluster slot). */
export const RULES_KEY_SUFFIX = ':rules';
/** The suffix of a key's block key (beside the rules key, on the same Cluster slot). */
export const BLOCK_KEY_SUFFIX = ':block';
/** The suffix of a key's refused-hits key: the refused hits of the log again, so they can be bounded apart (same Cluster slot). */
export const REFUSED_KEY_SUFFIX = ':refused';

/**
 * The answer for sorted timestamps `times` (ascending, already trimmed),
 * exactly as the Lua script computes it (see its header): the hits in the
 * window, and when that changes. While the window has room (fewer than
 * `limit`), when its oldest hit leaves; else when a request would be admitted
 * again: when the `limit`-th newest hit leaves (every hit counts, refused ones
 * too). A read and a hit answer alike: the same log, the same wait.
 */
export function countOf(times: readonly number[], nowUs: number, rule: HitRule): HitCount {
  const from = nowUs - rule.windowUs;
  let low = 0;
  let high = times.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((times[middle] as number) <= from) low = middle + 1;
    else high = middle;
  }
  const count = Math.min(times.length - low, rule.limit + 1);
  const k = Math.max(1, Math.min(count, rule.limit));
  const changesAtUs = count > 0 ? times[times.length - k] : undefined;
  return { count, changesAtUs: changesAtUs === undefined ? undefined : changesAtUs + rule.windowUs, nowUs };
}
