// Prometheus metrics from the limiter's diagnostics channels, with prom-client:
// a counter of decisions by namespace and outcome, a histogram of how long
// they took, a counter of store failures by policy and code, and a gauge of
// each circuit's state. The library itself depends on nothing: it publishes on
// `node:diagnostics_channel`, and whoever wants metrics subscribes.
//
// It runs two limiters: one in memory (40 attempts at 10 per second: 10
// allowed, 30 blocked), and one on a Redis that refuses every connection
// (a port nothing listens on), with `onStoreError: 'allow'`, so that 20
// attempts meet store failures, the circuit breaker opens after 5 of them, and
// the other 15 are decided at once without Redis. Then it prints the metrics
// as Prometheus would scrape them.
//
//   npx tsx examples/prometheus-metrics.ts           # print the metrics
//   npx tsx examples/prometheus-metrics.ts --check   # and fail unless every expected series is there

import { subscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  CIRCUIT_CHANNEL,
  DECISION_CHANNEL,
  RollingRateLimiter,
  STORE_ERROR_CHANNEL,
  type CircuitMessage,
  type DecisionMessage,
  type StoreErrorMessage,
} from '../src/index.js';

const registry = new Registry();
const decisions = new Counter({
  name: 'rate_limiter_decisions_total',
  help: 'Decisions, by limiter namespace, outcome and who decided (the store, or the onStoreError policy).',
  labelNames: ['namespace', 'outcome', 'decided_by'] as const,
  registers: [registry],
});
const decisionSeconds = new Histogram({
  name: 'rate_limiter_decision_duration_seconds',
  help: 'Time from the call to the decision.',
  labelNames: ['namespace'] as const,
  buckets: [0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.05, 0.25, 1],
  registers: [registry],
});
const storeErrors = new Counter({
  name: 'rate_limiter_store_errors_total',
  help: 'Store failures and open-circuit refusals, by the policy applied and the error code.',
  labelNames: ['namespace', 'policy', 'code'] as const,
  registers: [registry],
});
const circuitOpen = new Gauge({
  name: 'rate_limiter_circuit_open',
  help: '1 while the circuit of a limiter is open or half-open, 0 while closed (per Cluster master on a Cluster).',
  labelNames: ['namespace', 'node'] as const,
  registers: [registry],
});
const circuitChanges = new Counter({
  name: 'rate_limiter_circuit_changes_total',
  help: 'Changes of circuit-breaker state, by the state entered.',
  labelNames: ['namespace', 'state'] as const,
  registers: [registry],
});

/** A stack publishes all its namespaces; label by the joined names. */
const label = (namespaces: readonly string[]): string => namespaces.join('+');

subscribe(DECISION_CHANNEL, (message) => {
  const { namespaces, blocked, dryRun, decidedBy, durationMs } = message as DecisionMessage;
  const namespace = label(namespaces);
  decisions.inc({ namespace, outcome: dryRun ? `dry-run-${blocked ? 'blocked' : 'allowed'}` : blocked ? 'blocked' : 'allowed', decided_by: decidedBy });
  decisionSeconds.observe({ namespace }, durationMs / 1_000);
});
subscribe(STORE_ERROR_CHANNEL, (message) => {
  const { namespaces, error, policy } = message as StoreErrorMessage;
  storeErrors.inc({ namespace: label(namespaces), policy, code: error.code });
});
subscribe(CIRCUIT_CHANNEL, (message) => {
  const { namespaces, node, state } = message as CircuitMessage;
  circuitOpen.set({ namespace: label(namespaces), node: node ?? '' }, state === 'closed' ? 0 : 1);
  circuitChanges.inc({ namespace: label(namespaces), state });
});

/** A loopback port nothing listens on: bound, then closed again. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function main(): Promise<void> {
  const inMemory = new RollingRateLimiter({ namespace: 'push', interval: 1_000, maxInInterval: 10 });
  for (let i = 0; i < 40; i++) await inMemory.limit('user-1');
  await inMemory.wouldLimit('user-1');

  // A client that fails every command at once: no offline queue, no reconnection.
  const down = new Redis({ host: '127.0.0.1', port: await refusedPort(), lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
  down.on('error', () => {}); // connection errors are expected here
  const onRedis = new RollingRateLimiter({ client: down, namespace: 'api', interval: 1_000, maxInInterval: 10, timeout: 250, onStoreError: 'allow' });
  try {
    for (let i = 0; i < 20; i++) await onRedis.limit('user-1');
  } finally {
    down.disconnect();
  }

  const text = await registry.metrics();
  console.log(text);
  if (process.argv.includes('--check')) check(text);
}

/** What the run above must produce once the limiters publish: fails loudly when a series is missing. */
function check(text: string): void {
  const expected = [
    'rate_limiter_decisions_total{namespace="push",outcome="allowed",decided_by="store"} 10',
    'rate_limiter_decisions_total{namespace="push",outcome="blocked",decided_by="store"} 30',
    'rate_limiter_decisions_total{namespace="push",outcome="dry-run-blocked",decided_by="store"} 1',
    'rate_limiter_decisions_total{namespace="api",outcome="allowed",decided_by="allow"} 20',
    'rate_limiter_store_errors_total{namespace="api",policy="allow",code="ERR_RATE_LIMITER_STORE"} 5',
    'rate_limiter_store_errors_total{namespace="api",policy="allow",code="CIRCUIT_OPEN"} 15',
    'rate_limiter_circuit_changes_total{namespace="api",state="open"} 1',
    'rate_limiter_circuit_open{namespace="api",node=""} 1',
    'rate_limiter_decision_duration_seconds_count{namespace="push"} 41',
  ];
  const missing = expected.filter((line) => !text.split('\n').includes(line));
  if (missing.length > 0) {
    console.error(`missing from the metrics:\n  ${missing.join('\n  ')}`);
    process.exitCode = 1;
    return;
  }
  console.log(`all ${expected.length} expected series are there`);
}

await main();
