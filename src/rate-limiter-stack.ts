import { describe } from './decision.js';
import { InvalidOptionTypeError } from './errors/invalid-option-error.js';
import { UnsupportedError } from './errors/unsupported-error.js';
import { normalizeId, type LimiterId } from './ids.js';
import { internalsOf, type LimiterInternals } from './limiter-internals.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import type { RollingRateLimiter } from './rolling-rate-limiter.js';
import type { Store, Tier } from './stores/store.js';
import { describeValue, normalizeStoreErrorPolicy } from './options.js';
import { decideOnStoreError, isStoreFailure, undoWithPolicy, type StoreErrorPolicy } from './store-error-policy.js';
import { waitUntilAllowed, wrapFunction, type WaitOptions, type WrapOptions } from './waiting.js';
import { callStore } from './with-timeout.js';
import { normalizeActionId, storedActionId, type AttemptOptions } from './action-ids.js';

/** Options of {@link RateLimiterStack}. */
export interface RateLimiterStackOptions {
  /**
   * What to do when the store fails or does not answer in time; see
   * {@link StoreErrorPolicy}. A fallback is a stack (or anything with
   * `limitWithInfo` and `wouldLimitWithInfo` returning a {@link StackRateLimitInfo}).
   * @default 'throw'
   */
  readonly onStoreError?: StoreErrorPolicy<StackRateLimitInfo>;
}

/** One tier's part of a {@link StackRateLimitInfo}: its own numbers, and which limiter it is. */
export interface TierRateLimitInfo extends RateLimitInfo {
  /** The tier's namespace, which tells the tiers apart. */
  readonly namespace: string;
  /** The tier's window length, in milliseconds. */
  readonly interval: number;
  /** The tier's maximum per window. */
  readonly maxInInterval: number;
}

/**
 * The outcome of an attempt across stacked limiters. The top-level fields
 * are the stack's: `blocked` when any tier blocks, `blockedDueToCount` and
 * `blockedDueToMinDifference` when any tier blocks for that reason,
 * `actionsRemaining` the smallest of the tiers', and
 * `millisecondsUntilAllowed` the wait until every tier allows (the largest
 * of the tiers' waits).
 */
export interface StackRateLimitInfo extends RateLimitInfo {
  /** Each tier's own info, in the order the limiters were stacked; `tiers[i].blocked` says which tiers blocked. */
  readonly tiers: readonly TierRateLimitInfo[];
}

/**
 * Several limiters guarding the same action, decided together: the action is
 * allowed only if every tier allows it, in one round trip (one script call on
 * Redis), atomically. An attempt is recorded in a tier when that tier counts
 * blocked attempts (`countBlocked: true`) or when the action was allowed
 * overall, so a tier that does not count blocked attempts is untouched when
 * another tier blocks.
 *
 * The limiters stay usable on their own; the stack shares their state.
 *
 * @example
 * ```ts
 * const perMinute = new RollingRateLimiter({ client: redis, namespace: 'push:minute', interval: 60_000, maxInInterval: 10 });
 * const spacing = new RollingRateLimiter({ client: redis, namespace: 'push:3s', interval: 3_000, maxInInterval: 1 });
 * const push = new RateLimiterStack([perMinute, spacing]);
 *
 * if (await push.limit(teacherId)) return; // blocked by either tier
 * ```
 */
export class RateLimiterStack {
  readonly #limiters: readonly RollingRateLimiter[];
  readonly #tiers: readonly LimiterInternals[];
  readonly #store: Store;
  readonly #timeout: number;
  readonly #onStoreError: StoreErrorPolicy<StackRateLimitInfo>;

  /**
   * @param limiters The tiers, at least one. They must keep their state in the
   *   same place (all in memory, or all on the same Redis client), use the
   *   same `clock`, and have distinct namespaces.
   * @param options `onStoreError`: what to do when the store fails or does not
   *   answer in time (see {@link StoreErrorPolicy}; a fallback is a stack, for
   *   example of in-memory limiters with the same rules). Default `'throw'`.
   *   The stack waits for the store as long as the longest `timeout` of its
   *   limiters.
   * @throws TypeError when the limiters cannot be stacked, saying why.
   * @throws {@link UnsupportedError} when their store cannot decide before writing (redis-mock).
   */
  constructor(limiters: readonly RollingRateLimiter[], options: RateLimiterStackOptions = {}) {
    if (!isNonEmptyArray(limiters)) {
      throw new InvalidOptionTypeError('Expected `limiters` to be a non-empty array of RollingRateLimiter instances', 'limiters', limiters);
    }
    // An index loop, not map(): map() skips the holes of a sparse array.
    const tiers: LimiterInternals[] = [];
    for (let i = 0; i < limiters.length; i += 1) {
      const internals = internalsOf(limiters[i]);
      if (internals === undefined) {
        throw new InvalidOptionTypeError(`Expected \`limiters[${i}]\` to be a RollingRateLimiter instance`, 'limiters', limiters[i]);
      }
      tiers.push(internals);
    }
    checkStackable(limiters, tiers);
    this.#limiters = [...limiters];
    this.#tiers = tiers;
    this.#store = (tiers[0] as LimiterInternals).store;
    this.#timeout = Math.max(...tiers.map((tier) => tier.timeout));
    if (typeof options !== 'object' || options === null) {
      throw new InvalidOptionTypeError(`Expected the stack's options to be an object, got ${describeValue(options)}`, 'options', options);
    }
    this.#onStoreError = normalizeStoreErrorPolicy(options.onStoreError);
  }

