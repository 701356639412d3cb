// `rolling-window-limiter/otel`: the limiters' diagnostics channels as
// OpenTelemetry metrics. The names follow ASP.NET Core's rate limiting metrics
// (`aspnetcore.rate_limiting.*`), the one widely used model while OpenTelemetry
// has no semantic convention for rate limiting: a counter of decisions with
// `rate_limiting.result` = `acquired` | `rejected`, a histogram of their time in
// seconds, a counter of store failures with `error.type`, and the circuits.
// OpenTelemetry is loaded by this entry only; the main entry imports nothing of
// it. The channels are found as the core finds them (core/node-builtin.ts), so
// the entry runs wherever the runtime has `node:diagnostics_channel`.

import { metrics, ValueType, type Attributes, type Meter, type ObservableResult } from '@opentelemetry/api';
import {
  CIRCUIT_CHANNEL,
  DECISION_CHANNEL,
  STORE_ERROR_CHANNEL,
  type CircuitMessage,
  type DecisionMessage,
  type StoreErrorMessage,
} from '../../core/diagnostics.js';
import { withNodeBuiltin } from '../../core/node-builtin.js';

/** The name of the meter that {@link registerRateLimiterMetrics} takes from the global `MeterProvider` when given none. */
export const METER_NAME = 'rolling-window-limiter';

/** The names of the instruments {@link registerRateLimiterMetrics} creates. */
export const METRIC_NAMES = {
  /** Counter (`{decision}`): one per decision returned by `limit`, `limitWithInfo`, `wouldLimit` or `wouldLimitWithInfo`. */
  decisions: 'rate_limiting.decisions',
  /** Histogram (`s`): from the call to the decision, mostly the store's round trip. */
  decisionDuration: 'rate_limiting.decision.duration',
  /** Counter (`{error}`): store failures, timeouts and calls an open circuit kept from the store. */
  storeErrors: 'rate_limiting.store.errors',
  /** Counter (`{change}`): changes of a circuit breaker's state, by the state entered. */
  circuitChanges: 'rate_limiting.circuit.changes',
  /** Asynchronous up-down counter (`{circuit}`): 1 per circuit open or half-open, 0 per circuit closed again. */
  openCircuits: 'rate_limiting.open_circuits',
} as const;

/** The names of the attributes the instruments of {@link registerRateLimiterMetrics} carry. */
export const ATTRIBUTE_NAMES = {
  /** The limiter's `namespace`; for a stack, its tiers' namespaces in order, joined by `+` (e.g. `push:minute+push:day`). */
  namespace: 'rate_limiting.namespace',
  /** `acquired` (the action was allowed) or `rejected` (blocked); for a dry run, what the action would be. */
  result: 'rate_limiting.result',
  /** Who decided: `store`, or the `onStoreError` policy that stood in for the store (`allow`, `block`, `fallback`). */
  decidedBy: 'rate_limiting.decided_by',
  /** `true` for `wouldLimit` and `wouldLimitWithInfo`, which record nothing. */
  dryRun: 'rate_limiting.dry_run',
  /** The failure's code: `ERR_RATE_LIMITER_STORE`, `ERR_RATE_LIMITER_TIMEOUT`, or `CIRCUIT_OPEN`. */
  errorType: 'error.type',
  /** The `onStoreError` policy applied to a store failure: `throw` (the call rejected), `allow`, `block` or `fallback`. */
  onStoreError: 'rate_limiting.on_store_error',
  /** The state a circuit entered: `open`, `half-open` or `closed`. */
  circuitState: 'rate_limiting.circuit.state',
  /** On a Redis Cluster, the master (`host:port`) whose circuit it is; absent for a store that fails as one. */
  circuitNode: 'rate_limiting.circuit.node',
} as const;

/**
 * The bucket boundaries, in seconds, advised for {@link METRIC_NAMES}`.decisionDuration`: from 0.1 ms (in memory)
 * through a Redis round trip to a timeout. A `View` of the SDK may set others.
 */
export const DECISION_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
]);

/** The options of {@link registerRateLimiterMetrics}. */
export interface RateLimiterMetricsOptions {
  /**
   * The meter that creates the instruments.
   * @default metrics.getMeter('rolling-window-limiter'), from the global `MeterProvider`
   */
  readonly meter?: Meter;
}

/** What of `node:diagnostics_channel` the entry uses. */
interface DiagnosticsChannel {
  subscribe(this: void, name: string, listener: (message: unknown) => void): void;
  unsubscribe(this: void, name: string, listener: (message: unknown) => void): boolean;
}

/** One circuit, as the last change published for it left it. */
interface CircuitSeen {
  readonly attributes: Attributes;
  open: boolean;
}

/** A stack's namespaces joined once: the core publishes the same frozen array for every call of one limiter. */
const joined = new WeakMap<readonly string[], string>();
function namespaceOf(namespaces: readonly string[]): string {
  let name = joined.get(namespaces);
  if (name === undefined) {
    name = namespaces.join('+');
    joined.set(namespaces, name);
  }
  return name;
}

