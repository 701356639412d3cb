import { TimeoutError, type ConnectionProblem } from '../errors/timeout-error.js';
import { StoreError } from '../errors/store-error.js';
import type { Store, StoreDecision, Tier } from '../core/store.js';
import { isFailureOfStore, refusedByStore } from '../core/store-error-policy.js';
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

/** What one call saw of its key's slot moving: the last refusal, and whether a try is out. */
interface SlotMoves {
  lastRefusal: unknown;
  tryOut: boolean;
}

/**
 * A remote store whose every call is timed out, goes through the circuit
 * breaker of the failure domain that holds its key, and fails with our own
 * errors: so the tiered core knows none of it, and an in-memory store, which
 * can neither hang nor fail, pays for none of it. On a Redis Cluster, a call
 * refused because its key's slot is moving (the store's `slotMovePause`) is
 * sent again until it runs or its timeout passes (docs/guides/redis-cluster.md,
 * "Resharding"); one whose timeout passes so fails with an error that says so,
 * which does not count against the breaker.
 */
export class GuardedStore implements Store {
  readonly #inner: Store;
  readonly #timeoutMs: number;
  readonly #breakers: DomainBreakers | undefined;
  readonly #slotMovePause: ((error: unknown, retry: number) => number | undefined) | undefined;

  constructor(inner: Store, guards: StoreGuards) {
    this.#inner = inner;
    this.#timeoutMs = guards.timeoutMs;
    this.#slotMovePause = inner.slotMovePause;
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
    const call = this.#slotMovePause === undefined ? this.#timed(operation, what) : this.#timedWhileSlotMoves(operation, what, this.#slotMovePause);
    if (this.#breakers === undefined) return call();
    const breaker = this.#breakers.for(key);
    const gate = breaker.admit();
    if (gate === 'open') {
      const error = breaker.openError();
      return new Promise((_, reject) => nextTurn(() => reject(error)));
    }
    return call().then(
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

  /** The operation, timed out. */
  #timed<T>(operation: () => Promise<T>, what: string): () => Promise<T> {
    return () => callStore(operation, this.#timeoutMs, what, () => this.#inner.connectionProblem?.());
  }

  /**
   * The operation, timed out, and sent again while the store refuses it because its slot moves, until the timeout:
   * a call whose timeout passes so fails with {@link slotKeptMoving}.
   */
  #timedWhileSlotMoves<T>(operation: () => Promise<T>, what: string, pauseAfter: (error: unknown, retry: number) => number | undefined): () => Promise<T> {
    return () => {
      const moves: SlotMoves = { lastRefusal: undefined, tryOut: false };
      const deadline = Date.now() + this.#timeoutMs;
      const sent = () => sendWhileSlotMoves(operation, pauseAfter, deadline, moves, what, this.#timeoutMs);
      return callStore(sent, this.#timeoutMs, what, () => this.#inner.connectionProblem?.()).catch((error: unknown) => {
        // The timeout passed while a try after a refusal was out: the slot was still moving.
        throw error instanceof TimeoutError && moves.lastRefusal !== undefined ? slotKeptMoving(what, this.#timeoutMs, moves.lastRefusal, moves.tryOut) : error;
      });
    };
  }
}

/**
 * Sends `operation` until it is not refused for a moving slot: after each refusal, the pause `pauseAfter` asks for,
 * unless that would pass `deadline` (the call's timeout), when it fails with {@link slotKeptMoving}. Nothing is
 * sent twice that ran: a refused call did not run.
 */
async function sendWhileSlotMoves<T>(
  operation: () => Promise<T>,
  pauseAfter: (error: unknown, retry: number) => number | undefined,
  deadline: number,
  moves: SlotMoves,
  what: string,
  timeoutMs: number,
): Promise<T> {
  for (let retry = 1; ; retry++) {
    // A pause that ended after the timeout (timers run late under load): nobody waits for the answer any more.
    if (retry > 1 && Date.now() >= deadline) throw slotKeptMoving(what, timeoutMs, moves.lastRefusal, false);
    let pauseMs: number | undefined;
    moves.tryOut = true;
    try {
      return await operation();
    } catch (error) {
      pauseMs = pauseAfter(error, retry);
      if (pauseMs === undefined) throw error;
      moves.lastRefusal = error;
      if (Date.now() + pauseMs >= deadline) throw slotKeptMoving(what, timeoutMs, error, false);
    } finally {
      moves.tryOut = false;
    }
    if (pauseMs > 0) await pause(pauseMs);
  }
}

/**
 * The failure of a call whose key's slot moved between Cluster masters for its whole timeout: a store error that
 * does not count against the circuit breaker (a reshard is no outage), with the last refusal as its cause.
 */
function slotKeptMoving(what: string, timeoutMs: number, refusal: unknown, lastTryOut: boolean): StoreError {
  const answer = refusal instanceof Error ? refusal.message : String(refusal);
  return refusedByStore(
    new StoreError(
      `${what} failed: its key's hash slot was moving between Redis Cluster masters for the whole ${timeoutMs} ms \`timeout\`, ` +
        `and every try was refused (the last answer: ${answer})` +
        (lastTryOut ? '; the last try was still out, and may yet be recorded' : '; nothing was recorded') +
        '. A reshard moves each slot within a second or so: a longer `timeout` rides out a slower one',
      { cause: refusal },
    ),
  );
}

/** Resolves after `ms` (an unreferenced timer where the runtime has them). */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    (timer as { unref?: () => void }).unref?.();
  });
}

/** Runs `task` on the next turn of the event loop, never in a microtask: `setImmediate` where the runtime has it (Node, Bun, Deno), a 0 ms timer elsewhere. */
function nextTurn(task: () => void): void {
  if (typeof globalThis.setImmediate === 'function') globalThis.setImmediate(task);
  else setTimeout(task, 0);
}
