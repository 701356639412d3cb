import { decideFromSample, type WindowRule, type WindowSample } from '../decision.js';
import type { AttemptOutcome, AttemptRequest, Store } from './store.js';
import { firstIndexAbove, insertSorted } from './sorted-timestamps.js';

interface Entry {
  /** Recorded timestamps, ascending; only the newest `maxInInterval` are kept. */
  readonly timestamps: number[];
  /** When the newest timestamp leaves the window, in microseconds. */
  expiresAt: number;
}

/** Most expired ids reclaimed by one call, so that no single call pays for a large backlog. */
const MAX_RECLAIMED_PER_CALL = 64;

/**
 * The in-process store, used when a limiter has no `client`. State lives in
 * one `Map` kept in order of last write; because every id of a limiter has
 * the same interval, that is also the order of expiry, so each call reclaims
 * the expired ids at the front in amortized constant time. No timer is kept
 * (per id or otherwise), so the process can always exit, and memory stays
 * proportional to the ids active within the last interval.
 */
export class MemoryStore implements Store {
  readonly #entries = new Map<string, Entry>();

  /** How many ids hold state right now (for tests and monitoring). */
  get size(): number {
    return this.#entries.size;
  }

  async attempt({ key, rule, now }: AttemptRequest): Promise<AttemptOutcome> {
    this.#reclaimExpired(now);
    const entry = this.#entries.get(key);
    const timestamps = entry?.timestamps ?? [];
    const start = firstIndexAbove(timestamps, now - rule.intervalUs);
    if (start > 0) timestamps.splice(0, start);
    const decision = decideFromSample(rule, now, sample(timestamps, 0, rule));
    if (decision.recorded) {
      insertSorted(timestamps, now);
      if (timestamps.length > rule.maxInInterval) timestamps.splice(0, timestamps.length - rule.maxInInterval);
    }
    this.#entries.delete(key);
    const newest = timestamps[timestamps.length - 1];
    if (newest !== undefined) this.#entries.set(key, { timestamps, expiresAt: newest + rule.intervalUs });
    return decision;
  }

  async peek({ key, rule, now }: AttemptRequest): Promise<AttemptOutcome> {
    const timestamps = this.#entries.get(key)?.timestamps ?? [];
    return decideFromSample(rule, now, sample(timestamps, firstIndexAbove(timestamps, now - rule.intervalUs), rule));
  }

  async clear(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  #reclaimExpired(now: number): void {
    let reclaimed = 0;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt > now || reclaimed === MAX_RECLAIMED_PER_CALL) return;
      this.#entries.delete(key);
      reclaimed += 1;
    }
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
