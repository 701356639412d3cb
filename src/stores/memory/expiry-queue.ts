/** Most queue records one `reclaim` call looks at, so no single call pays for a large backlog. */
const MAX_STEPS_PER_RECLAIM = 64;

/** Compact the array once this many records at its front are spent. */
const COMPACT_AFTER = 1024;

interface QueueRecord<T extends { expiresAt: number }> {
  readonly item: T;
  readonly expiresAt: number;
}

/**
 * A first-in first-out queue of items in order of expiry, reclaimed a few at
 * a time. Items are added once, when they appear; an item whose expiry moved
 * later is noticed when it reaches the front and is queued again with its
 * new expiry, so a busy item costs one record, not one per update. With one
 * interval per store and a clock that moves forward, records are in order of
 * expiry, and `reclaim` stops at the first one that has not expired.
 */
export class ExpiryQueue<T extends { expiresAt: number }> {
  #records: QueueRecord<T>[] = [];
  #head = 0;

  /** Queues an item that appeared with the given expiry. */
  add(item: T, expiresAt: number): void {
    this.#records.push({ item, expiresAt });
  }

  /**
   * Looks at a bounded number of records at the front and removes the items
   * that expired at or before `now`.
   *
   * @param isLive Whether an item is still held (a removed or replaced item's record is dropped).
   * @param remove Removes an expired item from its owner.
   */
  reclaim(now: number, isLive: (item: T) => boolean, remove: (item: T) => void): void {
    for (let steps = 0; steps < MAX_STEPS_PER_RECLAIM && this.#head < this.#records.length; steps += 1) {
      const record = this.#records[this.#head] as QueueRecord<T>;
      if (record.expiresAt > now) break;
      this.#head += 1;
      const { item } = record;
      if (!isLive(item)) continue;
      if (item.expiresAt <= now) remove(item);
      else this.#records.push({ item, expiresAt: item.expiresAt });
    }
    if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#records.length) {
      this.#records = this.#records.slice(this.#head);
      this.#head = 0;
    }
  }
}