/**
 * Turns the limiters' diagnostics channels into OpenTelemetry instruments
 * ({@link METRIC_NAMES}, with the attributes of {@link ATTRIBUTE_NAMES}) and
 * returns the function that stops: it unsubscribes from the channels and
 * removes the callback of the open circuits.
 *
 * Every limiter of the process is counted, whichever copy of the library made
 * it (the ES module and the CommonJS build alike), from the first call that
 * starts after this one. Call it once per meter: a second call counts every
 * event twice. Where the runtime has no `node:diagnostics_channel`, nothing is
 * published and the instruments stay empty.
 *
 * @example
 * ```ts
 * import { registerRateLimiterMetrics } from 'rolling-window-limiter/otel';
 * const stop = registerRateLimiterMetrics(); // the global MeterProvider's meter 'rolling-window-limiter'
 * ```
 */
export function registerRateLimiterMetrics(options: RateLimiterMetricsOptions = {}): () => void {
  const meter = options.meter ?? metrics.getMeter(METER_NAME);
  const decisions = meter.createCounter(METRIC_NAMES.decisions, {
    description: 'Rate limiting decisions, by result and by who decided (the store, or the onStoreError policy).',
    unit: '{decision}',
    valueType: ValueType.INT,
  });
  const decisionDuration = meter.createHistogram(METRIC_NAMES.decisionDuration, {
    description: 'Time from the call to the rate limiting decision.',
    unit: 's',
    advice: { explicitBucketBoundaries: [...DECISION_DURATION_BUCKETS] },
  });
  const storeErrors = meter.createCounter(METRIC_NAMES.storeErrors, {
    description: 'Rate limiter store failures, timeouts and calls kept from the store by an open circuit.',
    unit: '{error}',
    valueType: ValueType.INT,
  });
  const circuitChanges = meter.createCounter(METRIC_NAMES.circuitChanges, {
    description: 'Changes of state of the rate limiters’ circuit breakers, by the state entered.',
    unit: '{change}',
    valueType: ValueType.INT,
  });
  const openCircuits = meter.createObservableUpDownCounter(METRIC_NAMES.openCircuits, {
    description: 'Rate limiter circuits that are open or half-open (calls decided without the store, or one probing it).',
    unit: '{circuit}',
    valueType: ValueType.INT,
  });

  const circuits = new Map<string, CircuitSeen>();
  const observeCircuits = (result: ObservableResult): void => {
    for (const circuit of circuits.values()) result.observe(circuit.open ? 1 : 0, circuit.attributes);
  };
  openCircuits.addCallback(observeCircuits);

  const onDecision = (message: unknown): void => {
    const { namespaces, blocked, dryRun, decidedBy, durationMs } = message as DecisionMessage;
    const namespace = namespaceOf(namespaces);
    decisions.add(1, {
      [ATTRIBUTE_NAMES.namespace]: namespace,
      [ATTRIBUTE_NAMES.result]: blocked ? 'rejected' : 'acquired',
      [ATTRIBUTE_NAMES.decidedBy]: decidedBy,
      [ATTRIBUTE_NAMES.dryRun]: dryRun,
    });
    decisionDuration.record(durationMs / 1_000, { [ATTRIBUTE_NAMES.namespace]: namespace, [ATTRIBUTE_NAMES.decidedBy]: decidedBy });
  };
  const onStoreError = (message: unknown): void => {
    const { namespaces, error, policy } = message as StoreErrorMessage;
    storeErrors.add(1, {
      [ATTRIBUTE_NAMES.namespace]: namespaceOf(namespaces),
      [ATTRIBUTE_NAMES.errorType]: error.code,
      [ATTRIBUTE_NAMES.onStoreError]: policy,
    });
  };
  const onCircuit = (message: unknown): void => {
    const { namespaces, node, state } = message as CircuitMessage;
    const namespace = namespaceOf(namespaces);
    const attributes: Attributes = { [ATTRIBUTE_NAMES.namespace]: namespace };
    if (node !== undefined) attributes[ATTRIBUTE_NAMES.circuitNode] = node;
    circuitChanges.add(1, { ...attributes, [ATTRIBUTE_NAMES.circuitState]: state });
    const key = `${namespace}\u0000${node ?? ''}`;
    const seen = circuits.get(key);
    if (seen === undefined) circuits.set(key, { attributes, open: state !== 'closed' });
    else seen.open = state !== 'closed';
  };

  const listeners: ReadonlyArray<readonly [string, (message: unknown) => void]> = [
    [DECISION_CHANNEL, onDecision],
    [STORE_ERROR_CHANNEL, onStoreError],
    [CIRCUIT_CHANNEL, onCircuit],
  ];
  let channels: DiagnosticsChannel | undefined;
  withNodeBuiltin<DiagnosticsChannel>('node:diagnostics_channel', (module) => {
    channels = module;
    for (const [name, listener] of listeners) module.subscribe(name, listener);
  });

  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (channels !== undefined) for (const [name, listener] of listeners) channels.unsubscribe(name, listener);
    openCircuits.removeCallback(observeCircuits);
    circuits.clear();
  };
}
