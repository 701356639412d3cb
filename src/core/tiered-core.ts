// The one place a decision over N tiers is made: a RollingRateLimiter is a
// core of one tier, a RateLimiterStack a core of several. It turns an id into
// each tier's key, reads the clock, calls the store within the timeout,
// describes the outcome (docs/semantics.md steps 6 and 7), and applies the `onStoreError`
// policy when the store fails; `clear` and `undo` go through it too.

import { describeOutcome, type WindowRule } from './decision-model.js';
import { normalizeId, storedActionId, type KeyBuilder, type LimiterId } from './identity.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import type { MicrosecondClock } from './clock.js';
import type { Store, Tier } from '../stores/store.js';
import { decideOnStoreError, isStoreFailure, undoWithPolicy, type StoreErrorPolicy } from '../resilience/store-error-policy.js';
import { callStore } from '../resilience/store-call.js';
import type { NormalizedCircuitBreakerOptions } from '../resilience/circuit-breaker.js';
import { DomainBreakers } from '../resilience/domain-breakers.js';
import { decisionStartTime, publishCircuit, publishDecision, publishStoreError, type StoreErrorPolicyName } from './diagnostics.js';

/** One tier's fixed part: its rules, its keys and the store that holds them. */
export interface TierSpec {
  readonly rule: WindowRule;
  readonly keys: KeyBuilder;
  readonly store: Store;
  /** The `useScript` option of the tier's limiter. */
  readonly useScript: boolean | undefined;
  /** The tier's namespace, interval (ms) and maximum, as each tier's info reports them. */
  readonly namespace: string;
  readonly interval: number;
  readonly maxInInterval: number;
  /**
   * On a Redis Cluster, the master (`host:port`) that holds a key now, by the
   * client's slot map: each master gets its own circuit breaker. Undefined
   * for a store that fails as one (standalone, Sentinel, memory).
   */
  readonly slotOwner?: ((key: string) => string | undefined) | undefined;
}

/** How a core is set up by the face that owns it. */
export interface CoreOptions<Info extends RateLimitInfo> {
  /** The `clock` option as given: stacked limiters must agree on it. */
  readonly clock: 'local' | 'redis' | MicrosecondClock;
  /** Reads the attempt's time; undefined when the store reads it (`clock: 'redis'`). */
  readonly readClock: (() => number) | undefined;
  readonly timeoutMs: number;
  /** Whether decisions go to Redis in batches (the `batch` option of the face). */
  readonly batch: boolean;
  readonly onStoreError: StoreErrorPolicy<Info>;
  /** The face's info from each tier's numbers, in the order of `tiers` (a limiter's one tier, or a stack's with its tiers). */
  readonly present: (infos: readonly RateLimitInfo[], tiers: readonly TierSpec[]) => Info;
  /** The `circuitBreaker` option, normalized: `false` for none. */
  readonly circuitBreaker: NormalizedCircuitBreakerOptions | false;
}

/** The first key of a core's tiers, grouped by store: where the id lives. */
function firstKey(byStore: ReadonlyMap<Store, readonly string[]>): string {
  return [...byStore.values()][0]?.[0] as string;
}

/** A decision over one or more tiers that guard the same action. */
export class TieredCore<Info extends RateLimitInfo> {
  readonly #tiers: readonly TierSpec[];
  readonly #store: Store;
  readonly #options: CoreOptions<Info>;
  /** The namespaces of the tiers, as diagnostics messages name them. */
  readonly #namespaces: readonly string[];
  readonly #breakers: DomainBreakers | undefined;
  readonly #policyName: StoreErrorPolicyName;

  /** @param tiers At least one; every tier's store can decide with the first's (checked by the face). */
  constructor(tiers: readonly TierSpec[], options: CoreOptions<Info>) {
    this.#tiers = tiers;
    this.#store = (tiers[0] as TierSpec).store;
    this.#options = options;
    const namespaces = Object.freeze(tiers.map((tier) => tier.namespace));
    this.#namespaces = namespaces;
    // The tiers of a core share one store, and every key of an id one hash slot: the first tier's key says where the id lives.
    this.#breakers =
      options.circuitBreaker === false
        ? undefined
        : new DomainBreakers(options.circuitBreaker, (tiers[0] as TierSpec).slotOwner, (node, change) =>
            publishCircuit(namespaces, node, change.to, change.from, change.consecutiveFailures),
          );
    const policy = options.onStoreError;
    this.#policyName = typeof policy === 'string' ? policy : 'fallback';
  }

  /** The tiers, in order. */
  get tiers(): readonly TierSpec[] {
    return this.#tiers;
  }

  /** The options the core was set up with. */
  get options(): CoreOptions<Info> {
    return this.#options;
  }

  /** Whether any tier records blocked attempts (waiting must then peek before it attempts). */
  get countsBlocked(): boolean {
    return this.#tiers.some((tier) => tier.rule.countBlocked);
  }

