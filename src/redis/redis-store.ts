import type { RedisAdapter } from './adapters/adapter.js';
import { pauseAfterSlotMove } from './adapters/cluster-redirection.js';
import type { ConnectionProblem } from '../errors/timeout-error.js';
import { checkServerOnce } from './server-checks.js';
import type { Store, StoreDecision, Tier } from '../core/store.js';

/**
 * What every Redis store shares: one client (through its adapter), its keyspace, its failure domains, and, on the
 * client's first call, the check of its server on the side (server-checks.ts). Each way of deciding is a store of
 * its own, chosen once by options/assemble.ts: `ScriptStore` (the decide script, alone or in batches) and
 * `MultiStore` (plain commands in a MULTI). No store asks per call which way it decides.
 */
export abstract class RedisStore implements Store {
  /** The adapter of the store's client. */
  readonly adapter: RedisAdapter;
  /** On a Cluster, what a refusal of a moving slot (MOVED, ASK, TRYAGAIN the client gave up on) asks: a new call after a pause. */
  readonly slotMovePause: ((error: unknown, retry: number) => number | undefined) | undefined;

  constructor(adapter: RedisAdapter) {
    this.adapter = adapter;
    this.slotMovePause = adapter.isCluster ? pauseAfterSlotMove : undefined;
  }

  get name(): string {
    return this.adapter.kind;
  }

  abstract attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string, cost?: number): Promise<StoreDecision>;
  abstract peek(tiers: readonly Tier[], now: number | undefined, cost?: number): Promise<StoreDecision>;
  abstract settle(tiers: readonly Tier[], now: number | undefined, actionId: string, cost: number): Promise<boolean>;
  abstract clear(keys: readonly string[]): Promise<void>;
  abstract undo(keys: readonly string[], actionId: string): Promise<boolean>;

  connectionProblem(): ConnectionProblem | undefined {
    return this.adapter.connectionProblem?.();
  }

  sharesKeysWith(other: Store): boolean {
    return other instanceof RedisStore && other.adapter.client === this.adapter.client;
  }

  canDecideWith(other: Store): boolean {
    return this.sharesKeysWith(other);
  }

  slotOwner(key: string): string | undefined {
    return this.adapter.slotOwner?.(key);
  }

  /** The call, sent; and beside it, on the client's first call only, the check of its server. */
  protected checked<T>(call: Promise<T>): Promise<T> {
    void checkServerOnce(this.adapter);
    return call;
  }
}
