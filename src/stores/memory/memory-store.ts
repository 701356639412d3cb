import { MAX_SETTLED_WEIGHT, settlementTooHeavy } from '../../core/bounds.js';
import { localMicroseconds } from '../../core/clock.js';
import { admittedMember, blockedMember } from '../../core/identity.js';
import {
  decideTiers,
  forgetUpTo,
  retentionUs,
  weighedWindow,
  weightOn,
  type RecordedWindow,
  type Verdict,
  type WindowRule,
  type WindowSample,
} from '../../core/decision-model.js';
import { ExpiryQueue } from './expiry-queue.js';
import { keepWhatDecisionsNeed, type RecordedSet } from './flood-bound.js';
import type { Store, StoreDecision, Tier } from '../../core/store.js';

/** One id's state, kept (possibly empty) until it expires, so that clearing and writing again reuses it. */
interface MemoryEntry extends RecordedSet {
  readonly key: string;
  /**
   * When the id is forgotten, in microseconds of this process's clock (the
   * local clock decisions read by default): `interval + inFlight` after its
   * last write, as a Redis key's TTL. Not by the attempts' own stamps, which
   * an injected clock may move back: the model would then still count what
   * an early reclaim had dropped.
   */
  expiresAt: number;
}

const NO_TIMESTAMPS: readonly number[] = [];
const NOT_BLOCKED: Verdict = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false };

/**
 * The in-process store, one per limiter without a `client` (docs/guides/how-it-works-on-redis.md,
 * "The in-memory store"): each write reclaims a few expired ids (see
 * {@link ExpiryQueue}), and no timer is kept. Decisions are synchronous, so
 * the tiers of a stack of in-memory limiters are decided together atomically.
 */