  /**
   * Decides an attempt (recorded as docs/semantics.md step 5 says) or a dry run for `id`.
   * A store failure or a timeout is decided by the `onStoreError` policy; a bad
   * id or a bad clock rejects as it is.
   */
  async decide(id: LimiterId, operation: 'attempt' | 'peek', actionId?: string): Promise<Info> {
    const startedAt = decisionStartTime();
    const dryRun = operation === 'peek';
    let info: Info;
    try {
      info = await this.#decideInStore(id, operation, actionId);
    } catch (error) {
      if (!isStoreFailure(error)) throw error;
      publishStoreError(this.#namespaces, error, this.#policyName);
      info = await decideOnStoreError(this.#options.onStoreError, error, operation, id, (blocked) => this.#fixedDecision(blocked), actionId);
      publishDecision(this.#namespaces, info.blocked, dryRun, this.#policyName as 'allow' | 'block' | 'fallback', startedAt);
      return info;
    }
    publishDecision(this.#namespaces, info.blocked, dryRun, 'store', startedAt);
    return info;
  }

  /** Forgets everything every tier recorded for `id`. */
  async clear(id: LimiterId): Promise<void> {
    const byStore = this.#keysByStore(normalizeId(id));
    await this.#callStore(() => Promise.all([...byStore].map(([store, keys]) => store.clear(keys))), 'Clearing an id', firstKey(byStore));
  }

  /** Removes the admitted action `actionId` from every tier (and from a fallback that can undo); true when one was removed. */
  async undo(id: LimiterId, actionId: string): Promise<boolean> {
    const byStore = this.#keysByStore(normalizeId(id));
    return undoWithPolicy(this.#options.onStoreError, id, actionId, async () => {
      const removed = await this.#callStore(
        () => Promise.all([...byStore].map(([store, keys]) => store.undo(keys, storedActionId(actionId)))),
        'Undoing an action',
        firstKey(byStore),
      );
      return removed.some(Boolean);
    });
  }

  async #decideInStore(id: LimiterId, operation: 'attempt' | 'peek', actionId: string | undefined): Promise<Info> {
    const normalized = normalizeId(id);
    const { batch } = this.#options;
    const tiers = this.#tiers.map((tier): Tier => ({ key: tier.keys.keyFor(normalized), rule: tier.rule, store: tier.store, useScript: tier.useScript, batch }));
    const now = this.#options.readClock?.();
    const decision = await this.#callStore(
      () =>
        operation === 'attempt'
          ? this.#store.attempt(tiers, now, actionId === undefined ? undefined : storedActionId(actionId))
          : this.#store.peek(tiers, now),
      operation === 'attempt' ? 'Recording an attempt' : 'Reading the window',
      (tiers[0] as Tier).key,
    );
    if (decision.tiers.length !== this.#tiers.length) throw new TypeError('The store returned an outcome per tier it was not asked for');
    const infos = decision.tiers.map((outcome, i) => describeOutcome((this.#tiers[i] as TierSpec).rule, decision.now, outcome.verdict, outcome.after));
    const info = this.#options.present(infos, this.#tiers);
    return decision.alreadyAdmitted ? { ...info, alreadyAdmitted: true } : info;
  }

  /**
   * One store call, within the timeout and through the circuit breaker of the
   * failure domain that holds `key` (the store, or the key's Cluster master):
   * while that circuit is open the store is not called, and the call fails
   * with the breaker's `StoreError` (which the policy then decides) on the
   * next turn of the event loop, not at once: a loop that awaits only open
   * answers must still let timers and I/O run, or the probe that would close
   * the circuit never reads its reply.
   */
  #callStore<T>(operation: () => Promise<T>, what: string, key: string): Promise<T> {
    const diagnose = () => this.#store.connectionProblem?.();
    if (this.#breakers === undefined) return callStore(operation, this.#options.timeoutMs, what, diagnose);
    const breaker = this.#breakers.for(key);
    const gate = breaker.admit();
    if (gate === 'open') {
      const error = breaker.openError();
      return new Promise((_, reject) => setImmediate(reject, error));
    }
    return callStore(operation, this.#options.timeoutMs, what, diagnose).then(
      (value) => {
        breaker.succeeded(gate);
        return value;
      },
      (error: unknown) => {
        // Only a store failure says something about the store; anything else still ends a probe.
        if (isStoreFailure(error)) breaker.failed(gate, error);
        else breaker.succeeded(gate);
        throw error;
      },
    );
  }

  /** The info of a decision made by the `'allow'` or `'block'` policy: nothing is known of the windows. */
  #fixedDecision(blocked: boolean): Info {
    return this.#options.present(
      this.#tiers.map((tier) => ({
        blocked,
        blockedDueToCount: false,
        blockedDueToMinDifference: false,
        actionsRemaining: blocked ? 0 : tier.maxInInterval,
        millisecondsUntilAllowed: blocked ? this.#options.timeoutMs : 0,
      })),
      this.#tiers,
    );
  }

  /** The id's key in every tier, grouped by the store that holds it. */
  #keysByStore(id: string): Map<Store, string[]> {
    const byStore = new Map<Store, string[]>();
    for (const tier of this.#tiers) {
      const keys = byStore.get(tier.store) ?? [];
      keys.push(tier.keys.keyFor(id));
      byStore.set(tier.store, keys);
    }
    return byStore;
  }
}
