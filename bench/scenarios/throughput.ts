// Measures 1 to 3: decisions per second (concurrency 1 and 64, many ids and a
// hot id), p50 / p99 latency at concurrency 1, and the Redis server's cost per
// decision (INFO commandstats / stats / cpu around each slice).
//
// Scenarios of the same concurrency form a group. In a group, every
// (scenario, contender) cell gets a fresh namespace and a warm-up; then each
// measurement is cut into slices taken round-robin across all the cells, so
// that a burst of load from elsewhere on this (noisy, 2-core) machine falls on
// all of them rather than on one. The database is flushed after the group.

import type { Redis } from 'ioredis';
import type { BenchOptions } from '../cli.js';
import type { Contender } from '../contenders/types.js';
import { summarize, type Sample, type Slice } from '../measure.js';
import { openWindow, type CommandCost, type ServerCost } from '../redis-stats.js';
import type { ThroughputScenario } from '../workloads.js';
import type { CellRunner, ContenderProcesses } from './cell-runner.js';

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
  /**
   * Decisions per second of each slice, in the order taken. Slice k of every
   * cell of a group comes from the same round, so two cells' k-th slices were
   * measured under the same load (bench/results.ts pairs them).
   */
  readonly slicePerSecond?: readonly number[];
  readonly server?: PerDecision;
  /** Per command over the whole measurement: calls and usec, not divided. */
  readonly byCommand?: Record<string, CommandCost>;
  readonly error?: string;
}

export interface ThroughputContext {
  readonly options: BenchOptions;
  readonly admin: Redis;
  /** Where each contender runs: a child process of its own. */
  readonly processes: ContenderProcesses;
  readonly namespace: () => string;
  readonly log: (line: string) => void;
}

/** One contender on one scenario: what a slice measures. */
export interface Cell {
  readonly scenario: ThroughputScenario;
  readonly contender: Contender;
}

interface Entry extends Cell {
  runner?: CellRunner;
  readonly slices: Slice[];
  costs: ServerCost[];
  error?: string;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function addCosts(costs: readonly ServerCost[], decisions: number): { server: PerDecision; byCommand: Record<string, CommandCost> } {
  const byCommand: Record<string, CommandCost> = {};
  const total = { usecTopLevel: 0, usecAll: 0, calls: 0, cpuUs: 0, netOutBytes: 0, netInBytes: 0 };
  for (const cost of costs) {
    total.usecTopLevel += cost.usecTopLevel;
    total.usecAll += cost.usecAll;
    total.calls += cost.calls;
    total.cpuUs += cost.cpuUs;
    total.netOutBytes += cost.netOutBytes;
    total.netInBytes += cost.netInBytes;
    for (const [name, { calls, usec }] of Object.entries(cost.byCommand)) {
      const previous = byCommand[name];
      byCommand[name] = { calls: (previous?.calls ?? 0) + calls, usec: (previous?.usec ?? 0) + usec };
    }
  }
  const per = (value: number): number => value / decisions;
  return {
    server: {
      usecTopLevel: per(total.usecTopLevel),
      usecAll: per(total.usecAll),
      commands: per(total.calls),
      cpuUs: per(total.cpuUs),
      bytesOut: per(total.netOutBytes),
      bytesIn: per(total.netInBytes),
    },
    byCommand,
  };
}

/**
 * A group of cells (scenarios of one concurrency, every contender), once:
 * slices go round-robin over all the cells, so that ratios between any two
 * of them (library vs peer, hot vs cold) come from interleaved time. With
 * `slices` 0 it only builds and warms each cell up (the first pass of a bench
 * run, for the JIT).
 */
export async function runGroup(context: ThroughputContext, cells: readonly Cell[], run: number, slices: number): Promise<ThroughputRecord[]> {
  const { options, admin } = context;
  const entries: Entry[] = cells.map((cell) => ({ ...cell, slices: [], costs: [] }));
  const sliceMs = options.durationMs / Math.max(1, slices);
  const onRedis = (entry: Entry): boolean => entry.scenario.kind === 'redis';
  try {
    for (const entry of entries) {
      try {
        entry.runner = await context.processes.open(entry.contender, entry.scenario, context.namespace());
        await entry.runner.warm(options.warmupMs);
      } catch (error) {
        entry.error = message(error);
      }
    }
    for (let slice = 0; slice < slices; slice += 1) {
      // Every other round goes in reverse, so that of two contenders measured back to back each is measured
      // first in half of the pairs of every run, whatever the number of runs.
      for (const entry of slice % 2 === 1 ? [...entries].reverse() : entries) {
        if (entry.runner === undefined || entry.error !== undefined) continue;
        try {
          const close = onRedis(entry) ? await openWindow(admin) : undefined;
          entry.slices.push(await entry.runner.slice(sliceMs));
          const cost = await close?.();
          if (cost !== undefined) entry.costs.push(cost);
        } catch (error) {
          entry.error = message(error);
        }
      }
    }
  } finally {
    await Promise.allSettled(entries.flatMap((entry) => (entry.runner === undefined ? [] : [entry.runner.close()])));
    if (entries.some(onRedis)) await admin.flushdb();
  }
  if (slices === 0) return [];
  return entries.map(({ scenario, contender, slices: taken, costs, error }): ThroughputRecord => {
    const base = { run, scenario: scenario.id, contender: contender.id };
    if (error !== undefined) return { ...base, error };
    const sample = summarize(taken);
    const slicePerSecond = taken.map((slice) => (slice.decisions * 1000) / slice.elapsedMs);
    return costs.length === 0 ? { ...base, sample, slicePerSecond } : { ...base, sample, slicePerSecond, ...addCosts(costs, sample.decisions) };
  });
}

/** Every group once; the order of the cells rotates with the run, and reverses every other run, to spread drift. */
export async function runThroughput(context: ThroughputContext, groups: readonly (readonly Cell[])[], run: number, slices: number): Promise<ThroughputRecord[]> {
  const records: ThroughputRecord[] = [];
  for (const cells of groups) {
    // Every other run measures in reverse, so that of two contenders measured back to back neither is always first.
    const ordered = run % 2 === 1 ? [...cells].reverse() : cells;
    const shift = ordered.length === 0 ? 0 : (run * 7) % ordered.length;
    const taken = await runGroup(context, [...ordered.slice(shift), ...ordered.slice(0, shift)], run, slices);
    for (const record of taken) {
      records.push(record);
      const shown = record.sample === undefined ? `FAILED: ${record.error}` : `${Math.round(record.sample.perSecond).toLocaleString('en-US')} dec/s`;
      context.log(`  run ${run + 1} ${record.scenario.padEnd(16)} ${record.contender.padEnd(24)} ${shown}`);
    }
  }
  return records;
}
