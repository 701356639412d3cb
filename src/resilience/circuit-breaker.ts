// The circuit breakers that keep a limiter from calling a store that keeps
// failing, one per failure domain (docs/semantics.md, "Failures"). A breaker
// keeps no timer (an open circuit ends when a call asks after the cooldown),
// so it never keeps a process alive and costs one comparison per call while
// the store is healthy.

import { StoreError } from '../errors/store-error.js';

/** How many failures open a circuit, and for how long (the `circuitBreaker` option, normalized). */
export interface NormalizedCircuitBreakerOptions {
  /** Consecutive store failures that open the circuit. */
  readonly failureThreshold: number;
  /** How long an open circuit keeps calls away from the store, in milliseconds. */
  readonly cooldownMs: number;
}

/** The default thresholds: open after 5 consecutive failures, probe again after 1 s. */
export const DEFAULT_CIRCUIT_BREAKER: NormalizedCircuitBreakerOptions = Object.freeze({ failureThreshold: 5, cooldownMs: 1_000 });

type CircuitState = 'closed' | 'open' | 'half-open';

/** What {@link CircuitBreaker.admit} tells a call: go to the store, go as the one probe of a half-open circuit, or not at all. */
type CircuitGate = 'call' | 'probe' | 'open';

/** A change of a circuit's state. */
export interface CircuitStateChange {
  readonly from: CircuitState;
  readonly to: CircuitState;
  /** Store failures in a row when the change happened (0 once closed again). */
  readonly consecutiveFailures: number;
  /** The failure that opened the circuit, or kept it open; absent when it closes or a probe starts. */
  readonly failure?: unknown;
}

interface CircuitBreakerHooks {
  /** The Cluster master (`host:port`) whose calls it guards, named in its open error; undefined for a whole store. */
  node?: string | undefined;
  /** Called synchronously on every change of state; it must not throw. */
  onStateChange?: (change: CircuitStateChange) => void;
  /** A monotonic clock in milliseconds. @default performance.now */
  now?: () => number;
}

/**
 * The breaker of one failure domain. Each call asks {@link admit} first and
 * reports the outcome of a `'call'` or a `'probe'` with {@link succeeded} or
 * {@link failed}; only store failures count as failures.
 */
export class CircuitBreaker {
  /** The thresholds this breaker applies. */
  readonly options: NormalizedCircuitBreakerOptions;
  #state: CircuitState = 'closed';
  #failures = 0;
  #openedAt = 0;
  #lastFailure: unknown;
  readonly #now: () => number;
  readonly #onStateChange: ((change: CircuitStateChange) => void) | undefined;
  readonly #node: string | undefined;

  constructor(options: NormalizedCircuitBreakerOptions = DEFAULT_CIRCUIT_BREAKER, hooks: CircuitBreakerHooks = {}) {
    this.options = options;
    this.#now = hooks.now ?? (() => performance.now());
    this.#onStateChange = hooks.onStateChange;
    this.#node = hooks.node;
  }

  /** The current state; an open circuit whose cooldown has passed still reads `open` until a call asks. */
  get state(): CircuitState {
    return this.#state;
  }

  /** Store failures in a row so far. */
  get consecutiveFailures(): number {
    return this.#failures;
  }

  /**
   * `'call'` while closed. While open: `'open'` until the cooldown has passed
   * since it opened, then `'probe'` for one call (the circuit turns
   * half-open) and `'open'` for every other call until the probe reports.
   */
  admit(): CircuitGate {
    if (this.#state === 'closed') return 'call';
    if (this.#state === 'half-open' || this.#now() - this.#openedAt < this.options.cooldownMs) return 'open';
    this.#change('half-open', undefined);
    return 'probe';
  }

  /**
   * A probe that succeeds closes the circuit; a call that succeeds while
   * closed resets the count of failures. The outcome of a call admitted
   * before the circuit opened changes nothing once it is open.
   */
  succeeded(gate: Exclude<CircuitGate, 'open'>): void {
    if (this.#state !== (gate === 'probe' ? 'half-open' : 'closed')) return;
    this.#failures = 0;
    if (gate === 'probe') this.#change('closed', undefined);
  }

  /** A probe that fails opens the circuit for another cooldown; while closed, the `failureThreshold`-th failure in a row opens it. */
  failed(gate: Exclude<CircuitGate, 'open'>, failure?: unknown): void {
    if (this.#state !== (gate === 'probe' ? 'half-open' : 'closed')) return;
    this.#failures += 1;
    if (gate === 'probe' || this.#failures >= this.options.failureThreshold) this.#open(failure);
  }

  /**
   * What a call receives while the circuit is open: a {@link StoreError} with
   * code `'CIRCUIT_OPEN'`, naming the Cluster master it guards (if any), with
   * the failure that opened the circuit (or kept it open) as `cause`.
   */
  openError(): StoreError {
    const { failureThreshold, cooldownMs } = this.options;
    const last = this.#lastFailure instanceof Error ? `; the last: ${this.#lastFailure.message}` : '';
    const whose = this.#node === undefined ? 'its circuit breaker' : `the circuit breaker of the Cluster master ${this.#node}`;
    return new StoreError(
      `The store was not called: ${whose} is open after ${failureThreshold} consecutive failures${last}. ` +
        `One call probes the store again ${cooldownMs} ms after the circuit opened`,
      { code: 'CIRCUIT_OPEN', cause: this.#lastFailure },
    );
  }

  #open(failure: unknown): void {
    this.#lastFailure = failure;
    this.#openedAt = this.#now();
    this.#change('open', failure);
  }

  #change(to: CircuitState, failure: unknown): void {
    const from = this.#state;
    this.#state = to;
    const consecutiveFailures = this.#failures;
    this.#onStateChange?.(failure === undefined ? { from, to, consecutiveFailures } : { from, to, consecutiveFailures, failure });
  }
}

/** Past this many Cluster masters, breakers that are closed and have no failure are forgotten (a topology that keeps changing). */
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
   * @param slotOwner The master (`host:port`) that holds a key now, by the client's slot map (so a promoted replica
   *   gets a closed circuit of its own); undefined for a store of one domain.
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
      if (this.#byNode.size >= MAX_REMEMBERED_DOMAINS) {
        for (const [known, other] of this.#byNode) if (other.state === 'closed' && other.consecutiveFailures === 0) this.#byNode.delete(known);
      }
      breaker = this.#breaker(node);
      this.#byNode.set(node, breaker);
    }
    return breaker;
  }

  #breaker(node: string | undefined): CircuitBreaker {
    return new CircuitBreaker(this.#options, { node, onStateChange: (change) => this.#onStateChange(node, change) });
  }
}
