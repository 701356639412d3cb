import { AggregationTemporality, InMemoryMetricExporter } from '@opentelemetry/sdk-metrics';
import { RollingRateLimiter } from 'rolling-window-limiter';

// In an application: an OTLP or Prometheus exporter.
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);

// docs:begin
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { registerRateLimiterMetrics } from 'rolling-window-limiter/otel';

const provider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter })] });
// Without `meter`: the meter 'rolling-window-limiter' of the global MeterProvider (as NodeSDK sets it).
const stopMetrics = registerRateLimiterMetrics({ meter: provider.getMeter('rolling-window-limiter') });
// docs:end

const limiter = new RollingRateLimiter({ namespace: 'push', interval: 1_000, maxInInterval: 2 });
for (let i = 0; i < 3; i++) await limiter.limit('user-1');
await provider.forceFlush();
for (const { scopeMetrics } of exporter.getMetrics().slice(-1)) {
  for (const { metrics } of scopeMetrics) {
    for (const { descriptor, dataPoints } of metrics) {
      if (descriptor.name !== 'rate_limiting.decisions') continue;
      for (const { attributes, value } of dataPoints) console.log(descriptor.name, JSON.stringify(attributes), value);
    }
  }
}
stopMetrics();
await provider.shutdown();