export class MemoryStore implements Store {
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #expiry = new ExpiryQueue<MemoryEntry>();
  readonly name = 'memory';
  readonly #isLive = (entry: MemoryEntry): boolean => this.#entries.get(entry.key) === entry;
  readonly #forget = (entry: MemoryEntry): void => {
    this.#entries.delete(entry.key);
  };

  /** How many ids hold state right now, emptied ones included until they expire (for tests and monitoring). */
  get size(): number {
    return this.#entries.size;
  }

  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string, cost = 1, singleUse = false): Promise<StoreDecision> {
    const at = requireTime(now);
    const wallUs = localMicroseconds();
    const stores = tiers.map(memoryStoreOf);
    // Expired ids go first, so the whole decision sees one state of each key.
    stores.forEach((store, i) => {
      if (stores.indexOf(store) === i) store.#expiry.reclaim(wallUs, store.#isLive, store.#forget);
    });
    const entries = tiers.map((tier, i) => (stores[i] as MemoryStore).#pruned(tier.key, tier.rule, at, wallUs));
    if (actionId !== undefined) {
      const admitted = admittedMember(actionId);
      if (entries.some((entry, i) => entry !== undefined && inWindow(entry, (tiers[i] as Tier).rule, at).includes(admitted))) {
        return {
          now: at,
          alreadyAdmitted: true,
          tiers: tiers.map((tier, i) => ({ verdict: NOT_BLOCKED, after: recordedWindow(entries[i], tier.rule, at, cost) })),
        };
      }
    }
    const rules = tiers.map((tier) => tier.rule);
    const decision = decideTiers(
      rules,
      at,
      entries.map((entry, i) => windowSample(entry, rules[i] as WindowRule, at, cost)),
      cost,
    );
    // A blocked attempt with a single-use action id is recorded as one without an action id: nothing will retry it.
    const recordedId = decision.allowed || !singleUse ? actionId : undefined;
    const member = recordedId === undefined ? undefined : decision.allowed ? admittedMember(recordedId) : blockedMember(recordedId);
    return {
      now: at,
      alreadyAdmitted: false,
      tiers: decision.tiers.map((tierDecision, i) => {
        const tier = tiers[i] as Tier;
        if (!tierDecision.recorded) return tierDecision;
        // The model's S' holds, but where this action's earlier blocked record was replaced: the model cannot know it was there.
        const replaced = (stores[i] as MemoryStore).#record(tier, at, member, recordedId, weightOn(tier.rule, cost), wallUs);
        return replaced === undefined ? tierDecision : { verdict: tierDecision.verdict, after: replaced };
      }),
    };
  }

  async peek(tiers: readonly Tier[], now: number | undefined, cost = 1): Promise<StoreDecision> {
    const at = requireTime(now);
    const wallUs = localMicroseconds();
    const samples = tiers.map((tier) => windowSample(memoryStoreOf(tier).#live(tier.key, wallUs), tier.rule, at, cost));
    return {
      now: at,
      alreadyAdmitted: false,
      tiers: decideTiers(
        tiers.map((tier) => tier.rule),
        at,
        samples,
        cost,
      ).tiers,
    };
  }

  async settle(tiers: readonly Tier[], now: number | undefined, actionId: string, cost: number): Promise<boolean> {
    const at = requireTime(now);
    const wallUs = localMicroseconds();
    const member = admittedMember(actionId);
    // First what each tier would change (nothing changes unless every tier can take it), then the changes.
    const changes: { weights: number[]; index: number }[] = [];
    for (const tier of tiers) {
      const entry = memoryStoreOf(tier).#live(tier.key, wallUs);
      const index = entry?.members?.indexOf(member) ?? -1;
      if (entry?.weights === undefined || index < 0 || (entry.timestamps[index] as number) <= at - tier.rule.intervalUs) continue;
      const total = entry.weights.reduce((sum, weight) => sum + weight, 0);
      if (total - (entry.weights[index] as number) + cost > MAX_SETTLED_WEIGHT) throw settlementTooHeavy([tier.key], actionId, cost);
      changes.push({ weights: entry.weights, index });
    }
    for (const { weights, index } of changes) weights[index] = cost;
    return changes.length > 0;
  }

  async clear(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const entry = this.#entries.get(key);
      if (entry !== undefined) empty(entry);
    }
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    const wallUs = localMicroseconds();
    let removed = false;
    for (const key of keys) {
      const entry = this.#live(key, wallUs);
      if (entry !== undefined) removed = removeMember(entry, admittedMember(actionId)) || removed;
    }
    return removed;
  }

  sharesKeysWith(other: Store): boolean {
    return other === this;
  }

  canDecideWith(other: Store): boolean {
    return other instanceof MemoryStore;
  }

  /** The entry of `key`, unless it has expired by this process's clock (it is then forgotten, as Redis forgets a key past its TTL). */
  #live(key: string, wallUs: number): MemoryEntry | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.expiresAt > wallUs) return entry;
    this.#entries.delete(key);
    return undefined;
  }

  /**
   * The entry of `key` after forgetting what no call still in flight can count (docs/semantics.md step 1 and "Time
   * in flight"): records at or before `now - interval - inFlight`. Those after it stay, counted only by the calls
   * whose window holds them.
   */
  #pruned(key: string, rule: WindowRule, now: number, wallUs: number): MemoryEntry | undefined {
    const entry = this.#live(key, wallUs);
    if (entry === undefined) return undefined;
    const start = firstIndexAbove(entry.timestamps, forgetUpTo(rule, now));
    if (start > 0) {
      entry.timestamps.splice(0, start);
      entry.members?.splice(0, start);
      entry.weights?.splice(0, start);
    }
    return entry;
  }

  /**
   * Records `now` (with its member, if any), then applies the flood bound,
   * and pushes back when the id is forgotten. An action is recorded once: its
   * earlier blocked record is replaced, and S' is then returned as stored. An
   * earlier admitted record of the action, which left the window (or this
   * attempt would have been answered `alreadyAdmitted`), keeps counting for
   * calls still in flight, without its action id.
   */
  #record(
    { key, rule }: Tier,
    now: number,
    member: string | undefined,
    actionId: string | undefined,
    weight: number,
    wallUs: number,
  ): RecordedWindow | undefined {
    const expiresAt = wallUs + retentionUs(rule);
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = { key, timestamps: [], members: undefined, weights: rule.countsCost ? [] : undefined, expiresAt };
      this.#entries.set(key, entry);
      this.#expiry.add(entry, expiresAt);
    }
    const replacedBlocked = actionId !== undefined && removeMember(entry, blockedMember(actionId));
    if (member !== undefined && entry.members === undefined) entry.members = entry.timestamps.map(() => undefined);
    if (member !== undefined && entry.members !== undefined) {
      const earlier = entry.members.indexOf(member);
      if (earlier >= 0) entry.members[earlier] = undefined;
    }
    const index = insertSorted(entry.timestamps, now);
    entry.members?.splice(index, 0, member);
    entry.weights?.splice(index, 0, weight);
    keepWhatDecisionsNeed(entry, rule.maxInInterval);
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
    return replacedBlocked ? recordedWindow(entry, rule, now, weight) : undefined;
  }
}

