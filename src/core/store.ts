import type { TierDecision, WindowRule } from './decision-model.js';
import type { ConnectionProblem } from '../errors/timeout-error.js';

/** One limiter's part of a decision: the id's key, its rules, and the store that holds the key (one per tier in memory). */
export interface Tier {
  readonly key: string;
  readonly rule: WindowRule;
  readonly store: Store;
}

/** One tier's outcome: why it blocks, and its recorded set S' afterwards. */
export type TierOutcome = Pick<TierDecision, 'verdict' | 'after'>;

/** A decision across tiers, and the time it was made at. */
export interface StoreDecision {
  /** The attempt's timestamp: the caller's, or the store's own clock (Redis TIME). */
  readonly now: number;
  /** True when the attempt's action id had already been admitted: it was answered as admitted, and nothing was recorded. */
  readonly alreadyAdmitted: boolean;
  readonly tiers: readonly TierOutcome[];
}

/**
 * Where limiters keep their recorded timestamps; only adapters know clients.
 * Every method takes the tiers of one action, decided atomically in one round
 * trip as {@link decideTiers} describes; `now` undefined means the store's own clock.
 */
export interface Store {
  /** What holds the state, for error messages, e.g. `memory` or `node-redis cluster`. */
  readonly name: string;
  /**
   * Decides an attempt of `cost` (the weight it adds to tiers that count cost; 1 to the others) and records it in
   * each tier, as docs/semantics.md step 5 and "Action ids, undo, clear" say. With `singleUse`, the action id is never
   * retried: a blocked attempt is recorded as one without an action id (nothing will look for it).
   */
  attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string, cost?: number, singleUse?: boolean): Promise<StoreDecision>;
  /** Decides an attempt as `attempt` would, and writes nothing at all. */
  peek(tiers: readonly Tier[], now: number | undefined, cost?: number): Promise<StoreDecision>;
  /**
   * Sets the cost of the admitted action `actionId` to `cost` in each of `tiers` (tiers that count cost) whose window
   * at `now` holds it, in one atomic step (docs/semantics.md, "Costs"); true when one did.
   */
  settle(tiers: readonly Tier[], now: number | undefined, actionId: string, cost: number): Promise<boolean>;
  /** Forgets everything recorded under these keys. */
  clear(keys: readonly string[]): Promise<void>;
  /** Removes the admitted action `actionId` from these keys; true when there was one to remove. */
  undo(keys: readonly string[], actionId: string): Promise<boolean>;
  /** Whether `other` holds its keys in the same keyspace as this store (the same Redis, or this very memory store). */
  sharesKeysWith(other: Store): boolean;
  /** What is wrong with the store's connection right now, to explain a timeout; undefined when nothing is known. */
  connectionProblem?(): ConnectionProblem | undefined;
  /** Whether this store can decide tiers held by `other` together with its own, in one atomic step. */
  canDecideWith(other: Store): boolean;
  /**
   * On a Redis Cluster, the master (`host:port`) that holds `key` now, by the
   * client's slot map: each master is its own failure domain. Absent for a
   * store that fails as one (standalone, Sentinel, memory).
   */
  slotOwner?(key: string): string | undefined;
  /**
   * On a Redis Cluster: when `error` says the call was refused and not run because its key's hash slot is moving
   * between masters, the pause in milliseconds before sending it again for the `retry`-th time (from 1); undefined
   * for any other error. Absent for a store whose keys never move.
   */
  readonly slotMovePause?: ((error: unknown, retry: number) => number | undefined) | undefined;
}
