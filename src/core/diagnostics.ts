// What the limiters publish on `node:diagnostics_channel` (docs/guides/observability.md).
// Each publish function checks `hasSubscribers` first and takes its fields as
// arguments, so an unobserved call allocates nothing. The module is used where
// the runtime has one (Node, Bun, Deno, workerd with `nodejs_compat`: see
// core/node-builtin.ts) and not imported: elsewhere the channels are silent
// stand-ins that never have subscribers.

import { withNodeBuiltin } from './node-builtin.js';
import type { StoreError } from '../errors/store-error.js';
import type { TimeoutError } from '../errors/timeout-error.js';

/** Name of the channel of decisions: one {@link DecisionMessage} per decided attempt or dry run. */
export const DECISION_CHANNEL = 'rolling-window-limiter:decision';
/** Name of the channel of store failures: one {@link StoreErrorMessage} per failure handled by `onStoreError`. */
export const STORE_ERROR_CHANNEL = 'rolling-window-limiter:store-error';
/** Name of the channel of circuit-breaker changes: one {@link CircuitMessage} per change of state. */
export const CIRCUIT_CHANNEL = 'rolling-window-limiter:circuit';
/** Name of the channel of warnings: one {@link WarningMessage} per warning, the same as its `process.emitWarning`. */
export const WARNING_CHANNEL = 'rolling-window-limiter:warning';

/** What of a `diagnostics_channel` channel the publish functions use. */
interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/** A channel where the runtime has no `diagnostics_channel`: nobody can subscribe. */
const SILENT: Channel = { hasSubscribers: false, publish: () => undefined };

let decisionChannel = SILENT;
let storeErrorChannel = SILENT;
let circuitChannel = SILENT;
let warningChannel = SILENT;

// At import, where `process.getBuiltinModule` exists (Node 20.16+ and 22.3+), so that a subscriber gets every message;
// where it does not (an older Node) or throws (Next.js's edge runtime), the channels stay silent.
withNodeBuiltin<{ channel(this: void, name: string): Channel }>('node:diagnostics_channel', ({ channel }) => {
  decisionChannel = channel(DECISION_CHANNEL);
  storeErrorChannel = channel(STORE_ERROR_CHANNEL);
  circuitChannel = channel(CIRCUIT_CHANNEL);
  warningChannel = channel(WARNING_CHANNEL);
});

/** Published on `rolling-window-limiter:decision` for every decision a limiter or a stack returns. */
export interface DecisionMessage {
  /** The namespace of the limiter, or of every tier of a stack in its order. */
  readonly namespaces: readonly string[];
  /** Whether the action was blocked (for a dry run: would be). */
  readonly blocked: boolean;
  /** `true` for `wouldLimit` and `wouldLimitWithInfo`, which record nothing. */
  readonly dryRun: boolean;
  /** Who decided: `'store'`, or the `onStoreError` policy that stood in for a failed store or an open circuit. */
  readonly decidedBy: 'store' | 'allow' | 'block' | 'fallback';
  /** From the call to the decision, in milliseconds (`performance.now()` resolution). */
  readonly durationMs: number;
}

/** The policies of `onStoreError`, as {@link StoreErrorMessage} names them. */
export type StoreErrorPolicyName = 'throw' | 'allow' | 'block' | 'fallback';

/** Published on `rolling-window-limiter:store-error` for every store failure (or open circuit) a call ran into. */
export interface StoreErrorMessage {
  /** The namespace of the limiter, or of every tier of a stack in its order. */
  readonly namespaces: readonly string[];
  /** The failure: a `StoreError` (code `'CIRCUIT_OPEN'` when the circuit kept the call from the store) or a `TimeoutError`. */
  readonly error: StoreError | TimeoutError;
  /** The `onStoreError` policy applied: `'throw'` means the call rejected with `error`. */
  readonly policy: StoreErrorPolicyName;
}

