// The one place a decision over N tiers is made, with no timer and no breaker
// (docs/architecture.md, "The core").

import { describeOutcome, type WindowRule } from './decision-model.js';
import { escapeIdentifier, normalizeId, type KeyBuilder, type LimiterId } from './identity.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import type { MicrosecondClock } from './clock.js';
import type { Store, Tier } from './store.js';
import { decideOnStoreError, isStoreFailure, settleWithPolicy, undoWithPolicy, type StoreErrorPolicy } from './store-error-policy.js';
import { describeValue } from './check.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { decisionStartTime, publishDecision, publishStoreError, type DecisionMessage, type StoreErrorPolicyName } from './diagnostics.js';

/** One tier's fixed part: its rules, its keys and the store that holds them. */
export interface TierSpec {
  readonly rule: WindowRule;
  readonly keys: KeyBuilder;
  /** The store that holds the tier's keys, unguarded: what a stack checks its tiers against. */
  readonly store: Store;
  /** The tier's namespace, as each tier's info reports it. */
  readonly namespace: string;
  /** On a tier that counts cost, what an attempt without `cost` weighs, if its limiter declares it (`defaultCost`). */
  readonly defaultCost?: number | undefined;
}

/** How a core is set up by the face that owns it. */
export interface CoreOptions<Info extends RateLimitInfo> {
  /** The `clock` option as given: stacked limiters must agree on it. */
  readonly clock: 'local' | 'redis' | MicrosecondClock;
  /** Reads the attempt's time; undefined when the store reads it (`clock: 'redis'`). */
  readonly readClock: (() => number) | undefined;
  /** The store the core asks (guarded when it is remote); it decides every tier, its own and the ones it can decide with. */
  readonly store: Store;
  /** The face's `timeout`, as the wait a fixed `'block'` decision reports. */
  readonly timeoutMs: number;
  readonly onStoreError: StoreErrorPolicy<Info>;
  /** The face's info from each tier's numbers, in the order of `tiers` (a limiter's one tier, or a stack's with its tiers). */
  readonly present: (infos: readonly RateLimitInfo[], tiers: readonly TierSpec[]) => Info;
}

/** A decision over one or more tiers that guard the same action. */
export class TieredCore<Info extends RateLimitInfo> {
  /** The tiers, in order. */
  readonly tiers: readonly TierSpec[];
  /** The options the core was set up with. */
  readonly options: CoreOptions<Info>;
  /** The namespaces of the tiers, as diagnostics messages name them. */
  readonly #namespaces: readonly string[];
  readonly #policyName: StoreErrorPolicyName;
  /** What an attempt without `cost` weighs where a tier counts cost: the `defaultCost` its tiers declare (they agree), if any. */
  readonly #defaultCost: number | undefined;

  /**
   * @param tiers At least one; every tier's store can decide with `options.store`, and the tiers that declare a
   *   `defaultCost` declare the same (both checked when it was assembled).
   */
  constructor(tiers: readonly TierSpec[], options: CoreOptions<Info>) {
    this.tiers = tiers;
    this.options = options;
    this.#namespaces = Object.freeze(tiers.map((tier) => tier.namespace));
    this.#policyName = typeof options.onStoreError === 'string' ? options.onStoreError : 'fallback';
    this.#defaultCost = tiers.find((tier) => tier.rule.countsCost && tier.defaultCost !== undefined)?.defaultCost;
  }

  /** What an attempt without `cost` weighs on a tier that counts cost (its `defaultCost`); undefined when it must give its cost. */
  get defaultCost(): number | undefined {
    return this.#defaultCost;
  }

  /** Whether any tier counts cost (`maxCostInInterval`): only then may an attempt say its `cost`, or an action be settled. */
  get countsCost(): boolean {
    return this.tiers.some((tier) => tier.rule.countsCost);
  }

