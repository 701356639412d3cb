// The circuit breaker that keeps a limiter from calling a store that keeps
// failing: a state machine with no timers of its own (the open state ends
// when a call asks after the cooldown), so it never keeps a process alive and
// costs one comparison per call while the store is healthy.
//
//   closed ──(failureThreshold consecutive failures)──▶ open
//   open ──(a call after cooldownMs)──▶ half-open: that call is the probe
//   half-open ──(the probe succeeds)──▶ closed
//   half-open ──(the probe fails)──▶ open, for another cooldownMs
//
// While open, and while the probe is in flight, every other call is told
// 'open' and decided by the limiter's `onStoreError` without the store.

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

/** Where a circuit stands: calls go to the store (`closed`), none do (`open`), or one probe does (`half-open`). */
export type CircuitState = 'closed' | 'open' | 'half-open';

/**
 * What {@link CircuitBreaker.admit} tells a call: go to the store (`'call'`),
 * go to the store as the one probe of a half-open circuit (`'probe'`), or do
 * not go to the store (`'open'`: decide by `onStoreError` at once).
 */
export type CircuitGate = 'call' | 'probe' | 'open';

/** A change of a circuit's state, as {@link CircuitBreakerHooks.onStateChange} receives it. */
export interface CircuitStateChange {
  /** The state before. */
  readonly from: CircuitState;
  /** The state after. */
  readonly to: CircuitState;
  /** Store failures in a row when the change happened (0 once closed again). */
  readonly consecutiveFailures: number;
  /** The failure that opened the circuit, or kept it open; absent when it closes or a probe starts. */
  readonly failure?: unknown;
}

/** What a {@link CircuitBreaker} guards, what it calls, and the clock it reads. */
export interface CircuitBreakerHooks {
  /** The Cluster master (`host:port`) whose calls it guards, named in its open error; undefined for a whole store. */
  node?: string | undefined;
  /**
   * Called synchronously on every change of state, e.g. to publish it on a
   * diagnostics channel. It must not throw.
   */
  onStateChange?: (change: CircuitStateChange) => void;
  /** A monotonic clock in milliseconds. @default performance.now */
  now?: () => number;
}

/**
 * The breaker around one store. Wire it around each store call:
 *
 * ```ts
 * const gate = breaker.admit();
 * if (gate === 'open') return decideByPolicy(breaker.openError());
 * try {
 *   const answer = await callStore();
 *   breaker.succeeded(gate);
 *   return answer;
 * } catch (error) {
 *   if (isStoreFailure(error)) breaker.failed(gate, error);
 *   throw error;
 * }
 * ```
 *
 * Only store failures (a {@link StoreError} or a `TimeoutError`) should be
 * reported as failures; a bad id says nothing about the store.
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

  /**
   * @param options The thresholds (without a breaker, make none).
   * @param hooks The state-change hook, and a clock for tests.
   */
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

  /** Store failures in a row so far (reset by any success while closed, and by a successful probe). */
  get consecutiveFailures(): number {
    return this.#failures;
  }

  /**
   * Asks whether a call may go to the store. Closed: `'call'`. Open, before
   * the cooldown has passed since it opened: `'open'`. Open after that: this
   * call becomes the probe (`'probe'`, the circuit turns half-open). Half-open:
   * `'open'` for every call but the probe. Report the outcome of every
   * `'call'` and `'probe'` with {@link succeeded} or {@link failed}.
   */
  admit(): CircuitGate {
    if (this.#state === 'closed') return 'call';
    if (this.#state === 'half-open' || this.#now() - this.#openedAt < this.options.cooldownMs) return 'open';
    this.#change('half-open', undefined);
    return 'probe';
  }

  /**
   * Reports a store call that succeeded. A probe closes the circuit; a call
   * admitted while closed resets the count of failures. The outcome of a call
   * admitted before the circuit opened changes nothing once it is open.
   */
  succeeded(gate: Exclude<CircuitGate, 'open'>): void {
    if (gate === 'probe') {
      if (this.#state !== 'half-open') return;
      this.#failures = 0;
      this.#lastFailure = undefined;
      this.#change('closed', undefined);
      return;
    }
    if (this.#state === 'closed') this.#failures = 0;
  }

  /**
   * Reports a store call that failed or timed out. A failed probe opens the
   * circuit again for another cooldown; while closed, the
   * `failureThreshold`-th failure in a row opens it. The outcome of a call
   * admitted before the circuit opened changes nothing once it is open.
   */
  failed(gate: Exclude<CircuitGate, 'open'>, failure?: unknown): void {
    if (gate === 'probe') {
      if (this.#state !== 'half-open') return;
      this.#failures += 1;
      this.#open(failure);
      return;
    }
    if (this.#state !== 'closed') return;
    this.#failures += 1;
    this.#lastFailure = failure;
    if (this.#failures >= this.options.failureThreshold) this.#open(failure);
  }

  /**
   * The error a call receives under `onStoreError: 'throw'` while the circuit
   * is open: a {@link StoreError} with code `'CIRCUIT_OPEN'`, naming the
   * Cluster master it guards (if it guards one), carrying the failure that
   * opened the circuit (or kept it open) as `cause`.
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
    if (this.#onStateChange === undefined) return;
    const change: CircuitStateChange =
      failure === undefined ? { from, to, consecutiveFailures: this.#failures } : { from, to, consecutiveFailures: this.#failures, failure };
    this.#onStateChange(change);
  }
}
