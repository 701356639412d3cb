import { decideFromSample, type WindowRule, type WindowSample } from '../decision.js';
import type { AttemptOutcome, AttemptRequest, Store } from './store.js';
import { firstIndexAbove, insertSorted } from './sorted-timestamps.js';
import { ExpiryQueue } from './expiry-queue.js';

/** One id's state. */
export interface MemoryEntry {
  readonly key: string;
  /** Recorded timestamps, ascending; only the newest `maxInInterval` are kept. */
  readonly timestamps: number[];
  /** When the newest timestamp leaves the window, in microseconds. */
  expiresAt: number;
}

/**
 * The in-process store, used when a limiter has no `client`. Each call
 * reclaims a few ids whose window has emptied (see {@link ExpiryQueue}), so
 * memory stays proportional to the ids active within the last interval. No
 * timer is kept, per id or otherwise, so the process can always exit.
 */
export class MemoryStore implements Store {
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #expiry = new ExpiryQueue<MemoryEntry>();

  /** How many ids hold state right now (for tests and monitoring). */
  get size(): number {
    return this.#entries.size;
  }

  async attempt({ key, rule, now }: AttemptRequest): Promise<AttemptOutcome> {
    this.#expiry.reclaim(now, (entry) => this.#entries.get(entry.key) === entry, (entry) => this.#entries.delete(entry.key));
    let entry = this.#entries.get(key);
    const timestamps = entry?.timestamps ?? [];
    const start = firstIndexAbove(timestamps, now - rule.intervalUs);
    if (start > 0) timestamps.splice(0, start);
    const decision = decideFromSample(rule, now, sample(timestamps, 0, rule));
    if (decision.recorded) {
      insertSorted(timestamps, now);
      if (timestamps.length > rule.maxInInterval) timestamps.splice(0, timestamps.length - rule.maxInInterval);
    }
    const newest = timestamps[timestamps.length - 1];
    if (newest === undefined) {
      this.#entries.delete(key);
    } else if (entry === undefined) {
      entry = { key, timestamps, expiresAt: newest + rule.intervalUs };
      this.#entries.set(key, entry);
      this.#expiry.add(entry, entry.expiresAt);
    } else {
      entry.expiresAt = newest + rule.intervalUs;
    }
    return decision;
  }

  async peek({ key, rule, now }: AttemptRequest): Promise<AttemptOutcome> {
    const timestamps = this.#entries.get(key)?.timestamps ?? [];
    return decideFromSample(rule, now, sample(timestamps, firstIndexAbove(timestamps, now - rule.intervalUs), rule));
  }

  async clear(key: string): Promise<void> {
    this.#entries.delete(key);
  }
}

/** The sample of `timestamps[start..]` (the part still in the window) that a decision needs. */
function sample(timestamps: readonly number[], start: number, rule: WindowRule): WindowSample {
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
