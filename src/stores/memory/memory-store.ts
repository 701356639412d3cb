import { microsecondsToWholeMillisecondsUp } from '../../core/clock.js';
import { admittedMember, blockedMember } from '../../core/identity.js';
import { decideTiers, type RecordedWindow, type Verdict, type WindowRule, type WindowSample } from '../../core/decision-model.js';
import { ExpiryQueue } from './expiry-queue.js';
import { firstIndexAbove, insertSorted } from './sorted-timestamps.js';
import type { Store, StoreDecision, Tier } from '../store.js';

/** One id's state. */
interface MemoryEntry {
  readonly key: string;
  /** Recorded timestamps, ascending; only the newest `maxInInterval` are kept. */
  readonly timestamps: number[];
  /** The member of each timestamp (same index) once an action id has been used on this id; undefined before. */
  members: (string | undefined)[] | undefined;
  /**
   * When the id is forgotten, in wall-clock milliseconds (`Date.now()`):
   * `interval` after its last write, as a Redis key's TTL. Not by the
   * attempts' clock, which an injected clock may move back: the model would
   * then still count what an early reclaim had dropped.
   */
  expiresAt: number;
}

const NO_TIMESTAMPS: readonly number[] = [];
const NOT_BLOCKED: Verdict = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false };

/**
 * The in-process store, one per limiter without a `client`. Each write
 * reclaims a few ids not written for an `interval` of wall-clock time (see
 * {@link ExpiryQueue}), as Redis expires a key, so memory stays proportional
 * to the ids active within the last interval. No timer is kept, per id or
 * otherwise, so the process can always exit.
 *
 * Decisions are synchronous, so tiers held by several memory stores (a stack
 * of in-memory limiters) are decided together atomically, exactly as the
 * decide script does on Redis.
 */
