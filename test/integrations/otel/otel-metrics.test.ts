// rolling-window-limiter/otel: the diagnostics channels read into OpenTelemetry
// instruments of the SDK's own MeterProvider, collected by a pull reader of this
// test (`MetricReader.collect()`), for limiters in memory, a stack, a limiter on
// a Redis that is down (store failures, its circuit opening), and circuits that
// close again. Only the entry imports OpenTelemetry.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { metrics, type Attributes } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader, type HistogramMetricData, type MetricData } from '@opentelemetry/sdk-metrics';
import { expect } from 'chai';
import sinon from 'sinon';
import ts from 'typescript';
import { publishCircuit } from '../../../src/core/diagnostics.js';
import { RateLimiterStack, RollingRateLimiter, StoreError } from '../../../src/index.js';
import { ATTRIBUTE_NAMES, DECISION_DURATION_BUCKETS, METER_NAME, METRIC_NAMES, registerRateLimiterMetrics } from '../../../src/integrations/otel/index.js';
import { downRedisClient } from '../../support/down-redis.js';
import { TestClock } from '../../support/test-clock.js';

/** A pull reader: the test collects when it wants to look. */
class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** One data point as the tests compare it: a sum's or gauge's value, or a histogram's count. */
interface Point {
  readonly attributes: Attributes;
  readonly value: number;
}

/** Every instrument's data points, by instrument name, from one collection. */
async function collect(reader: MetricReader): Promise<{ byName: Map<string, MetricData>; scopes: string[] }> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).to.deep.equal([]);
  const byName = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
  return { byName, scopes: resourceMetrics.scopeMetrics.map((scope) => scope.scope.name) };
}

function points(metric: MetricData | undefined): Point[] {
  if (metric === undefined) return [];
  return (metric.dataPoints as ReadonlyArray<{ attributes: Attributes; value: unknown }>).map(({ attributes, value }) => ({
    attributes,
    value: typeof value === 'number' ? value : (value as { count: number }).count,
  }));
}

/** The data points of `name`, sorted by their attributes, for a comparison that ignores their order. */
async function read(reader: MetricReader, name: string): Promise<Point[]> {
  const { byName } = await collect(reader);
  return points(byName.get(name)).sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)));
}

const decision = (namespace: string, result: 'acquired' | 'rejected', decidedBy: string, dryRun: boolean, value: number): Point => ({
  attributes: {
    [ATTRIBUTE_NAMES.namespace]: namespace,
    [ATTRIBUTE_NAMES.result]: result,
    [ATTRIBUTE_NAMES.decidedBy]: decidedBy,
    [ATTRIBUTE_NAMES.dryRun]: dryRun,
  },
  value,
});

const sorted = (list: Point[]): Point[] => [...list].sort((a, b) => JSON.stringify(a.attributes).localeCompare(JSON.stringify(b.attributes)));

