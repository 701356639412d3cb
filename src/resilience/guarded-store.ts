// A remote store with its guards: every call within the timeout, through the
// circuit breaker of the failure domain that holds its key, any failure that
// is not one of ours turned into a StoreError. One decorator around a Redis
// store, so that the tiered core knows none of it and an in-memory store,
// which can neither hang nor fail, pays for none of it.

import type { ConnectionProblem } from '../errors/timeout-error.js';
import type { Store, StoreDecision, Tier } from '../core/store.js';
import { isStoreFailure } from '../core/store-error-policy.js';
import type { CircuitStateChange, NormalizedCircuitBreakerOptions } from './circuit-breaker.js';
import { DomainBreakers } from './domain-breakers.js';
import { callStore } from './store-call.js';

/** How a store is guarded. */
export interface StoreGuards {
  /** Longest wait for one call, in milliseconds. */
  readonly timeoutMs: number;
  /** The circuit breakers' thresholds; `false` for none. */
  readonly circuitBreaker: NormalizedCircuitBreakerOptions | false;
  /** Told of every change of a circuit's state, with the Cluster master it guards (undefined for the whole store). */
  readonly onCircuitChange?: (node: string | undefined, change: CircuitStateChange) => void;
}

/** A store whose every call is timed out, circuit-broken per failure domain, and fails with our own errors. */
export class GuardedStore implements Store {
  readonly #inner: Store;
  readonly #timeoutMs: number;
  readonly #breakers: DomainBreakers | undefined;

  constructor(inner: Store, guards: StoreGuards) {
    this.#inner = inner;
    this.#timeoutMs = guards.timeoutMs;
    const onChange = guards.onCircuitChange ?? (() => {});
    this.#breakers =
      guards.circuitBreaker === false ? undefined : new DomainBreakers(guards.circuitBreaker, inner.slotOwner?.bind(inner), onChange);
  }

  get name(): string {
    return this.#inner.name;
  }

  attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    return this.#call(() => this.#inner.attempt(tiers, now, actionId), 'Recording an attempt', (tiers[0] as Tier).key);
  }

  peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    return this.#call(() => this.#inner.peek(tiers, now), 'Reading the window', (tiers[0] as Tier).key);
  }

  clear(keys: readonly string[]): Promise<void> {
    return this.#call(() => this.#inner.clear(keys), 'Clearing an id', keys[0] as string);
  }

  undo(keys: readonly string[], actionId: string): Promise<boolean> {
    return this.#call(() => this.#inner.undo(keys, actionId), 'Undoing an action', keys[0] as string);
  }

  sharesKeysWith(other: Store): boolean {
    return this.#inner.sharesKeysWith(other);
  }

  canDecideWith(other: Store): boolean {
    return this.#inner.canDecideWith(other);
  }

  connectionProblem(): ConnectionProblem | undefined {
    return this.#inner.connectionProblem?.();
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
  #call<T>(operation: () => Promise<T>, what: string, key: string): Promise<T> {
    const diagnose = () => this.#inner.connectionProblem?.();
    if (this.#breakers === undefined) return callStore(operation, this.#timeoutMs, what, diagnose);
    const breaker = this.#breakers.for(key);
    const gate = breaker.admit();
    if (gate === 'open') {
      const error = breaker.openError();
      return new Promise((_, reject) => setImmediate(reject, error));
    }
    return callStore(operation, this.#timeoutMs, what, diagnose).then(
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
}