export class MemoryStore implements Store {
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #expiry = new ExpiryQueue<MemoryEntry>();
  readonly name = 'memory';
  readonly canDecideBeforeWriting = true;
  readonly #isLive = (entry: MemoryEntry): boolean => this.#entries.get(entry.key) === entry;
  readonly #forget = (entry: MemoryEntry): void => {
    this.#entries.delete(entry.key);
  };

  /** How many ids hold state right now (for tests and monitoring). */
  get size(): number {
    return this.#entries.size;
  }

  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    const at = requireTime(now);
    const stores = tiers.map(memoryStoreOf);
    tiers.forEach((tier, i) => (stores[i] as MemoryStore).#prune(tier.key, tier.rule, at));
    // What each tier holds afterwards, as stored (an action's earlier record moves rather than adds).
    const recordedWindows = (): RecordedWindow[] => tiers.map((tier, i) => (stores[i] as MemoryStore).#recordedWindow(tier.key, tier.rule));
    if (actionId !== undefined) {
      const admitted = admittedMember(actionId);
      if (tiers.some((tier, i) => (stores[i] as MemoryStore).#indexOf(tier.key, admitted) >= 0)) {
        return { now: at, alreadyAdmitted: true, tiers: recordedWindows().map((after) => ({ verdict: NOT_BLOCKED, after })) };
      }
    }
    const samples = tiers.map((tier, i) => (stores[i] as MemoryStore).#sample(tier.key, tier.rule, at));
    const decision = decideTiers(
      tiers.map((tier) => tier.rule),
      at,
      samples,
    );
    const member = actionId === undefined ? undefined : decision.allowed ? admittedMember(actionId) : blockedMember(actionId);
    decision.tiers.forEach((tierDecision, i) => {
      const tier = tiers[i] as Tier;
      if (tierDecision.recorded) (stores[i] as MemoryStore).#record(tier.key, tier.rule, at, member);
    });
    const afters = recordedWindows();
    return { now: at, alreadyAdmitted: false, tiers: decision.tiers.map((tierDecision, i) => ({ verdict: tierDecision.verdict, after: afters[i] as RecordedWindow })) };
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    const at = requireTime(now);
    const samples = tiers.map((tier) => memoryStoreOf(tier).#sample(tier.key, tier.rule, at));
    const decision = decideTiers(
      tiers.map((tier) => tier.rule),
      at,
      samples,
    );
    return { now: at, alreadyAdmitted: false, tiers: decision.tiers };
  }

  async clear(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.#entries.delete(key);
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    let removed = false;
    for (const key of keys) removed = this.#remove(key, admittedMember(actionId)) || removed;
    return removed;
  }

  sharesKeysWith(other: Store): boolean {
    return other === this;
  }

  canDecideWith(other: Store): boolean {
    return other instanceof MemoryStore;
  }

  /** The sample of an id's window at `now`, without changing anything. */
  #sample(key: string, rule: WindowRule, now: number): WindowSample {
    const timestamps = this.#entries.get(key)?.timestamps ?? NO_TIMESTAMPS;
    return sampleOf(timestamps, firstIndexAbove(timestamps, now - rule.intervalUs), rule);
  }

  /** S' as stored: |S'|, max(S') and its k-th newest (the window was pruned just before). */
  #recordedWindow(key: string, rule: WindowRule): RecordedWindow {
    const timestamps = this.#entries.get(key)?.timestamps ?? NO_TIMESTAMPS;
    const count = timestamps.length;
    return {
      count,
      newest: timestamps[count - 1],
      maxthNewest: count >= rule.maxInInterval ? timestamps[count - rule.maxInInterval] : undefined,
    };
  }

  /** Drops what left the window, forgetting the id when nothing is left. */
  #prune(key: string, rule: WindowRule, now: number): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    const start = firstIndexAbove(entry.timestamps, now - rule.intervalUs);
    if (start === entry.timestamps.length) this.#entries.delete(key);
    else if (start > 0) removeFront(entry, start);
  }

  /** Puts back an entry that a removal just emptied (and so dropped), to record into it. */
  #restore(entry: MemoryEntry): MemoryEntry {
    this.#entries.set(entry.key, entry);
    this.#expiry.add(entry, entry.expiresAt);
    return entry;
  }

  #indexOf(key: string, member: string): number {
    return this.#entries.get(key)?.members?.indexOf(member) ?? -1;
  }

  /** Removes one member; true when it was there. */
  #remove(key: string, member: string): boolean {
    const entry = this.#entries.get(key);
    const index = entry?.members?.indexOf(member) ?? -1;
    if (entry === undefined || index < 0) return false;
    entry.timestamps.splice(index, 1);
    entry.members?.splice(index, 1);
    if (entry.timestamps.length === 0) this.#entries.delete(key);
    return true;
  }

  /**
   * Records `now` (with its member, if any), keeping only the newest
   * `maxInInterval` timestamps, and pushes back when the id is forgotten.
   */
  #record(key: string, rule: WindowRule, now: number, member: string | undefined): void {
    const wallMs = Date.now();
    const expiresAt = wallMs + microsecondsToWholeMillisecondsUp(rule.intervalUs);
    this.#expiry.reclaim(wallMs, this.#isLive, this.#forget);
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { key, timestamps: [], members: undefined, expiresAt };
      this.#entries.set(key, entry);
      this.#expiry.add(entry, expiresAt);
    }
    if (member !== undefined && entry.members === undefined) entry.members = entry.timestamps.map(() => undefined);
    if (actionIdOf(member) !== undefined) {
      // An action is recorded once: its earlier blocked record moves (or becomes the admitted one).
      this.#remove(key, blockedMember(actionIdOf(member) as string));
      entry = this.#entries.get(key) ?? this.#restore(entry);
    }
    const index = insertSorted(entry.timestamps, now);
    entry.members?.splice(index, 0, member);
    if (entry.timestamps.length > rule.maxInInterval) removeFront(entry, entry.timestamps.length - rule.maxInInterval);
    entry.expiresAt = expiresAt;
  }
}

/** The action id of a member that has one. */
function actionIdOf(member: string | undefined): string | undefined {
  return member === undefined ? undefined : member.slice(1);
}

function removeFront(entry: MemoryEntry, count: number): void {
  entry.timestamps.splice(0, count);
  entry.members?.splice(0, count);
}

/** The memory store that holds a tier (a stack of in-memory limiters has one per tier). */
function memoryStoreOf(tier: Tier): MemoryStore {
  if (tier.store instanceof MemoryStore) return tier.store;
  throw new TypeError(`The in-memory store cannot decide a tier held by ${tier.store.name}`);
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