describe('rolling-window-limiter/otel', function () {
  this.timeout(20_000);
  let reader: TestReader;
  let provider: MeterProvider;
  let stop: () => void;

  beforeEach(() => {
    reader = new TestReader();
    provider = new MeterProvider({ readers: [reader] });
    stop = registerRateLimiterMetrics({ meter: provider.getMeter('test') });
  });

  afterEach(async () => {
    stop();
    await provider.shutdown();
  });

  it('counts a limiter’s decisions in memory by result, decider and dry run, and times each in seconds', async () => {
    // Each decision reads the limiter's clock once, between its start and its end: 2 ms of performance.now() pass there.
    const timer = sinon.useFakeTimers({ toFake: ['performance'] });
    const clock = new TestClock();
    const limiter = new RollingRateLimiter({
      namespace: 'push',
      interval: 60_000,
      maxInInterval: 2,
      clock: () => {
        timer.tick(2);
        return clock.read();
      },
    });
    try {
      for (let i = 0; i < 5; i++) await limiter.limit('user-1');
      await limiter.wouldLimit('user-1');
      await limiter.wouldLimit('user-2');
    } finally {
      timer.restore();
    }

    expect(await read(reader, METRIC_NAMES.decisions)).to.deep.equal(
      sorted([
        decision('push', 'acquired', 'store', false, 2),
        decision('push', 'rejected', 'store', false, 3),
        decision('push', 'rejected', 'store', true, 1),
        decision('push', 'acquired', 'store', true, 1),
      ]),
    );
    const { byName } = await collect(reader);
    expect(byName.get(METRIC_NAMES.decisions)?.descriptor.unit).to.equal('{decision}');
    const duration = byName.get(METRIC_NAMES.decisionDuration) as HistogramMetricData;
    expect(duration.descriptor.unit).to.equal('s');
    expect(duration.dataPointType).to.equal(DataPointType.HISTOGRAM);
    expect(duration.dataPoints).to.have.length(1);
    const [point] = duration.dataPoints;
    expect(point?.attributes).to.deep.equal({ [ATTRIBUTE_NAMES.namespace]: 'push', [ATTRIBUTE_NAMES.decidedBy]: 'store' });
    expect(point?.value.buckets.boundaries).to.deep.equal([...DECISION_DURATION_BUCKETS]);
    // 2 ms each is 0.002 s, in the bucket (0.001 s, 0.0025 s].
    expect(point?.value.count).to.equal(7);
    expect(point?.value.sum).to.be.closeTo(0.014, 1e-9);
    expect(point?.value.buckets.counts[DECISION_DURATION_BUCKETS.indexOf(0.002_5)]).to.equal(7);
  });

  it('counts a stack’s decisions under its tiers’ namespaces joined in order', async () => {
    const perSecond = new RollingRateLimiter({ namespace: 'api:second', interval: 1_000, maxInInterval: 5 });
    const perMinute = new RollingRateLimiter({ namespace: 'api:minute', interval: 60_000, maxInInterval: 3 });
    const stack = new RateLimiterStack([perSecond, perMinute]);
    for (let i = 0; i < 4; i++) await stack.limit('user-1');

    expect(await read(reader, METRIC_NAMES.decisions)).to.deep.equal(
      sorted([decision('api:second+api:minute', 'acquired', 'store', false, 3), decision('api:second+api:minute', 'rejected', 'store', false, 1)]),
    );
  });

  it('counts store failures by code and policy, the circuit opening, and the circuits open, on a Redis that is down', async () => {
    const down = await downRedisClient();
    try {
      const limiter = new RollingRateLimiter({
        client: down,
        namespace: 'api',
        interval: 1_000,
        maxInInterval: 10,
        timeout: 2_000,
        onStoreError: 'allow',
        circuitBreaker: { failureThreshold: 2, cooldown: 60_000 },
      });
      for (let i = 0; i < 5; i++) expect(await limiter.limit('user-1')).to.equal(false);
      const strict = new RollingRateLimiter({ client: down, namespace: 'strict', interval: 1_000, maxInInterval: 10, timeout: 2_000 });
      const failure = await strict.limit('user-1').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).to.be.instanceOf(StoreError);
    } finally {
      down.disconnect();
    }

    const errors = (namespace: string, code: string, policy: string, value: number): Point => ({
      attributes: { [ATTRIBUTE_NAMES.namespace]: namespace, [ATTRIBUTE_NAMES.errorType]: code, [ATTRIBUTE_NAMES.onStoreError]: policy },
      value,
    });
    expect(await read(reader, METRIC_NAMES.storeErrors)).to.deep.equal(
      sorted([
        errors('api', 'ERR_RATE_LIMITER_STORE', 'allow', 2),
        errors('api', 'CIRCUIT_OPEN', 'allow', 3),
        errors('strict', 'ERR_RATE_LIMITER_STORE', 'throw', 1),
      ]),
    );
    // The policy decided every call of `api`; the call of `strict` rejected, and a rejected call decides nothing.
    expect(await read(reader, METRIC_NAMES.decisions)).to.deep.equal([decision('api', 'acquired', 'allow', false, 5)]);
    expect(await read(reader, METRIC_NAMES.circuitChanges)).to.deep.equal([
      { attributes: { [ATTRIBUTE_NAMES.namespace]: 'api', [ATTRIBUTE_NAMES.circuitState]: 'open' }, value: 1 },
    ]);
    expect(await read(reader, METRIC_NAMES.openCircuits)).to.deep.equal([{ attributes: { [ATTRIBUTE_NAMES.namespace]: 'api' }, value: 1 }]);
  });

  it('counts each circuit’s changes by node, and takes a circuit closed again out of the open ones', async () => {
    publishCircuit(['cache'], '10.0.0.7:6379', 'open', 'closed', 5);
    publishCircuit(['cache'], '10.0.0.8:6379', 'open', 'closed', 5);
    expect(await read(reader, METRIC_NAMES.openCircuits)).to.deep.equal([
      { attributes: { [ATTRIBUTE_NAMES.namespace]: 'cache', [ATTRIBUTE_NAMES.circuitNode]: '10.0.0.7:6379' }, value: 1 },
      { attributes: { [ATTRIBUTE_NAMES.namespace]: 'cache', [ATTRIBUTE_NAMES.circuitNode]: '10.0.0.8:6379' }, value: 1 },
    ]);
    publishCircuit(['cache'], '10.0.0.7:6379', 'half-open', 'open', 5);
    publishCircuit(['cache'], '10.0.0.7:6379', 'closed', 'half-open', 0);

    expect(await read(reader, METRIC_NAMES.openCircuits)).to.deep.equal([
      { attributes: { [ATTRIBUTE_NAMES.namespace]: 'cache', [ATTRIBUTE_NAMES.circuitNode]: '10.0.0.7:6379' }, value: 0 },
      { attributes: { [ATTRIBUTE_NAMES.namespace]: 'cache', [ATTRIBUTE_NAMES.circuitNode]: '10.0.0.8:6379' }, value: 1 },
    ]);
    const change = (node: string, state: string): Point => ({
      attributes: { [ATTRIBUTE_NAMES.namespace]: 'cache', [ATTRIBUTE_NAMES.circuitNode]: node, [ATTRIBUTE_NAMES.circuitState]: state },
      value: 1,
    });
    expect(await read(reader, METRIC_NAMES.circuitChanges)).to.deep.equal(
      sorted([change('10.0.0.7:6379', 'open'), change('10.0.0.7:6379', 'half-open'), change('10.0.0.7:6379', 'closed'), change('10.0.0.8:6379', 'open')]),
    );
  });

  it('stops: unsubscribes from the channels and observes no circuit, and stops once however often called', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'push', interval: 60_000, maxInInterval: 2 });
    await limiter.limit('user-1');
    publishCircuit(['cache'], undefined, 'open', 'closed', 5);
    stop();
    stop();
    await limiter.limit('user-1');
    publishCircuit(['cache'], undefined, 'closed', 'half-open', 0);
    expect(await read(reader, METRIC_NAMES.decisions)).to.deep.equal([decision('push', 'acquired', 'store', false, 1)]);
    expect(await read(reader, METRIC_NAMES.circuitChanges)).to.have.length(1);
    expect(await read(reader, METRIC_NAMES.openCircuits)).to.deep.equal([]);
  });

  it('takes the meter `rolling-window-limiter` of the global MeterProvider when given none', async () => {
    const globalReader = new TestReader();
    const globalProvider = new MeterProvider({ readers: [globalReader] });
    expect(metrics.setGlobalMeterProvider(globalProvider)).to.equal(true);
    const stopGlobal = registerRateLimiterMetrics();
    try {
      await new RollingRateLimiter({ namespace: 'global', interval: 1_000, maxInInterval: 1 }).limit('a');
      const { byName, scopes } = await collect(globalReader);
      expect(scopes).to.deep.equal([METER_NAME]);
      expect(points(byName.get(METRIC_NAMES.decisions))).to.deep.equal([decision('global', 'acquired', 'store', false, 1)]);
    } finally {
      stopGlobal();
      metrics.disable();
      await globalProvider.shutdown();
    }
  });

  it('creates its instruments and counts nothing, throwing nothing, on a runtime without node:diagnostics_channel', async () => {
    stop();
    const stub = sinon.stub(process, 'getBuiltinModule').returns(undefined);
    let silent: () => void;
    try {
      silent = registerRateLimiterMetrics({ meter: provider.getMeter('silent') });
    } finally {
      stub.restore();
    }
    await new RollingRateLimiter({ namespace: 'push', interval: 1_000, maxInInterval: 1 }).limit('a');
    publishCircuit(['cache'], undefined, 'open', 'closed', 5);
    expect(await read(reader, METRIC_NAMES.decisions)).to.deep.equal([]);
    expect(await read(reader, METRIC_NAMES.openCircuits)).to.deep.equal([]);
    silent();
  });

  it('is the one part of src/ that imports OpenTelemetry', () => {
    const src = join(import.meta.dirname, '..', '..', '..', 'src');
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
      );
    const importers = files(src)
      .filter((file) =>
        ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.some((imported) => imported.fileName.startsWith('@opentelemetry/')),
      )
      .map((file) => relative(src, file).replaceAll('\\', '/'));
    expect(importers).to.deep.equal(['integrations/otel/index.ts']);
  });
});
