// The measuring loop, the workloads it runs, and the small statistics the report needs.

import type { Rules } from './contenders.js';

/** One slice of a throughput measurement. */
export interface Slice {
  readonly decisions: number;
  readonly blocked: number;
  readonly elapsedMs: number;
  /** Client CPU (user + system) of the process that made the decisions, µs. */
  readonly cpuUs: number;
}

/** Per-call latencies in µs, kept in a buffer allocated once (the rest of the calls are counted, not kept). */
export interface Latencies {
  readonly values: Float64Array;
  count: number;
}

/**
 * `concurrency` workers, each awaiting one decision after another until
 * `durationMs` has passed, drawing ids from one shared cursor. A failing
 * decision fails the slice. Latencies are kept only when given a buffer.
 */
export async function measure(
  decide: (id: string) => Promise<boolean>,
  ids: readonly string[],
  concurrency: number,
  durationMs: number,
  cursor: { next: number },
  latencies?: Latencies,
): Promise<Slice> {
  let decisions = 0;
  let blocked = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async (): Promise<void> => {
    for (let before = performance.now(); before < deadline; before = performance.now()) {
      if (await decide(ids[cursor.next++ % ids.length]!)) blocked += 1;
      decisions += 1;
      if (latencies !== undefined && latencies.count < latencies.values.length) latencies.values[latencies.count++] = (performance.now() - before) * 1000;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const { user, system } = process.cpuUsage(cpu);
  return { decisions, blocked, elapsedMs: performance.now() - started, cpuUs: user + system };
}

/** `count` decisions for one id at `concurrency` (to fill a window), answers ignored. */
export async function drive(decide: (id: string) => Promise<boolean>, id: string, count: number, concurrency: number): Promise<void> {
  let left = count;
  const worker = async (): Promise<void> => {
    while (left-- > 0) await decide(id);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** The median of the finite values (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The p-th percentile (nearest rank) of sorted values. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** What every contender of a throughput scenario is given: the same rules, ids and calls in flight. */
export interface Scenario {
  /** e.g. `many-c64`, `memory-hot`. */
  readonly id: string;
  readonly label: string;
  readonly kind: 'redis' | 'memory';
  readonly rules: Rules;
  readonly ids: readonly string[];
  readonly concurrency: number;
}

/** 10 per minute on Redis (the README's push-notification rule without the gap), 100 per minute in memory. */
export const RULES = { redis: { interval: 60_000, maxInInterval: 10, minDifference: 0 }, memory: { interval: 60_000, maxInInterval: 100, minDifference: 0 } };
/** 100,000 ids in a scrambled but fixed order (7919 is coprime with 100,000). */
const MANY_IDS = Array.from({ length: 100_000 }, (_, i) => `user${(i * 7919) % 100_000}`);

export const SCENARIOS: readonly Scenario[] = (
  [
    ['redis', 'many', 1],
    ['redis', 'many', 64],
    ['redis', 'hot', 1],
    ['redis', 'hot', 64],
    ['memory', 'many', 1],
    ['memory', 'hot', 1],
  ] as const
).map(([kind, shape, concurrency]) => ({
  id: kind === 'memory' ? `memory-${shape}` : `${shape}-c${concurrency}`,
  label: `${kind === 'redis' ? 'Redis' : 'in memory'}: ${shape === 'many' ? '100k ids, mostly allowed' : 'one hot id, mostly blocked'}, max ${RULES[kind].maxInInterval}/min, ${concurrency} in flight`,
  kind,
  rules: RULES[kind],
  ids: shape === 'many' ? MANY_IDS : ['hot-user'],
  concurrency,
}));