/** Published on `rolling-window-limiter:circuit` when a circuit breaker changes state. */
export interface CircuitMessage {
  /** The namespace of the limiter, or of every tier of a stack in its order. */
  readonly namespaces: readonly string[];
  /** On a Redis Cluster, the master (`host:port`) whose circuit changed (each has its own); undefined for a store that fails as one. */
  readonly node: string | undefined;
  /** The new state: `'open'` (calls skip the store), `'half-open'` (one call probes it), `'closed'` (calls go to it). */
  readonly state: 'open' | 'half-open' | 'closed';
  /** The state before. */
  readonly previous: 'open' | 'half-open' | 'closed';
  /** Store failures in a row when the change happened (0 once closed). */
  readonly consecutiveFailures: number;
}

/**
 * Published on `rolling-window-limiter:warning` for something that does not
 * fail a call but undermines the limits (an evicting Redis), once, when it is
 * found, with the warning also given to `process.emitWarning` where there is one.
 */
export interface WarningMessage {
  /** A stable code, the warning's `code` too, e.g. `'RATE_LIMITER_EVICTING_POLICY'`. */
  readonly code: string;
  /** What is wrong and what to do, as the warning says it. */
  readonly message: string;
  /** What holds the state, as a store names it (e.g. `ioredis`, `node-redis cluster`). */
  readonly store: string;
}

/** When a decision starts, for {@link publishDecision}: `performance.now()` while someone subscribes, else `-1` (no clock read). */
export function decisionStartTime(): number {
  return decisionChannel.hasSubscribers ? performance.now() : -1;
}

/** Publishes a {@link DecisionMessage} if anyone subscribes and the decision's start was timed (not `-1`). */
export function publishDecision(
  namespaces: readonly string[],
  blocked: boolean,
  dryRun: boolean,
  decidedBy: DecisionMessage['decidedBy'],
  startedAt: number,
): void {
  if (!decisionChannel.hasSubscribers || startedAt < 0) return;
  decisionChannel.publish({ namespaces, blocked, dryRun, decidedBy, durationMs: performance.now() - startedAt } satisfies DecisionMessage);
}

/** Publishes a {@link StoreErrorMessage} if anyone subscribes. */
export function publishStoreError(namespaces: readonly string[], error: StoreError | TimeoutError, policy: StoreErrorPolicyName): void {
  if (storeErrorChannel.hasSubscribers) storeErrorChannel.publish({ namespaces, error, policy } satisfies StoreErrorMessage);
}

/** Publishes a {@link CircuitMessage} if anyone subscribes. */
export function publishCircuit(
  namespaces: readonly string[],
  node: string | undefined,
  state: CircuitMessage['state'],
  previous: CircuitMessage['previous'],
  consecutiveFailures: number,
): void {
  if (circuitChannel.hasSubscribers) circuitChannel.publish({ namespaces, node, state, previous, consecutiveFailures } satisfies CircuitMessage);
}

/** Publishes a {@link WarningMessage} if anyone subscribes. */
export function publishWarning(code: string, message: string, store: string): void {
  if (warningChannel.hasSubscribers) warningChannel.publish({ code, message, store } satisfies WarningMessage);
}

/**
 * Gives a warning: to `process.emitWarning` (type `RateLimiterWarning`, with its code) where the runtime has one,
 * looked up on `globalThis` (no Node built-in is imported), and on the warning channel.
 */
export function emitWarning(code: string, message: string, store: string): void {
  try {
    const host = (globalThis as { process?: { emitWarning?: (warning: string, options: { type: string; code: string }) => void } }).process;
    if (typeof host?.emitWarning === 'function') host.emitWarning(message, { type: 'RateLimiterWarning', code });
  } catch {
    // A sandbox's stand-in that throws (Next.js's edge runtime has every Node.js API it lacks throw): the channel still has it.
  }
  publishWarning(code, message, store);
}

/** The codes warned about by {@link warnOnce} in this process. */
const warnedCodes = new Set<string>();

/** {@link emitWarning}, at most once per code in this process. */
export function warnOnce(code: string, message: string, store: string): void {
  if (warnedCodes.has(code)) return;
  warnedCodes.add(code);
  emitWarning(code, message, store);
}
