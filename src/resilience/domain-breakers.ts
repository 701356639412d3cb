// One circuit breaker per failure domain of a store: what fails together.
// A standalone Redis, a Sentinel-managed primary and the in-memory store are
// one domain (the client's connection); a Redis Cluster is one domain per
// master, so a dead master opens the circuit for the ids whose slots it holds
// and for no other. The master of a key is asked of the client's slot map at
// call time: once a replica is promoted, the map names it, and its circuit
// starts closed.

import { CircuitBreaker, type CircuitStateChange, type NormalizedCircuitBreakerOptions } from './circuit-breaker.js';

/** Past this many domains, breakers of masters that are closed and have no failure are forgotten (a topology that keeps changing). */
const MAX_REMEMBERED_DOMAINS = 64;

/** The circuit breakers of a limiter or a stack: one for the store, or one per Cluster master. */
export class DomainBreakers {
  readonly #options: NormalizedCircuitBreakerOptions;
  readonly #slotOwner: ((key: string) => string | undefined) | undefined;
  readonly #onStateChange: (node: string | undefined, change: CircuitStateChange) => void;
  /** The one breaker of a store of one domain, and of Cluster keys whose master the client does not know yet. */
  #single: CircuitBreaker | undefined;
  readonly #byNode = new Map<string, CircuitBreaker>();

  /**
   * @param slotOwner The master (`host:port`) that holds a key now (the adapter's `slotOwner`); undefined for a store of one domain.
   * @param onStateChange Told of every change of a breaker's state, with the master it guards (undefined for the single breaker).
   */
  constructor(
    options: NormalizedCircuitBreakerOptions,
    slotOwner: ((key: string) => string | undefined) | undefined,
    onStateChange: (node: string | undefined, change: CircuitStateChange) => void,
  ) {
    this.#options = options;
    this.#slotOwner = slotOwner;
    this.#onStateChange = onStateChange;
  }

  /** The breaker of the domain that holds `key` at this moment. */
  for(key: string): CircuitBreaker {
    const node = this.#slotOwner?.(key);
    if (node === undefined) return (this.#single ??= this.#breaker(undefined));
    let breaker = this.#byNode.get(node);
    if (breaker === undefined) {
      if (this.#byNode.size >= MAX_REMEMBERED_DOMAINS) this.#forgetHealthy();
      breaker = this.#breaker(node);
      this.#byNode.set(node, breaker);
    }
    return breaker;
  }

  #breaker(node: string | undefined): CircuitBreaker {
    return new CircuitBreaker(this.#options, { node, onStateChange: (change) => this.#onStateChange(node, change) });
  }

  /** Forgets the breakers that hold nothing worth keeping: closed, without a failure. */
  #forgetHealthy(): void {
    for (const [node, breaker] of this.#byNode) {
      if (breaker.state === 'closed' && breaker.consecutiveFailures === 0) this.#byNode.delete(node);
    }
  }
}