  /** The stacked limiters, in order. */
  get limiters(): readonly RollingRateLimiter[] {
    return this.#limiters;
  }

  /**
   * Attempts an action for `id` under every tier.
   *
   * @returns `true` when any tier blocks the action, `false` when every tier allows it.
   */
  async limit(id: LimiterId, options?: AttemptOptions): Promise<boolean> {
    return (await this.limitWithInfo(id, options)).blocked;
  }

  /** Like {@link limit}, with the stack's numbers and each tier's. */
  async limitWithInfo(id: LimiterId, options?: AttemptOptions): Promise<StackRateLimitInfo> {
    return this.#run(id, 'attempt', normalizeActionId(options?.actionId));
  }

  /** A dry run of {@link limit}: writes nothing. */
  async wouldLimit(id: LimiterId): Promise<boolean> {
    return (await this.wouldLimitWithInfo(id)).blocked;
  }

  /** A dry run of {@link limitWithInfo}: exactly what it would return now, and writes nothing. */
  async wouldLimitWithInfo(id: LimiterId): Promise<StackRateLimitInfo> {
    return this.#run(id, 'peek');
  }

  /**
   * Resolves once an action for `id` has been admitted by every tier,
   * sleeping the reported wait, with jitter, in between; see
   * {@link RollingRateLimiter.waitUntilAllowed}.
   */
  async waitUntilAllowed(id: LimiterId, options: WaitOptions = {}): Promise<StackRateLimitInfo> {
    return waitUntilAllowed(this, id, this.#anyTierCountsBlocked(), options);
  }

  /** Returns a function that calls `fn` only when every tier admits the call; see {@link RollingRateLimiter.wrap}. */
  wrap<Args extends unknown[], Result>(fn: (...args: Args) => Result, options: WrapOptions<Args>): (...args: Args) => Promise<Awaited<Result>> {
    return wrapFunction(this, this.#anyTierCountsBlocked(), fn, options);
  }

  #anyTierCountsBlocked(): boolean {
    return this.#limiters.some((limiter) => limiter.countBlocked);
  }

  /** Forgets everything every tier recorded for `id`. */
  async clear(id: LimiterId): Promise<void> {
    const byStore = this.#keysByStore(normalizeId(id));
    await callStore(() => Promise.all([...byStore].map(([store, keys]) => store.clear(keys))), this.#timeout, 'Clearing an id');
  }

  /**
   * Gives back an admitted action in every tier; see {@link RollingRateLimiter.undo}.
   *
   * @returns `true` when an admitted action was removed from at least one tier.
   */
  async undo(id: LimiterId, actionId: string): Promise<boolean> {
    const action = normalizeActionId(actionId);
    if (action === undefined) throw new TypeError('Expected `actionId` to be a non-empty string, got undefined');
    const byStore = this.#keysByStore(normalizeId(id));
    return undoWithPolicy(this.#onStoreError, id, action, async () => {
      const removed = await callStore(
        () => Promise.all([...byStore].map(([store, keys]) => store.undo(keys, storedActionId(action)))),
        this.#timeout,
        'Undoing an action',
      );
      return removed.some(Boolean);
    });
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

  async #run(id: LimiterId, operation: 'attempt' | 'peek', actionId?: string): Promise<StackRateLimitInfo> {
    try {
      return await this.#decide(id, operation, actionId);
    } catch (error) {
      if (!isStoreFailure(error)) throw error;
      return decideOnStoreError(this.#onStoreError, error, operation, id, (blocked) => this.#fixedDecision(blocked), actionId);
    }
  }

  /** The info of a decision made by the `'allow'` or `'block'` policy: nothing is known of the windows. */
  #fixedDecision(blocked: boolean): StackRateLimitInfo {
    const tiers = this.#limiters.map(
      (limiter): TierRateLimitInfo => ({
        blocked,
        blockedDueToCount: false,
        blockedDueToMinDifference: false,
        actionsRemaining: blocked ? 0 : limiter.maxInInterval,
        millisecondsUntilAllowed: blocked ? this.#timeout : 0,
        namespace: limiter.namespace,
        interval: limiter.interval,
        maxInInterval: limiter.maxInInterval,
      }),
    );
    return { ...combine(tiers), tiers };
  }

