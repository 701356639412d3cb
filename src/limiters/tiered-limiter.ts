import { waitUntilAllowed, wrapFunction, type WaitOptions, type WrapOptions } from '../core/waiting.js';
import { normalizeActionId, type AttemptOptions, type DryRunOptions, type LimiterId } from '../core/identity.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import type { TieredCore } from '../core/tiered-core.js';
import { ownOption, ownOptions } from '../options/own-options.js';

/**
 * The methods every limiter has, whether one {@link RollingRateLimiter} or a
 * {@link RateLimiterStack} of several, over a core of one tier or of several:
 * `Info` is what a decision returns.
 */
export abstract class TieredLimiter<Info extends RateLimitInfo> {
  readonly #core: TieredCore<Info>;

  /** @internal */
  protected constructor(core: TieredCore<Info>) {
    this.#core = core;
  }

  /** @internal The core of a limiter, for a stack to take its tiers from; undefined for anything else. */
  protected static coreOf(limiter: unknown): TieredCore<RateLimitInfo> | undefined {
    return typeof limiter === 'object' && limiter !== null && #core in limiter ? (limiter as TieredLimiter<RateLimitInfo>).#core : undefined;
  }

  /**
   * What an attempt without `cost` weighs on a budget of cost: the limiter's `defaultCost` (a stack's: the one its
   * budgets declare); undefined when every attempt on a budget must give its `cost`, or where nothing counts cost.
   */
  get defaultCost(): number | undefined {
    return this.#core.countsCost ? this.#core.defaultCost : undefined;
  }

  /**
   * Attempts an action for `id` and records it (blocked attempts too, in
   * tiers with `countBlocked: true`).
   *
   * @param id The id to limit, usually a user id.
   * @param options `actionId`: makes the attempt idempotent and undoable; `cost`: what it weighs on a limiter with
   *   `maxCostInInterval` (see {@link AttemptOptions}). Own properties of the object (an inherited one is ignored), as
   *   every option of the library.
   * @returns `true` when the action is blocked and must not happen, `false` when it may go ahead.
   * @throws TypeError (as a rejection) when `id` is not a non-empty string or a finite number, or `cost` is given to
   *   a limiter that counts actions, or left out on a budget of cost without `defaultCost`; RangeError when `cost` is
   *   not a positive safe integer or exceeds `maxCostInInterval`.
   * @throws {@link StoreError} or {@link TimeoutError} (as a rejection) when the store fails.
   *
   * @example
   * ```ts
   * if (await limiter.limit(userId)) return; // blocked
   * ```
   */
  async limit(id: LimiterId, options?: AttemptOptions): Promise<boolean> {
    return (await this.limitWithInfo(id, options)).blocked;
  }

  /**
   * Like {@link limit}, with the numbers behind the decision.
   *
   * @example
   * ```ts
   * const info = await limiter.limitWithInfo(userId);
   * if (info.blocked) {
   *   response.setHeader('Retry-After', Math.ceil(info.millisecondsUntilAllowed / 1000));
   * }
   * ```
   */
  async limitWithInfo(id: LimiterId, options?: AttemptOptions): Promise<Info> {
    const actionId = ownOption(options, 'actionId');
    const singleUse = ownOption(options, 'singleUse') === true;
    return this.#core.decide(id, 'attempt', actionId === undefined ? undefined : normalizeActionId(actionId), ownOption(options, 'cost'), singleUse);
  }

  /**
   * A dry run of {@link limit}: whether an attempt now would be blocked. Writes
   * nothing: no attempt is recorded, no expiry changes.
   */
  async wouldLimit(id: LimiterId, options?: DryRunOptions): Promise<boolean> {
    return (await this.wouldLimitWithInfo(id, options)).blocked;
  }

  /**
   * A dry run of {@link limitWithInfo}: exactly what it would return at this
   * moment, and writes nothing.
   */
  async wouldLimitWithInfo(id: LimiterId, options?: DryRunOptions): Promise<Info> {
    return this.#core.decide(id, 'peek', undefined, ownOption(options, 'cost'));
  }

  /**
   * Resolves once an action for `id` has been admitted (and recorded),
   * sleeping the reported wait, with jitter, in between: for queue consumers
   * that must get the work done, never faster than the limit (see
   * docs/guides/waiting-retries-and-undo.md).
   *
   * @returns The decision that admitted the action.
   * @throws {@link RateLimitedError} (as a rejection) when admission would take longer than `maxWait`.
   * @throws The signal's reason (as a rejection) when `signal` aborts.
   */
  async waitUntilAllowed(id: LimiterId, options: WaitOptions = {}): Promise<Info> {
    return waitUntilAllowed(this, id, this.#core.countsBlocked, ownOptions(options));
  }

  /**
   * Returns a function that calls `fn` only when the limiter admits the call,
   * per id: it rejects with a {@link RateLimitedError} carrying the decision
   * (`whenLimited: 'reject'`, the default), or waits until admitted
   * (`whenLimited: 'wait'`). docs/guides/waiting-retries-and-undo.md has an example.
   */
  wrap<Args extends unknown[], Result>(fn: (...args: Args) => Result, options: WrapOptions<Args>): (...args: Args) => Promise<Awaited<Result>> {
    return wrapFunction(this, this.#core.countsBlocked, fn, ownOptions(options));
  }

  /**
   * Gives back an admitted action: removes the action recorded for `id`
   * under `actionId` (given to {@link limit} or {@link limitWithInfo}) from
   * every tier, for example when the push notification it allowed could not
   * be sent.
   *
   * @returns `true` when an admitted action was removed (from at least one tier), `false` when there was none
   *   (never admitted, already undone, or out of the window).
   */
  async undo(id: LimiterId, actionId: string): Promise<boolean> {
    return this.#core.undo(id, normalizeActionId(actionId));
  }

  /**
   * Settles a reservation: sets the cost of the action admitted for `id` under `actionId` (given to {@link limit}
   * with its estimated `cost`) to what it actually used, in every tier that counts cost, atomically. Less gives the
   * rest back at once; more records the truth, and later attempts wait until the window drains; settling twice to
   * the same cost is one settlement. Tiers that count actions still count the action once. See
   * docs/semantics.md, "Costs".
   *
   * @param cost What the action used: a safe integer from 0 (0 gives its whole cost back).
   * @returns `true` when an admitted action was settled (in at least one tier whose window still holds it), `false`
   *   when there was none (never admitted, undone, or out of the window): nothing changed then.
   * @throws TypeError (as a rejection) on a limiter (or stack) without `maxCostInInterval`, or a cost that is not a number.
   * @throws RangeError (as a rejection) for a negative or fractional cost.
   *
   * @example
   * ```ts
   * const estimate = promptTokens + maxOutputTokens;
   * if (await tokens.limit(userId, { actionId: requestId, cost: estimate })) return;
   * const reply = await callModel(prompt);
   * await tokens.settle(userId, requestId, reply.usage.totalTokens);
   * ```
   */
  async settle(id: LimiterId, actionId: string, cost: number): Promise<boolean> {
    return this.#core.settle(id, normalizeActionId(actionId), cost);
  }

  /** Forgets every action recorded for `id` (in every tier), as if it had never acted. */
  async clear(id: LimiterId): Promise<void> {
    await this.#core.clear(id);
  }
}
