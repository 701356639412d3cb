// Measures 1 to 3: decisions per second (concurrency 1 and 64, many ids and a
// hot id), p50 / p99 latency at concurrency 1, and the Redis server's cost per
// decision (INFO commandstats / stats / cpu around each measurement). Every
// measurement builds its contender on a fresh namespace, warms up, resets the
// server's counters, measures, reads them, and flushes the database.

import type { Redis } from 'ioredis';
import type { BenchOptions } from '../cli.js';
import type { Contender } from '../contenders/types.js';
import { measure, type Sample } from '../measure.js';
import { openWindow, type ServerCost } from '../redis-stats.js';
import type { ThroughputScenario } from '../workloads.js';

/** Server cost divided by the decisions of the measurement. */
export interface PerDecision {
  readonly usecTopLevel: number;
  readonly usecAll: number;
  readonly commands: number;
  readonly cpuUs: number;
  readonly bytesOut: number;
  readonly bytesIn: number;
}

export interface ThroughputRecord {
  readonly run: number;
  readonly scenario: string;
  readonly contender: string;
  readonly sample?: Sample;
  readonly server?: PerDecision;
  readonly byCommand?: ServerCost['byCommand'];
  readonly error?: string;
}

export interface ThroughputContext {
  readonly options: BenchOptions;
  readonly admin: Redis;
  readonly namespace: () => string;
  readonly log: (line: string) => void;
}

function perDecision(cost: ServerCost, decisions: number): PerDecision {
  const per = (value: number): number => value / decisions;
  return {
    usecTopLevel: per(cost.usecTopLevel),
    usecAll: per(cost.usecAll),
    commands: per(cost.calls),
    cpuUs: per(cost.cpuUs),
    bytesOut: per(cost.netOutBytes),
    bytesIn: per(cost.netInBytes),
  };
}

/** One contender on one scenario, once. */
export async function measureOne(
  context: ThroughputContext,
  scenario: ThroughputScenario,
  contender: Contender,
  run: number,
): Promise<ThroughputRecord> {
  const { options, admin } = context;
  const onRedis = contender.backend !== 'memory';
  const base = { run, scenario: scenario.id, contender: contender.id };
  const instance = await contender.create(scenario.rules, context.namespace());
  try {
    const cursor = { next: 0 };
    await measure(instance.decide, scenario.ids, scenario.concurrency, options.warmupMs, cursor);
    const close = onRedis ? await openWindow(admin) : undefined;
    const sample = await measure(instance.decide, scenario.ids, scenario.concurrency, options.durationMs, cursor);
    const cost = await close?.();
    return cost === undefined ? { ...base, sample } : { ...base, sample, server: perDecision(cost, sample.decisions), byCommand: cost.byCommand };
  } catch (error) {
    return { ...base, error: error instanceof Error ? error.message : String(error) };
  } finally {
    instance.dispose?.();
    if (onRedis) await admin.flushdb();
  }
}

/** Every selected scenario × contender, once; the contender order rotates with the run to spread drift. */
export async function runThroughput(
  context: ThroughputContext,
  scenarios: readonly ThroughputScenario[],
  contendersOf: (scenario: ThroughputScenario) => readonly Contender[],
  run: number,
): Promise<ThroughputRecord[]> {
  const records: ThroughputRecord[] = [];
  for (const scenario of scenarios) {
    const contenders = contendersOf(scenario);
    const shift = contenders.length === 0 ? 0 : run % contenders.length;
    const ordered = [...contenders.slice(shift), ...contenders.slice(0, shift)];
    for (const contender of ordered) {
      const record = await measureOne(context, scenario, contender, run);
      records.push(record);
      const shown = record.sample === undefined ? `FAILED: ${record.error}` : `${Math.round(record.sample.perSecond).toLocaleString('en-US')} dec/s`;
      context.log(`  run ${run + 1} ${scenario.id.padEnd(16)} ${contender.id.padEnd(24)} ${shown}`);
    }
  }
  return records;
}