/** Forgets every record of an entry, keeping the entry itself (and its one expiry record) for the next write. */
function empty(entry: MemoryEntry): void {
  entry.timestamps.length = 0;
  entry.members = undefined;
  if (entry.weights !== undefined) entry.weights.length = 0;
}

/** Removes one member; true when it was there. */
function removeMember(entry: MemoryEntry, member: string): boolean {
  const index = entry.members?.indexOf(member) ?? -1;
  if (index < 0) return false;
  entry.timestamps.splice(index, 1);
  entry.members?.splice(index, 1);
  entry.weights?.splice(index, 1);
  return true;
}

/** S' as stored, in the window of `now`, for an attempt of `cost`: W(S'), max(S') and where an attempt of that cost fits. */
function recordedWindow(entry: RecordedSet | undefined, rule: WindowRule, now: number, cost: number): RecordedWindow {
  const sample = windowSample(entry, rule, now, cost);
  if (sample.weighed !== undefined) return sample.weighed.notRecorded;
  return { count: sample.count, newest: sample.newest, fitsAfter: sample.kthNewest };
}

/**
 * The sample of the records of `set` that a decision of `cost` at `now` counts: every record stamped after
 * `now - interval`, those stamped after `now` included (calls that reached the store first share windows with
 * `now`). On a rule that counts cost, with S' weighed both ways.
 */
function windowSample(set: RecordedSet | undefined, rule: WindowRule, now: number, cost: number): WindowSample {
  const timestamps = set?.timestamps ?? NO_TIMESTAMPS;
  const start = firstIndexAbove(timestamps, now - rule.intervalUs);
  const sample = sampleOf(timestamps, start, rule);
  if (!rule.countsCost) return sample;
  const stamps = timestamps.slice(start);
  const weights = set?.weights?.slice(start) ?? [];
  const notRecorded = weighedWindow(rule, stamps, weights, now, cost, false);
  return {
    ...sample,
    count: notRecorded.count,
    weighed: { recorded: weighedWindow(rule, stamps, weights, now, cost, true), notRecorded },
  };
}

/** The members of the records of `set` that a decision at `now` counts (see {@link windowSample}). */
function inWindow(set: RecordedSet, rule: WindowRule, now: number): readonly (string | undefined)[] {
  return set.members?.slice(firstIndexAbove(set.timestamps, now - rule.intervalUs)) ?? [];
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

/** Index of the first element of ascending `sorted` that is greater than `value`. */
export function firstIndexAbove(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as number) > value) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Inserts `value` into ascending `sorted`, after any equal elements; returns where it went. */
export function insertSorted(sorted: number[], value: number): number {
  const last = sorted[sorted.length - 1];
  const index = last === undefined || value >= last ? sorted.length : firstIndexAbove(sorted, value);
  if (index === sorted.length) sorted.push(value);
  else sorted.splice(index, 0, value);
  return index;
}
