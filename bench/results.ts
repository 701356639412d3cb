// The shape of bench/results/latest.json, and the lookups the reports and the
// targets make in it: medians over runs, and ratios taken within each run
// before their median is taken.

import type { BenchOptions } from './cli.js';
import type { Backend, Family } from './contenders/types.js';
import type { Machine } from './machine.js';
import type { HeapRecord } from './scenarios/heap.js';
import type { BytesRecord, KeyMemoryRecord } from './scenarios/redis-footprint.js';
import type { ThroughputRecord } from './scenarios/throughput.js';
import { median, range } from './stats.js';

export interface ContenderInfo {
  readonly id: string;
  readonly label: string;
  readonly family: Family;
  readonly backend: Backend;
}

export interface BenchResults {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly options: BenchOptions;
  readonly machine: Machine;
  readonly contenders: readonly ContenderInfo[];
  readonly scenarios: readonly { readonly id: string; readonly label: string }[];
  readonly throughput: readonly ThroughputRecord[];
  readonly bytes: readonly BytesRecord[];
  readonly keyMemory: readonly KeyMemoryRecord[];
  readonly heap: readonly HeapRecord[];
}

export type ThroughputMetric = (record: ThroughputRecord) => number | undefined;

export const perSecond: ThroughputMetric = (record) => record.sample?.perSecond;

function recordsOf(results: BenchResults, scenario: string, contender: string): ThroughputRecord[] {
  return results.throughput.filter((record) => record.scenario === scenario && record.contender === contender);
}

/** Median over runs of one metric; NaN when there is no successful run. */
export function medianOf(results: BenchResults, scenario: string, contender: string, metric: ThroughputMetric = perSecond): number {
  return median(recordsOf(results, scenario, contender).map((record) => metric(record) ?? Number.NaN));
}

/** Whether a contender has any measurement (successful or not) on a scenario. */
export function measured(results: BenchResults, scenario: string, contender: string): boolean {
  return recordsOf(results, scenario, contender).length > 0;
}

/** The first error a contender hit on a scenario, if any. */
export function errorOf(results: BenchResults, scenario: string, contender: string): string | undefined {
  return recordsOf(results, scenario, contender).find((record) => record.error !== undefined)?.error;
}

export interface RunRatio {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

/** A / B computed within each run (same run, same conditions), then the median over runs. */
export function ratioInRuns(
  results: BenchResults,
  a: { scenario: string; contender: string },
  b: { scenario: string; contender: string },
  metric: ThroughputMetric = perSecond,
): RunRatio {
  const runs = [...new Set(results.throughput.map((record) => record.run))];
  const ratios: number[] = [];
  for (const run of runs) {
    const find = (which: { scenario: string; contender: string }): number | undefined => {
      const record = results.throughput.find((r) => r.run === run && r.scenario === which.scenario && r.contender === which.contender);
      return record === undefined ? undefined : metric(record);
    };
    const top = find(a);
    const bottom = find(b);
    if (top !== undefined && bottom !== undefined && bottom > 0 && Number.isFinite(top)) ratios.push(top / bottom);
  }
  const [min, max] = range(ratios);
  return { median: median(ratios), min, max, runs: ratios.length };
}

export function bytesOf(results: BenchResults, contender: string, maxInInterval: number): number {
  return results.bytes.find((record) => record.contender === contender && record.maxInInterval === maxInInterval)?.bytesPerDecision ?? Number.NaN;
}

export function keyMemoryOf(results: BenchResults, contender: string, state: KeyMemoryRecord['state']): KeyMemoryRecord | undefined {
  return results.keyMemory.find((record) => record.contender === contender && record.state === state);
}
