// The measuring loop: `concurrency` workers in this one Node process, each
// awaiting one decision after another until the deadline, all drawing ids
// from one shared sequence. Decisions per second count every decision that
// completed, over the time until the last worker finished. At concurrency 1
// each call's latency is recorded too.

import { percentile } from './stats.js';

/** Where ids come from: `ids[i % ids.length]` for the i-th call. */
export type IdSource = readonly string[];

export interface Sample {
  readonly decisions: number;
  readonly blocked: number;
  readonly elapsedMs: number;
  readonly perSecond: number;
  /** Latency percentiles in µs (concurrency 1 only). */
  readonly p50Us?: number;
  readonly p99Us?: number;
}

/** Most latencies kept per measurement (the rest still count as decisions). */
const MAX_LATENCIES = 1 << 22;
let latencyBuffer: Float64Array | undefined;

/**
 * Runs decisions for `durationMs` at `concurrency`; a failing decision
 * rejects the whole measurement (after the workers stop).
 */
export async function measure(
  decide: (id: string) => Promise<boolean>,
  ids: IdSource,
  concurrency: number,
  durationMs: number,
  cursor = { next: 0 },
): Promise<Sample> {
  const recordLatency = concurrency === 1;
  if (recordLatency) latencyBuffer ??= new Float64Array(MAX_LATENCIES);
  const latencies = recordLatency ? (latencyBuffer as Float64Array) : undefined;
  let recorded = 0;
  let decisions = 0;
  let blocked = 0;
  let failure: unknown;
  const started = performance.now();
  const deadline = started + durationMs;

  const worker = async (): Promise<void> => {
    while (failure === undefined) {
      const before = performance.now();
      if (before >= deadline) return;
      const id = ids[cursor.next++ % ids.length] as string;
      try {
        if (await decide(id)) blocked += 1;
      } catch (error) {
        failure ??= error;
        return;
      }
      decisions += 1;
      if (latencies !== undefined && recorded < MAX_LATENCIES) latencies[recorded++] = (performance.now() - before) * 1000;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - started;
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));

  const sample: Sample = { decisions, blocked, elapsedMs, perSecond: (decisions * 1000) / elapsedMs };
  if (latencies === undefined || recorded === 0) return sample;
  const sorted = latencies.subarray(0, recorded).sort();
  return { ...sample, p50Us: percentile(sorted, 50), p99Us: percentile(sorted, 99) };
}

/** Runs `count` decisions at `concurrency` (for filling windows), ignoring the answers. */
export async function drive(decide: (id: string) => Promise<boolean>, id: string, count: number, concurrency: number): Promise<void> {
  let left = count;
  const worker = async (): Promise<void> => {
    while (left > 0) {
      left -= 1;
      await decide(id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}
