import { decideTiers, type WindowRule, type WindowSample } from '../decision.js';
import { ExpiryQueue } from './expiry-queue.js';
import { firstIndexAbove, insertSorted } from './sorted-timestamps.js';
import type { Store, StoreDecision, Tier } from './store.js';

/** One id's state. */
interface MemoryEntry {
  readonly key: string;
  /** Recorded timestamps, ascending; only the newest `maxInInterval` are kept. */
  readonly timestamps: number[];
  /** When the newest timestamp leaves the window, in microseconds. */
  expiresAt: number;
}

const NO_TIMESTAMPS: readonly number[] = [];

/**
 * The in-process store, one per limiter without a `client`. Each write
 * reclaims a few ids whose window has emptied (see {@link ExpiryQueue}), so
 * memory stays proportional to the ids active within the last interval. No
 * timer is kept, per id or otherwise, so the process can always exit.
 *
 * Decisions are synchronous, so tiers held by several memory stores (a stack
 * of in-memory limiters) are decided together atomically.
 */
export class MemoryStore implements Store {
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #expiry = new ExpiryQueue<MemoryEntry>();
  readonly name = 'memory';
  readonly canDecideBeforeWriting = true;

  /** How many ids hold state right now (for tests and monitoring). */
  get size(): number {
    return this.#entries.size;
  }

  async attempt(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    const at = requireTime(now);
    const stores = tiers.map((tier) => tier.store as MemoryStore);
    const samples = tiers.map((tier, i) => (stores[i] as MemoryStore).#pruneAndSample(tier.key, tier.rule, at));
    const decision = decideTiers(
      tiers.map((tier) => tier.rule),
      at,
      samples,
    );
    decision.tiers.forEach((tierDecision, i) => {
      const tier = tiers[i] as Tier;
      if (tierDecision.recorded) (stores[i] as MemoryStore).#record(tier.key, tier.rule, at);
    });
    return { now: at, tiers: decision.tiers };
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    const at = requireTime(now);
    const samples = tiers.map((tier) => (tier.store as MemoryStore).#sample(tier.key, tier.rule, at));
    const decision = decideTiers(
      tiers.map((tier) => tier.rule),
      at,
      samples,
    );
    return { now: at, tiers: decision.tiers };
  }

  async clear(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.#entries.delete(key);
  }

  canDecideWith(other: Store): boolean {
    return other instanceof MemoryStore;
  }

  /** The sample of an id's window at `now`, without changing anything. */
  #sample(key: string, rule: WindowRule, now: number): WindowSample {
    const timestamps = this.#entries.get(key)?.timestamps ?? NO_TIMESTAMPS;
    return sampleOf(timestamps, firstIndexAbove(timestamps, now - rule.intervalUs), rule);
  }

  /** Drops what left the window (forgetting the id when nothing is left), then samples. */
  #pruneAndSample(key: string, rule: WindowRule, now: number): WindowSample {
    const entry = this.#entries.get(key);
    if (entry === undefined) return sampleOf(NO_TIMESTAMPS, 0, rule);
    const start = firstIndexAbove(entry.timestamps, now - rule.intervalUs);
    if (start === entry.timestamps.length) {
      this.#entries.delete(key);
      return sampleOf(NO_TIMESTAMPS, 0, rule);
    }
    if (start > 0) entry.timestamps.splice(0, start);
    return sampleOf(entry.timestamps, 0, rule);
  }

  /** Records `now`, keeping only the newest `maxInInterval` timestamps. */
  #record(key: string, rule: WindowRule, now: number): void {
    this.#expiry.reclaim(now, (entry) => this.#entries.get(entry.key) === entry, (entry) => this.#entries.delete(entry.key));
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { key, timestamps: [], expiresAt: 0 };
      this.#entries.set(key, entry);
      this.#expiry.add(entry, now + rule.intervalUs);
    }
    const { timestamps } = entry;
    insertSorted(timestamps, now);
    if (timestamps.length > rule.maxInInterval) timestamps.splice(0, timestamps.length - rule.maxInInterval);
    entry.expiresAt = (timestamps[timestamps.length - 1] as number) + rule.intervalUs;
  }
}

function requireTime(now: number | undefined): number {
  if (now === undefined) throw new TypeError('The in-memory store needs the time of each attempt');
  return now;
}

/** The sample of `timestamps[start..]` (the part still in the window) that a decision needs. */
function sampleOf(timestamps: readonly number[], start: number, rule: WindowRule): WindowSample {
  const length = timestamps.length;
  const count = length - start;
  const k = rule.maxInInterval;
  return {
    count,
    newest: count > 0 ? timestamps[length - 1] : undefined,
    kMinus1thNewest: k >= 2 && count >= k - 1 ? timestamps[length - (k - 1)] : undefined,
    kthNewest: count >= k ? timestamps[length - k] : undefined,
  };
}
