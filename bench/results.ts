// The shape of bench/results/latest.json, and the lookups the reports and the
// targets make in it: medians over runs, and ratios taken within each run
// (throughput: within each round of slices) before their median is taken.

import type { BenchOptions } from './cli.js';
import type { Backend, Family } from './contenders/types.js';
import type { Machine } from './machine.js';
import type { HeapRecord } from './scenarios/heap.js';
import type { BytesRecord, KeyMemoryRecord } from './scenarios/redis-footprint.js';
import type { ThroughputRecord } from './scenarios/throughput.js';
import { median, range, ratio } from './stats.js';

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
  /** The ratio reported and judged. */
  readonly median: number;
  /** Smallest and largest per-run ratio. */
  readonly min: number;
  readonly max: number;
  readonly runs: number;
  /** How many paired slices the median was taken over (throughput ratios from results that keep slices). */
  readonly pairs?: number;
}

type Cell = { scenario: string; contender: string };

function recordIn(results: BenchResults, run: number, cell: Cell): ThroughputRecord | undefined {
  return results.throughput.find((r) => r.run === run && r.scenario === cell.scenario && r.contender === cell.contender);
}

function runsOf(results: BenchResults): number[] {
  return [...new Set(results.throughput.map((record) => record.run))];
}

/** A / B computed within each run (same run, same conditions), then the median over runs. */
export function ratioInRuns(results: BenchResults, a: Cell, b: Cell, metric: ThroughputMetric = perSecond): RunRatio {
  const ratios: number[] = [];
  for (const run of runsOf(results)) {
    const top = recordIn(results, run, a);
    const bottom = recordIn(results, run, b);
    const value = ratio(top === undefined ? undefined : metric(top), bottom === undefined ? undefined : metric(bottom));
    if (Number.isFinite(value)) ratios.push(value);
  }
  const [min, max] = range(ratios);
  return { median: median(ratios), min, max, runs: ratios.length };
}

/** Slice k of A over slice k of B, for every k both have; none when either lacks slices. */
function slicePairRatios(top: ThroughputRecord | undefined, bottom: ThroughputRecord | undefined): number[] {
  const a = top?.slicePerSecond;
  const b = bottom?.slicePerSecond;
  if (a === undefined || b === undefined) return [];
  const count = Math.min(a.length, b.length);
  const ratios: number[] = [];
  for (let k = 0; k < count; k += 1) {
    const value = ratio(a[k], b[k]);
    if (Number.isFinite(value)) ratios.push(value);
  }
  return ratios;
}

/**
 * A / B in decisions per second, from paired slices: slice k of A over
 * slice k of B (taken in the same round, seconds or less apart, under the
 * same load), pooled over every run, and the median of all of them. A burst
 * of load from elsewhere on the machine spoils the pairs it falls on, not the
 * run: the median sets them aside, where a ratio of whole measurements keeps
 * them. Each run's own ratio (the median of its pairs) gives the spread.
 * Results without slices (older files) fall back to {@link ratioInRuns}.
 */
export function throughputRatio(results: BenchResults, a: Cell, b: Cell): RunRatio {
  const pooled: number[] = [];
  const perRun: number[] = [];
  for (const run of runsOf(results)) {
    const pairs = slicePairRatios(recordIn(results, run, a), recordIn(results, run, b));
    if (pairs.length === 0) continue;
    pooled.push(...pairs);
    perRun.push(median(pairs));
  }
  if (pooled.length === 0) return ratioInRuns(results, a, b);
  const [min, max] = range(perRun);
  return { median: median(pooled), min, max, runs: perRun.length, pairs: pooled.length };
}

export function bytesOf(results: BenchResults, contender: string, maxInInterval: number): number {
  return results.bytes.find((record) => record.contender === contender && record.maxInInterval === maxInInterval)?.bytesPerDecision ?? Number.NaN;
}

export function keyMemoryOf(results: BenchResults, contender: string, state: KeyMemoryRecord['state']): KeyMemoryRecord | undefined {
  return results.keyMemory.find((record) => record.contender === contender && record.state === state);
}