  /**
   * The cost of an attempt as given, checked against the tiers (docs/semantics.md, "Costs"): a positive safe integer,
   * given only where a tier counts cost, and at most every such tier's maximum. Not given: 1 where no tier counts
   * cost, else the `defaultCost`, and without one a `TypeError`: a budget weighs what each attempt says.
   */
  checkedCost(cost: unknown): number {
    if (cost === undefined) {
      if (!this.countsCost) return 1;
      if (this.#defaultCost !== undefined) return this.#defaultCost;
      const budgets = this.tiers.filter((tier) => tier.rule.countsCost).map((tier) => `\`${tier.namespace}\``);
      throw new InvalidOptionTypeError(
        `Expected \`cost\` for an attempt on a budget of cost (\`maxCostInInterval\`, namespace ${budgets.join(', ')}), got none: ` +
          'give what the attempt weighs (`limit(id, { cost })`), or declare `defaultCost` on the limiter for attempts without one',
        'cost',
        cost,
      );
    }
    if (!this.countsCost) {
      throw new InvalidOptionTypeError(
        `Got \`cost\` ${describeValue(cost)} for a limiter that counts actions: only a limiter with \`maxCostInInterval\` (or a stack with one) weighs attempts by cost`,
        'cost',
        cost,
      );
    }
    if (typeof cost !== 'number') throw new InvalidOptionTypeError(`Expected \`cost\` to be a positive safe integer, got ${describeValue(cost)}`, 'cost', cost);
    if (!Number.isSafeInteger(cost) || cost < 1) {
      throw new InvalidOptionRangeError(`Expected \`cost\` to be a positive safe integer, got ${describeValue(cost)}`, 'cost', cost);
    }
    for (const { rule, namespace } of this.tiers) {
      if (rule.countsCost && cost > rule.maxInInterval) {
        throw new InvalidOptionRangeError(
          `Expected \`cost\` to be at most \`maxCostInInterval\` (${rule.maxInInterval}, namespace \`${namespace}\`), got ${describeValue(cost)}: it could never be admitted`,
          'cost',
          cost,
        );
      }
    }
    return cost;
  }

  /** Whether any tier records blocked attempts (waiting must then peek before it attempts). */
  get countsBlocked(): boolean {
    return this.tiers.some((tier) => tier.rule.countBlocked);
  }

  /**
   * Decides an attempt (recorded as docs/semantics.md step 5 says) or a dry run for `id`.
   * A store failure or a timeout is decided by the `onStoreError` policy; a bad
   * id or a bad clock rejects as it is.
   */
  async decide(id: LimiterId, operation: 'attempt' | 'peek', actionId?: string, givenCost?: unknown, singleUse = false): Promise<Info> {
    const startedAt = decisionStartTime();
    const cost = this.checkedCost(givenCost);
    let info: Info;
    let decidedBy: DecisionMessage['decidedBy'] = 'store';
    try {
      info = await this.#decideInStore(id, operation, actionId, cost, singleUse);
    } catch (error) {
      if (!isStoreFailure(error)) throw error;
      publishStoreError(this.#namespaces, error, this.#policyName);
      info = await decideOnStoreError(
        this.options.onStoreError,
        error,
        operation,
        id,
        (blocked) => this.#fixedDecision(blocked, cost),
        actionId,
        // A fallback weighs the attempt as the store would have: by its cost, given or the default.
        givenCost === undefined && !this.countsCost ? undefined : cost,
      );
      decidedBy = this.#policyName as DecisionMessage['decidedBy']; // not 'throw': that policy rethrew
    }
    publishDecision(this.#namespaces, info.blocked, operation === 'peek', decidedBy, startedAt);
    return info;
  }

  /** Forgets everything every tier recorded for `id`. */
  async clear(id: LimiterId): Promise<void> {
    await Promise.all(this.#keysByStore(normalizeId(id)).map(([store, keys]) => store.clear(keys)));
  }

  /** Removes the admitted action `actionId` from every tier (and from a fallback that can undo); true when one was removed. */
  async undo(id: LimiterId, actionId: string): Promise<boolean> {
    const byStore = this.#keysByStore(normalizeId(id));
    return undoWithPolicy(this.options.onStoreError, id, actionId, async () => {
      const removed = await Promise.all(byStore.map(([store, keys]) => store.undo(keys, escapeIdentifier(actionId))));
      return removed.some(Boolean);
    });
  }

  /**
   * Sets the cost of the admitted action `actionId` to `cost` in every tier that counts cost and still holds it in
   * its window (docs/semantics.md, "Costs"), in one atomic step; true when one did. Then in a fallback that settles.
   */
  async settle(id: LimiterId, actionId: string, cost: unknown): Promise<boolean> {
    if (!this.countsCost) {
      throw new InvalidOptionTypeError(
        '`settle` sets the cost of an action, and this limiter counts actions: give it `maxCostInInterval`, or stack one that has it',
        'cost',
        cost,
      );
    }
    if (typeof cost !== 'number') throw new InvalidOptionTypeError(`Expected \`cost\` to be a safe integer from 0, got ${describeValue(cost)}`, 'cost', cost);
    if (!Number.isSafeInteger(cost) || cost < 0) {
      throw new InvalidOptionRangeError(`Expected \`cost\` to be a safe integer from 0, got ${describeValue(cost)}`, 'cost', cost);
    }
    // A settlement is at most every budget it settles in: one action never weighs more than a whole window may, so
    // that what a key's records add up to stays exact (docs/semantics.md, "Bounds and shared namespaces").
    for (const { rule, namespace } of this.tiers) {
      if (rule.countsCost && cost > rule.maxInInterval) {
        throw new InvalidOptionRangeError(
          `Expected the settled \`cost\` to be at most \`maxCostInInterval\` (${rule.maxInInterval}, namespace \`${namespace}\`), got ${describeValue(cost)}: ` +
            'one action cannot use more than the whole budget',
          'cost',
          cost,
        );
      }
    }
    const normalized = normalizeId(id);
    const tiers = this.tiers
      .filter((tier) => tier.rule.countsCost)
      .map((tier): Tier => ({ key: tier.keys.keyFor(normalized), rule: tier.rule, store: tier.store }));
    return settleWithPolicy(this.options.onStoreError, id, actionId, cost, async () => {
      const now = this.options.readClock?.();
      return this.options.store.settle(tiers, now, escapeIdentifier(actionId), cost);
    });
  }

  async #decideInStore(id: LimiterId, operation: 'attempt' | 'peek', actionId: string | undefined, cost: number, singleUse: boolean): Promise<Info> {
    const normalized = normalizeId(id);
    const tiers = this.tiers.map((tier): Tier => ({ key: tier.keys.keyFor(normalized), rule: tier.rule, store: tier.store }));
    const now = this.options.readClock?.();
    const decision =
      operation === 'attempt'
        ? await this.options.store.attempt(tiers, now, actionId === undefined ? undefined : escapeIdentifier(actionId), cost, singleUse)
        : await this.options.store.peek(tiers, now, cost);
    if (decision.tiers.length !== this.tiers.length) throw new TypeError('The store returned an outcome per tier it was not asked for');
    const infos = decision.tiers.map((outcome, i) => describeOutcome((this.tiers[i] as TierSpec).rule, decision.now, outcome.verdict, outcome.after, cost));
    const info = this.options.present(infos, this.tiers);
    return decision.alreadyAdmitted ? { ...info, alreadyAdmitted: true } : info;
  }

  /** The info of a decision made by the `'allow'` or `'block'` policy: nothing is known of the windows. */
  #fixedDecision(blocked: boolean, cost: number): Info {
    return this.options.present(
      this.tiers.map(({ rule }): RateLimitInfo => {
        const info = {
          blocked,
          blockedDueToCount: false,
          blockedDueToMinDifference: false,
          actionsRemaining: blocked ? 0 : rule.countsCost ? Math.floor(rule.maxInInterval / cost) : rule.maxInInterval,
          millisecondsUntilAllowed: blocked ? this.options.timeoutMs : 0,
        };
        return rule.countsCost ? { ...info, costRemaining: blocked ? 0 : rule.maxInInterval } : info;
      }),
      this.tiers,
    );
  }

  /** The id's key in every tier, grouped by the store to ask: the core's own (guarded) store where it shares keys, else the tier's own. */
  #keysByStore(id: string): [Store, string[]][] {
    const groups = new Map<Store, string[]>();
    for (const tier of this.tiers) {
      const store = this.options.store.sharesKeysWith(tier.store) ? this.options.store : tier.store;
      const keys = groups.get(store);
      if (keys === undefined) groups.set(store, [tier.keys.keyFor(id)]);
      else keys.push(tier.keys.keyFor(id));
    }
    return [...groups];
  }
}
