import type { ConnectionProblem } from '../errors/timeout-error.js';
import type { Store, StoreDecision, Tier } from '../core/store.js';
import { isFailureOfStore } from '../core/store-error-policy.js';
import { DomainBreakers, type CircuitStateChange, type NormalizedCircuitBreakerOptions } from './circuit-breaker.js';
import { callStore } from './store-call.js';

/** How a store is guarded. */
export interface StoreGuards {
  /** Longest wait for one call, in milliseconds. */
  readonly timeoutMs: number;
  /** The circuit breakers' thresholds; `false` for none. */
  readonly circuitBreaker: NormalizedCircuitBreakerOptions | false;
  /** Told of every change of a circuit's state, with the Cluster master it guards (undefined for the whole store). */
  readonly onCircuitChange: (node: string | undefined, change: CircuitStateChange) => void;
}

/**
 * A remote store whose every call is timed out, goes through the circuit
 * breaker of the failure domain that holds its key, and fails with our own
 * errors: so the tiered core knows none of it, and an in-memory store, which
 * can neither hang nor fail, pays for none of it.
 */
export class GuardedStore implements Store {
  readonly #inner: Store;
  readonly #timeoutMs: number;
  readonly #breakers: DomainBreakers | undefined;

  constructor(inner: Store, guards: StoreGuards) {
    this.#inner = inner;
    this.#timeoutMs = guards.timeoutMs;
    this.#breakers =
      guards.circuitBreaker === false ? undefined : new DomainBreakers(guards.circuitBreaker, inner.slotOwner?.bind(inner), guards.onCircuitChange);
  }

  get name(): string {
    return this.#inner.name;
  }

  attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string, cost?: number, singleUse?: boolean): Promise<StoreDecision> {
    return this.#call(() => this.#inner.attempt(tiers, now, actionId, cost, singleUse), 'Recording an attempt', (tiers[0] as Tier).key);
  }

  peek(tiers: readonly Tier[], now: number | undefined, cost?: number): Promise<StoreDecision> {
    return this.#call(() => this.#inner.peek(tiers, now, cost), 'Reading the window', (tiers[0] as Tier).key);
  }

  settle(tiers: readonly Tier[], now: number | undefined, actionId: string, cost: number): Promise<boolean> {
    return this.#call(() => this.#inner.settle(tiers, now, actionId, cost), 'Settling an action', (tiers[0] as Tier).key);
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

  /** Through the breaker of `key`'s domain; an open circuit fails on the next turn of the event loop (docs/guides/failure-behaviour.md says why). */
  #call<T>(operation: () => Promise<T>, what: string, key: string): Promise<T> {
    const diagnose = () => this.#inner.connectionProblem?.();
    if (this.#breakers === undefined) return callStore(operation, this.#timeoutMs, what, diagnose);
    const breaker = this.#breakers.for(key);
    const gate = breaker.admit();
    if (gate === 'open') {
      const error = breaker.openError();
      return new Promise((_, reject) => nextTurn(() => reject(error)));
    }
    return callStore(operation, this.#timeoutMs, what, diagnose).then(
      (value) => {
        breaker.succeeded(gate);
        return value;
      },
      (error: unknown) => {
        // Only a failure of the store says something about it; anything else (one decision's own) still ends a probe.
        if (isFailureOfStore(error)) breaker.failed(gate, error);
        else breaker.succeeded(gate);
        throw error;
      },
    );
  }
}

/** Runs `task` on the next turn of the event loop, never in a microtask: `setImmediate` where the runtime has it (Node, Bun, Deno), a 0 ms timer elsewhere. */
function nextTurn(task: () => void): void {
  if (typeof globalThis.setImmediate === 'function') globalThis.setImmediate(task);
  else setTimeout(task, 0);
}
