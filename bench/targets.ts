// The performance targets, each computed as a ratio from one run's results
// (throughput ratios are taken within each run, then their median over runs)
// and judged pass / fail. Printed as the second table and kept in latest.md.

import { bytesOf, keyMemoryOf, measured, ratioInRuns, type BenchResults, type RunRatio } from './results.js';

export interface TargetResult {
  readonly target: string;
  /** What is divided by what. */
  readonly measure: string;
  /** e.g. `≥ 0.9`. */
  readonly goal: string;
  readonly ratio: number;
  /** Smallest and largest per-run ratio (throughput targets with several runs). */
  readonly spread?: readonly [number, number];
  readonly pass: boolean;
}

type Goal = { readonly atLeast: number } | { readonly atMost: number } | { readonly within: readonly [number, number] } | { readonly below: number };

function goalText(goal: Goal): string {
  if ('atLeast' in goal) return `≥ ${goal.atLeast}`;
  if ('atMost' in goal) return `≤ ${goal.atMost}`;
  if ('below' in goal) return `< ${goal.below}`;
  return `${goal.within[0]} to ${goal.within[1]}`;
}

function passes(goal: Goal, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if ('atLeast' in goal) return value >= goal.atLeast;
  if ('atMost' in goal) return value <= goal.atMost;
  if ('below' in goal) return value < goal.below;
  return value >= goal.within[0] && value <= goal.within[1];
}

const CONCURRENCIES = [1, 64] as const;

/** Every target whose inputs were measured in this run (so `--only` runs judge only what they measured). */
export function computeTargets(results: BenchResults): TargetResult[] {
  const out: TargetResult[] = [];
  const add = (target: string, measure: string, goal: Goal, value: RunRatio | number): void => {
    const ratio = typeof value === 'number' ? value : value.median;
    const spread = typeof value === 'number' || value.runs < 2 ? undefined : ([value.min, value.max] as const);
    out.push({ target, measure, goal: goalText(goal), ratio, ...(spread === undefined ? {} : { spread }), pass: passes(goal, ratio) });
  };
  const throughput = (target: string, goal: Goal, a: [string, string], b: [string, string]): void => {
    if (!measured(results, a[0], a[1]) || !measured(results, b[0], b[1])) return;
    add(target, `${a[1]} ${a[0]} / ${b[1]} ${b[0]}`, goal, ratioInRuns(results, { scenario: a[0], contender: a[1] }, { scenario: b[0], contender: b[1] }));
  };

  for (const c of CONCURRENCIES) {
    throughput(`default path, many ids, c${c}, vs rolling-rate-limiter`, { atLeast: 1 }, [`redis-many-c${c}`, 'lib-multi@ioredis'], [`redis-many-c${c}`, 'rrl@ioredis']);
  }
  for (const client of ['ioredis', 'node-redis5']) {
    for (const c of CONCURRENCIES) {
      const many = `redis-many-c${c}`;
      throughput(`default path vs bare MULTI floor, ${client}, many ids, c${c}`, { atLeast: 0.9 }, [many, `lib-multi@${client}`], [many, `floor-multi@${client}`]);
      throughput(`script path vs bare Lua floor, ${client}, many ids, c${c}`, { atLeast: 0.9 }, [many, `lib-script@${client}`], [many, `floor-lua@${client}`]);
    }
  }
  for (const path of ['multi', 'script']) {
    for (const c of CONCURRENCIES) {
      throughput(`hot id, ${path} path, c${c}, vs rolling-rate-limiter`, { atLeast: 20 }, [`redis-hot-c${c}`, `lib-${path}@ioredis`], [`redis-hot-c${c}`, 'rrl@ioredis']);
    }
  }
  for (const client of ['ioredis', 'node-redis5']) {
    for (const path of ['multi', 'script']) {
      for (const c of CONCURRENCIES) {
        const id = `lib-${path}@${client}`;
        throughput(`hot ≈ cold, ${path} path, ${client}, c${c}`, { within: [0.8, 1.25] }, [`redis-hot-c${c}`, id], [`redis-many-c${c}`, id]);
      }
    }
  }
  for (const c of CONCURRENCIES) {
    throughput(`3-tier stack vs single script-path limiter, many ids, c${c}`, { atLeast: 0.7 }, [`redis-many-c${c}`, 'lib-stack3@ioredis'], [`redis-many-c${c}`, 'lib-script@ioredis']);
  }
  throughput('in-memory vs rolling-rate-limiter InMemory, many ids, max 100', { atLeast: 10 }, ['memory-many-c1', 'lib-memory'], ['memory-many-c1', 'rrl-memory']);
  throughput('in-memory vs rolling-rate-limiter InMemory, hot id, max 100', { atLeast: 10 }, ['memory-hot-c1', 'lib-memory'], ['memory-hot-c1', 'rrl-memory']);

  for (const client of ['ioredis', 'node-redis5']) {
    for (const path of ['multi', 'script']) {
      const id = `lib-${path}@${client}`;
      const large = bytesOf(results, id, 10_000);
      const small = bytesOf(results, id, 10);
      if (Number.isFinite(large) || Number.isFinite(small)) add(`bytes per decision, max 10,000 vs max 10, ${path} path, ${client}`, `${id} ${large.toFixed(0)} B / ${small.toFixed(0)} B`, { atMost: 1.5 }, large / small);
    }
  }
  const rolling = keyMemoryOf(results, 'rrl@ioredis', 'after flood');
  for (const path of ['multi', 'script']) {
    const id = `lib-${path}@ioredis`;
    const flood = keyMemoryOf(results, id, 'after flood');
    if (flood?.members === undefined) continue;
    const limit = 10 + 1;
    add(`members after a 20,000-attempt flood ≤ max + 1, ${path} path`, `${id} ZCARD ${flood.members} / ${limit}`, { atMost: 1 }, flood.members / limit);
    if (rolling?.bytesPerMember !== undefined && flood.bytesPerMember !== undefined) {
      add(
        `bytes per member after the flood vs rolling-rate-limiter, ${path} path`,
        `${flood.bytesPerMember.toFixed(1)} B / ${rolling.bytesPerMember.toFixed(1)} B`,
        { below: 1 },
        flood.bytesPerMember / rolling.bytesPerMember,
      );
    }
  }
  const heap = results.heap.find((record) => record.contender === 'lib-memory');
  if (heap?.error === undefined && heap?.heapPerMillionIdsAfterSecondWave !== undefined) {
    add(
      'in-memory heap bounded: after a second wave of 1M ids (first expired) vs after the first',
      `${(heap.heapPerMillionIdsAfterSecondWave / 2 ** 20).toFixed(0)} MiB / ${(heap.heapPerMillionIds / 2 ** 20).toFixed(0)} MiB`,
      { atMost: 1.25 },
      heap.heapPerMillionIdsAfterSecondWave / heap.heapPerMillionIds,
    );
  }
  return out;
}
