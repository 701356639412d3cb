import type { MicrosecondClock } from '../../../core/clock.js';
import { nextMember } from '../../../core/identity.js';
import { countOf, type BlockingCount, type BlockingHit, type HitCount, type HitLog, type HitRule, type RecordedHit } from './hit-log.js';

/** One key's hits, oldest first, and what any rule used on it needs kept. */
interface Entry {
  readonly times: number[];
  readonly members: string[];
  /** Per hit: whether it was refused (over its rule's limit) when recorded. */
  readonly refused: boolean[];
  /** How many of the hits were refused. */
  refusedCount: number;
  /** The largest window any rule recording on the key used (µs). */
  keptWindowUs: number;
  /** The largest limit + 1 any rule recording on the key used. */
  keptCount: number;
  /** When the key's newest hit leaves its largest window: the key is forgotten then (as the Redis keys expire). */
  expiresAtUs: number;
}

/**
 * The hit log in this process's memory: the same steps as the Lua script, on
 * arrays. Bounded under a flood: a key holds at most the largest limit + 1 of
 * its rules of each kind, admitted and refused (see hit-log.ts), and a key is
 * dropped only once its largest window has passed since its last hit (never
 * while it holds a hit some rule still counts).
 */
export class MemoryHitLog implements HitLog {
  /** Keys in the order of their last hit, so the stale ones are at the front. */
  readonly #entries = new Map<string, Entry>();
  /** The end of each key's block (µs), in the order the blocks started (as the Redis block keys expire). */
  readonly #blocks = new Map<string, number>();
  readonly #clock: MicrosecondClock;

  constructor(clock: MicrosecondClock) {
    this.#clock = clock;
  }

  hit(key: string, rule: HitRule): Promise<RecordedHit> {
    return Promise.resolve(this.#record(key, rule, this.#clock()));
  }

  hitOrBlock(hits: readonly BlockingHit[]): Promise<BlockingCount[]> {
    const nowUs = this.#clock();
    this.#sweepBlocks(nowUs);
    // Every key judged before any is written: a block that lasts, else the window's count against the limit.
    const judged = hits.map(({ key, rule }) => {
      const endsUs = this.#blocks.get(key);
      if (endsUs !== undefined && endsUs > nowUs) return { key, rule, blockedUntilUs: endsUs };
      const entry = this.#kept(key, rule, nowUs);
      return { key, rule, entry, refused: countOf(entry.times, nowUs, rule).count >= rule.limit };
    });
    const admitted = judged.every(({ entry, refused }) => entry !== undefined && !refused);
    return Promise.resolve(
      judged.map(({ key, rule, entry, refused, blockedUntilUs }) => {
        if (entry === undefined) return { ...countOf(this.#live(key, nowUs)?.times ?? [], nowUs, rule), blockedUntilUs };
        this.#blocks.delete(key);
        if (admitted) this.#insert(entry, nowUs, nextMember(), false);
        if (!refused) return { ...countOf(entry.times, nowUs, rule), blockedUntilUs: undefined };
        const endsUs = rule.blockUs > 0 ? nowUs + rule.blockUs : undefined;
        if (endsUs !== undefined) this.#blocks.set(key, endsUs);
        return { ...countOf(entry.times, nowUs, rule), count: rule.limit + 1, blockedUntilUs: endsUs };
      }),
    );
  }

  /** Records a hit for `key` at `nowUs` and answers as {@link hit}. */
  #record(key: string, rule: HitRule, nowUs: number): RecordedHit {
    const entry = this.#kept(key, rule, nowUs);
    const member = nextMember();
    this.#insert(entry, nowUs, member, countOf(entry.times, nowUs, rule).count >= rule.limit);
    return { ...countOf(entry.times, nowUs, rule), member };
  }

  /**
   * The entry of `key` once `rule` is among what it keeps, trimmed of the hits past its largest window, and
   * marked as hit at `nowUs` (its expiry pushed back, moved to the end of the order).
   */
  #kept(key: string, rule: HitRule, nowUs: number): Entry {
    this.#sweep(nowUs);
    const entry = this.#live(key, nowUs) ?? { times: [], members: [], refused: [], refusedCount: 0, keptWindowUs: 0, keptCount: 0, expiresAtUs: 0 };
    entry.keptWindowUs = Math.max(entry.keptWindowUs, rule.windowUs);
    entry.keptCount = Math.max(entry.keptCount, rule.limit + 1);
    let gone = 0;
    while (gone < entry.times.length && (entry.times[gone] as number) <= nowUs - entry.keptWindowUs) gone += 1;
    entry.times.splice(0, gone);
    entry.members.splice(0, gone);
    entry.refusedCount -= entry.refused.splice(0, gone).filter(Boolean).length;
    entry.expiresAtUs = nowUs + entry.keptWindowUs;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  /**
   * Adds a hit at `nowUs` (after any from another clock's future), admitted or `refused`, keeping the newest
   * `keptCount` of its kind: dropping the oldest refused hit never touches an admitted one (see hit-log.ts).
   */
  #insert(entry: Entry, nowUs: number, member: string, refused: boolean): void {
    let at = entry.times.length;
    while (at > 0 && (entry.times[at - 1] as number) > nowUs) at -= 1; // another clock's hit from the future stays after
    entry.times.splice(at, 0, nowUs);
    entry.members.splice(at, 0, member);
    entry.refused.splice(at, 0, refused);
    if (refused) entry.refusedCount += 1;
    const ofKind = (): number => (refused ? entry.refusedCount : entry.times.length - entry.refusedCount);
    while (ofKind() > entry.keptCount) drop(entry, entry.refused.indexOf(refused));
  }

  read(key: string, rule: HitRule): Promise<HitCount> {
    const nowUs = this.#clock();
    return Promise.resolve(countOf(this.#live(key, nowUs)?.times ?? [], nowUs, rule));
  }

  remove(key: string, member: string): Promise<void> {
    const entry = this.#entries.get(key);
    const at = entry === undefined ? -1 : entry.members.indexOf(member);
    if (entry !== undefined && at >= 0) drop(entry, at);
    return Promise.resolve();
  }

  clear(key: string): Promise<void> {
    this.#entries.delete(key);
    this.#blocks.delete(key);
    return Promise.resolve();
  }

  clearAll(prefix: string): Promise<void> {
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
    for (const key of this.#blocks.keys()) if (key.startsWith(prefix)) this.#blocks.delete(key);
    return Promise.resolve();
  }

  /** The entry of `key` unless it has expired (an expired one is forgotten). */
  #live(key: string, nowUs: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expiresAtUs > nowUs) return entry;
    this.#entries.delete(key);
    return undefined;
  }

  /** Forgets every block that has ended (blocks of one rule end in the order they started; a longer one may hold a few back). */
  #sweepBlocks(nowUs: number): void {
    for (const [key, endsUs] of this.#blocks) {
      if (endsUs > nowUs) return;
      this.#blocks.delete(key);
    }
  }

  /** Forgets expired keys at the front (the least recently hit), stopping at the first live one. */
  #sweep(nowUs: number): void {
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAtUs > nowUs) return;
      this.#entries.delete(key);
    }
  }
}

/** Removes the hit at index `at` of `entry`. */
function drop(entry: Entry, at: number): void {
  entry.times.splice(at, 1);
  entry.members.splice(at, 1);
  const [refused] = entry.refused.splice(at, 1);
  if (refused === true) entry.refusedCount -= 1;
}
