// OpenTelemetry metrics from the limiter's diagnostics channels, with the
// `rolling-window-limiter/otel` entry and the OpenTelemetry SDK: a counter of
// decisions by namespace, result and decider, a histogram of their time in
// seconds, a counter of store failures by code and policy, and the circuits
// (their changes, and how many are open). The library itself depends on
// nothing: the entry subscribes to `node:diagnostics_channel` and records on
// the meter it is given.
//
// It runs the same two limiters as prometheus-metrics.ts: one in memory (40
// attempts at 10 per second: 10 acquired, 30 rejected), and one on a Redis that
// refuses every connection (a port nothing listens on), with
// `onStoreError: 'allow'`, so that 20 attempts meet store failures, the
// circuit breaker opens after 5 of them, and the other 15 are decided at once
// without Redis. Then it exports the metrics (here to memory, through the
// periodic reader an OTLP exporter would use) and prints one line per data point.
//
//   npx tsx examples/otel-metrics.ts           # print the metrics
//   npx tsx examples/otel-metrics.ts --check   # and fail unless every expected data point is there

import { createServer } from 'node:net';
import type { Attributes } from '@opentelemetry/api';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../src/index.js';
import { registerRateLimiterMetrics } from '../src/integrations/otel/index.js';

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
// A long interval: the one export is the flush at the end.
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
const provider = new MeterProvider({ readers: [reader] });
const stop = registerRateLimiterMetrics({ meter: provider.getMeter('rolling-window-limiter') });

/** A loopback port nothing listens on: bound, then closed again. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `name{key="value",...} value`: a histogram's value is its count. */
function line(name: string, attributes: Attributes, value: number): string {
  const labels = Object.entries(attributes).map(([key, attribute]) => `${key}=${JSON.stringify(attribute)}`);
  return `${name}{${labels.join(',')}} ${value}`;
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

  await reader.forceFlush();
  const lines: string[] = [];
  for (const { scopeMetrics } of exporter.getMetrics().slice(-1)) {
    for (const { metrics } of scopeMetrics) {
      for (const { descriptor, dataPoints } of metrics) {
        for (const { attributes, value } of dataPoints as ReadonlyArray<{ attributes: Attributes; value: number | { count: number } }>) {
          lines.push(line(descriptor.name, attributes, typeof value === 'number' ? value : value.count));
        }
      }
    }
  }
  console.log(lines.join('\n'));
  stop();
  await provider.shutdown();
  if (process.argv.includes('--check')) check(lines);
}

/** What the run above must produce: fails loudly when a data point is missing. */
function check(lines: readonly string[]): void {
  const expected = [
    'rate_limiting.decisions{rate_limiting.namespace="push",rate_limiting.result="acquired",rate_limiting.decided_by="store",rate_limiting.dry_run=false} 10',
    'rate_limiting.decisions{rate_limiting.namespace="push",rate_limiting.result="rejected",rate_limiting.decided_by="store",rate_limiting.dry_run=false} 30',
    'rate_limiting.decisions{rate_limiting.namespace="push",rate_limiting.result="rejected",rate_limiting.decided_by="store",rate_limiting.dry_run=true} 1',
    'rate_limiting.decisions{rate_limiting.namespace="api",rate_limiting.result="acquired",rate_limiting.decided_by="allow",rate_limiting.dry_run=false} 20',
    'rate_limiting.decision.duration{rate_limiting.namespace="push",rate_limiting.decided_by="store"} 41',
    'rate_limiting.store.errors{rate_limiting.namespace="api",error.type="ERR_RATE_LIMITER_STORE",rate_limiting.on_store_error="allow"} 5',
    'rate_limiting.store.errors{rate_limiting.namespace="api",error.type="CIRCUIT_OPEN",rate_limiting.on_store_error="allow"} 15',
    'rate_limiting.circuit.changes{rate_limiting.namespace="api",rate_limiting.circuit.state="open"} 1',
    'rate_limiting.open_circuits{rate_limiting.namespace="api"} 1',
  ];
  const missing = expected.filter((expectedLine) => !lines.includes(expectedLine));
  if (missing.length > 0) {
    console.error(`missing from the metrics:\n  ${missing.join('\n  ')}`);
    process.exitCode = 1;
    return;
  }
  console.log(`all ${expected.length} expected data points are there`);
}

await main();
