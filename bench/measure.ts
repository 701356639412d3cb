// The measuring loop: `concurrency` workers in this one Node process, each
// awaiting one decision after another until the deadline, all drawing ids
// from one shared sequence. A measurement is made of slices (interleaved with
// other contenders' slices by the caller); decisions per second count every
// decision that completed, over the time until the last worker finished. At
// concurrency 1 each call's latency is recorded too.

import { percentile } from './stats.js';

/** Where ids come from: `ids[i % ids.length]` for the i-th call. */
export type IdSource = readonly string[];

/** One slice of a measurement. */
export interface Slice {
  readonly decisions: number;
  readonly blocked: number;
  readonly elapsedMs: number;
  /** Per-call latencies in µs (concurrency 1 only). */
  readonly latencies?: Float64Array;
}

/** A whole measurement, summed over its slices. */
export interface Sample {
  readonly decisions: number;
  readonly blocked: number;
  readonly elapsedMs: number;
  readonly perSecond: number;
  /** Latency percentiles in µs (concurrency 1 only). */
  readonly p50Us?: number;
  readonly p99Us?: number;
}

/** Most latencies kept per slice (the rest still count as decisions). */
const MAX_LATENCIES = 1 << 21;
let scratch: Float64Array | undefined;

/**
 * Runs decisions for `durationMs` at `concurrency`; a failing decision
 * rejects the whole slice (after the workers stop).
 */
export async function measure(
  decide: (id: string) => Promise<boolean>,
  ids: IdSource,
  concurrency: number,
  durationMs: number,
  cursor = { next: 0 },
): Promise<Slice> {
  const latencies = concurrency === 1 ? (scratch ??= new Float64Array(MAX_LATENCIES)) : undefined;
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
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error('a decision failed', { cause: failure });
  return { decisions, blocked, elapsedMs, ...(latencies === undefined ? {} : { latencies: latencies.slice(0, recorded) }) };
}

/** Sums slices into one sample, with latency percentiles over all of them. */
export function summarize(slices: readonly Slice[]): Sample {
  let decisions = 0;
  let blocked = 0;
  let elapsedMs = 0;
  let latencyCount = 0;
  for (const slice of slices) {
    decisions += slice.decisions;
    blocked += slice.blocked;
    elapsedMs += slice.elapsedMs;
    latencyCount += slice.latencies?.length ?? 0;
  }
  const sample: Sample = { decisions, blocked, elapsedMs, perSecond: (decisions * 1000) / elapsedMs };
  if (latencyCount === 0) return sample;
  const all = new Float64Array(latencyCount);
  let at = 0;
  for (const slice of slices) {
    if (slice.latencies === undefined) continue;
    all.set(slice.latencies, at);
    at += slice.latencies.length;
  }
  all.sort();
  return { ...sample, p50Us: percentile(all, 50), p99Us: percentile(all, 99) };
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