  /** Every tier's part of a decision about `id`; throws a TypeError for a bad id. */
  #tiersOf(id: LimiterId): Tier[] {
    const normalized = normalizeId(id);
    return this.#tiers.map((tier): Tier => ({ key: tier.keys.keyFor(normalized), rule: tier.rule, store: tier.store, useScript: tier.useScript }));
  }

  async #decide(id: LimiterId, operation: 'attempt' | 'peek', actionId: string | undefined): Promise<StackRateLimitInfo> {
    const tiers = this.#tiersOf(id);
    const now = (this.#tiers[0] as LimiterInternals).readClock?.();
    const decision = await callStore(
      () => (operation === 'attempt' ? this.#store.attempt(tiers, now, actionId === undefined ? undefined : storedActionId(actionId)) : this.#store.peek(tiers, now)),
      this.#timeout,
      operation === 'attempt' ? 'Recording an attempt' : 'Reading the window',
    );
    const infos = decision.tiers.map((outcome, i): TierRateLimitInfo => {
      const limiter = this.#limiters[i] as RollingRateLimiter;
      const info = describe((this.#tiers[i] as LimiterInternals).rule, decision.now, outcome.verdict, outcome.after);
      return { ...info, namespace: limiter.namespace, interval: limiter.interval, maxInInterval: limiter.maxInInterval };
    });
    const info: StackRateLimitInfo = { ...combine(infos), tiers: infos };
    return decision.alreadyAdmitted ? { ...info, alreadyAdmitted: true } : info;
  }
}

/** The stack's own numbers from its tiers'. */
function combine(infos: readonly RateLimitInfo[]): RateLimitInfo {
  return {
    blocked: infos.some((info) => info.blocked),
    blockedDueToCount: infos.some((info) => info.blockedDueToCount),
    blockedDueToMinDifference: infos.some((info) => info.blockedDueToMinDifference),
    actionsRemaining: Math.min(...infos.map((info) => info.actionsRemaining)),
    millisecondsUntilAllowed: Math.max(...infos.map((info) => info.millisecondsUntilAllowed)),
  };
}

function isNonEmptyArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value) && value.length > 0;
}

/** Throws a TypeError when the tiers cannot be decided together in one atomic step. */
function checkStackable(limiters: readonly RollingRateLimiter[], tiers: readonly LimiterInternals[]): void {
  const first = tiers[0] as LimiterInternals;
  tiers.forEach((tier, i) => {
    const limiter = limiters[i] as RollingRateLimiter;
    // Two tiers clash when their keys are one: the same namespace in one keyspace (in-memory limiters each have their own).
    const clash = limiters.findIndex((other, j) => other.namespace === limiter.namespace && (tiers[j] as LimiterInternals).store.sharesKeysWith(tier.store));
    if (clash < i) {
      throw new InvalidOptionTypeError(
        `Cannot stack two limiters with the namespace \`${limiter.namespace}\` (limiters[${i}]): give each tier its own namespace`,
        'limiters',
        limiter,
      );
    }
    if (!first.store.canDecideWith(tier.store)) {
      throw new InvalidOptionTypeError(
        `Cannot stack limiters[${i}] with limiters[0]: stacked limiters must keep their state in the same place ` +
          '(all in memory, or all on the same Redis client) so that one atomic step decides every tier',
        'limiters',
        limiter,
      );
    }
    if (!tier.store.canDecideBeforeWriting) {
      throw new UnsupportedError(
        `Cannot stack limiters[${i}]: a stack must decide every tier before it writes, which on Redis takes a Lua script, and ${tier.store.name} cannot run scripts`,
      );
    }
    if (tier.useScript === false) {
      throw new UnsupportedError(`Cannot stack limiters[${i}]: a stack decides every tier with the Lua script, and it has \`useScript: false\``);
    }
    if (tier.clockOption !== first.clockOption) {
      throw new InvalidOptionTypeError(`Cannot stack limiters[${i}] with limiters[0]: stacked limiters must use the same \`clock\``, 'limiters', limiter);
    }
  });
}
