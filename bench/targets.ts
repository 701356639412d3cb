// The performance targets, each computed as a ratio from one run's results
// (throughput ratios are taken between slices of the same round, then their
// median over every round of every run) and judged pass / fail. Printed as the
// second table and kept in latest.md. The targets are exactly these:
// - the default path (MULTI) ≥ 0.9× a bare MULTI of its own commands, and the
//   script path (one limiter, and the 3-tier stack) ≥ 0.9× a bare EVALSHA of
//   the decide script with its own arguments, on ioredis and node-redis;
// - a hot id ≥ 20× rolling-rate-limiter's, on every path;
// - bytes per decision flat from maxInInterval 10 to 10,000 (≤ 1.5×);
// - `useScript` ≥ 2× the MULTI path at 64 calls in flight on ioredis.
//
// Two kinds of rows are not goals of this library:
// - `ceiling:` rows measure a bound (a bare PING, a bare script or MULTI)
//   against the same reference as a target, and follow the target they bound:
//   when one misses, the target it bounds cannot be reached on this machine by
//   any limiter of that shape;
// - informational rows (goal marked "(info)", result yes / no) document a
//   comparison or a trade-off, and never count as a miss.

import { bytesOf, keyMemoryOf, measured, throughputRatio, type BenchResults, type RunRatio } from './results.js';

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
  /** An informational row: it documents, it is not a goal (shown as yes / no, never as a miss). */
  readonly informational?: true;
}

type Bound = { readonly atLeast: number } | { readonly atMost: number } | { readonly within: readonly [number, number] } | { readonly below: number };
/** A bound the ratio is judged against; `informational` rows document rather than judge. */
type Goal = Bound & { readonly informational?: true };

function boundText(goal: Bound): string {
  if ('atLeast' in goal) return `≥ ${goal.atLeast}`;
  if ('atMost' in goal) return `≤ ${goal.atMost}`;
  if ('below' in goal) return `< ${goal.below}`;
  return `${goal.within[0]} to ${goal.within[1]}`;
}

function goalText(goal: Goal): string {
  return goal.informational === true ? `${boundText(goal)} (info)` : boundText(goal);
}

function passes(goal: Goal, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  if ('atLeast' in goal) return value >= goal.atLeast;
  if ('atMost' in goal) return value <= goal.atMost;
  if ('below' in goal) return value < goal.below;
  return value >= goal.within[0] && value <= goal.within[1];
}

const CONCURRENCIES = [1, 64] as const;
const CLIENTS = ['ioredis', 'node-redis5'] as const;

/** The library's Redis paths, by contender id part and by the words the target names use. */
const PATHS = [
  { id: 'multi', name: 'multi path' },
  { id: 'script', name: 'script path' },
  { id: 'script-cb', name: 'script option (countBlocked true)' },
] as const;

/** Every target whose inputs were measured in this run (so `--only` runs judge only what they measured). */
export function computeTargets(results: BenchResults): TargetResult[] {
  const out: TargetResult[] = [];
  const add = (target: string, measure: string, goal: Goal, value: RunRatio | number): void => {
    const ratio = typeof value === 'number' ? value : value.median;
    const spread = typeof value === 'number' || value.runs < 2 ? undefined : ([value.min, value.max] as const);
    const pairs = typeof value === 'number' || value.pairs === undefined ? '' : `, ${value.pairs} paired slices`;
    out.push({
      target,
      measure: `${measure}${pairs}`,
      goal: goalText(goal),
      ratio,
      ...(spread === undefined ? {} : { spread }),
      pass: passes(goal, ratio),
      ...(goal.informational === true ? { informational: true as const } : {}),
    });
  };
  const throughput = (target: string, goal: Goal, a: [string, string], b: [string, string]): void => {
    if (!measured(results, a[0], a[1]) || !measured(results, b[0], b[1])) return;
    add(target, `${a[1]} ${a[0]} / ${b[1]} ${b[0]}`, goal, throughputRatio(results, { scenario: a[0], contender: a[1] }, { scenario: b[0], contender: b[1] }));
  };

  const info = (bound: Bound): Goal => ({ ...bound, informational: true });

  for (const client of CLIENTS) {
    for (const c of CONCURRENCIES) {
      const many = `redis-many-c${c}`;
      throughput(`default path vs bare MULTI of its commands, ${client}, many ids, c${c}`, { atLeast: 0.9 }, [many, `lib-multi@${client}`], [many, `floor-multi@${client}`]);
      throughput(`script path vs bare EVALSHA of the decide script, ${client}, many ids, c${c}`, { atLeast: 0.9 }, [many, `lib-script@${client}`], [many, `floor-lua@${client}`]);
      throughput(`script path, 3-tier stack vs bare EVALSHA of the decide script (3 tiers), ${client}, many ids, c${c}`, { atLeast: 0.9 }, [many, `lib-stack3@${client}`], [many, `floor-lua-stack3@${client}`]);
    }
  }
  for (const c of CONCURRENCIES) {
    const many = `redis-many-c${c}`;
    throughput(`control: bare EVALSHA vs its identical twin, ioredis, many ids, c${c} (how far apart equals read)`, info({ within: [0.9, 1.1] }), [many, 'control-floor-lua@ioredis'], [many, 'floor-lua@ioredis']);
  }
  for (const path of PATHS) {
    for (const c of CONCURRENCIES) {
      throughput(`hot id, ${path.name}, c${c}, vs rolling-rate-limiter`, { atLeast: 20 }, [`redis-hot-c${c}`, `lib-${path.id}@ioredis`], [`redis-hot-c${c}`, 'rrl@ioredis']);
    }
  }
  throughput(
    'ceiling: PING round trip vs rolling-rate-limiter, hot id, c1 (the most any Redis limiter can reach)',
    { atLeast: 20 },
    ['redis-hot-c1', 'floor-ping@ioredis'],
    ['redis-hot-c1', 'rrl@ioredis'],
  );
  // The least work on the same path as the hot-id targets: the bare script (script path) and the bare MULTI (MULTI path).
  for (const c of CONCURRENCIES) {
    const hot = `redis-hot-c${c}`;
    throughput(`ceiling: bare EVALSHA vs rolling-rate-limiter, hot id, c${c}`, { atLeast: 20 }, [hot, 'floor-lua@ioredis'], [hot, 'rrl@ioredis']);
    throughput(`ceiling: bare MULTI vs rolling-rate-limiter, hot id, c${c}`, { atLeast: 20 }, [hot, 'floor-multi@ioredis'], [hot, 'rrl@ioredis']);
  }
  for (const client of CLIENTS) {
    for (const path of PATHS) {
      const id = `lib-${path.id}@${client}`;
      const large = bytesOf(results, id, 10_000);
      const small = bytesOf(results, id, 10);
      if (Number.isFinite(large) || Number.isFinite(small)) add(`bytes per decision, max 10,000 vs max 10, ${path.name}, ${client}`, `${id} ${large.toFixed(0)} B / ${small.toFixed(0)} B`, { atMost: 1.5 }, large / small);
    }
  }
  throughput('useScript: script option vs MULTI path, countBlocked true, ioredis, many ids, c64', { atLeast: 2 }, ['redis-many-c64', 'lib-script-cb@ioredis'], ['redis-many-c64', 'lib-multi@ioredis']);

  // Information only. The default path against rolling-rate-limiter, and the bare MULTI that bounds it: the
  // default path's MULTI sends more commands than rolling-rate-limiter's four, and ioredis's cost is per command.
  for (const c of CONCURRENCIES) {
    const many = `redis-many-c${c}`;
    throughput(`default path vs rolling-rate-limiter, many ids, c${c}`, info({ atLeast: 1 }), [many, 'lib-multi@ioredis'], [many, 'rrl@ioredis']);
    throughput(`bare MULTI of the default path's commands vs rolling-rate-limiter, many ids, c${c}`, info({ atLeast: 1 }), [many, 'floor-multi@ioredis'], [many, 'rrl@ioredis']);
  }
  for (const client of CLIENTS) {
    for (const c of CONCURRENCIES) {
      if (client === 'ioredis' && c === 64) continue;
      const many = `redis-many-c${c}`;
      throughput(`useScript: script option vs MULTI path, countBlocked true, ${client}, many ids, c${c}`, info({ atLeast: 1 }), [many, `lib-script-cb@${client}`], [many, `lib-multi@${client}`]);
    }
  }
  for (const client of CLIENTS) {
    for (const path of PATHS) {
      for (const c of CONCURRENCIES) {
        const id = `lib-${path.id}@${client}`;
        // A hot id costs no more than a cold one (0.8 leaves room for noise). It may cost less: a blocked attempt
        // that is not counted writes nothing, so a mostly blocked id is cheaper by design.
        throughput(`hot id vs many ids (costs no more than cold), ${path.name}, ${client}, c${c}`, info({ atLeast: 0.8 }), [`redis-hot-c${c}`, id], [`redis-many-c${c}`, id]);
      }
    }
  }
  for (const client of CLIENTS) {
    for (const c of CONCURRENCIES) {
      const many = `redis-many-c${c}`;
      throughput(`3-tier stack vs single script-path limiter, ${client}, many ids, c${c}`, info({ atLeast: 0.7 }), [many, `lib-stack3@${client}`], [many, `lib-script@${client}`]);
    }
  }
  throughput('in-memory vs rolling-rate-limiter InMemory, many ids, max 100', info({ atLeast: 10 }), ['memory-many-c1', 'lib-memory'], ['memory-many-c1', 'rrl-memory']);
  throughput('minimal in-memory rolling window vs rolling-rate-limiter InMemory, many ids, max 100', info({ atLeast: 10 }), ['memory-many-c1', 'floor-memory-window'], ['memory-many-c1', 'rrl-memory']);
  throughput('in-memory vs rolling-rate-limiter InMemory, hot id, max 100', info({ atLeast: 10 }), ['memory-hot-c1', 'lib-memory'], ['memory-hot-c1', 'rrl-memory']);

  const rolling = keyMemoryOf(results, 'rrl@ioredis', 'after flood');
  for (const path of PATHS) {
    const id = `lib-${path.id}@ioredis`;
    const flood = keyMemoryOf(results, id, 'after flood');
    if (flood?.members === undefined) continue;
    const limit = 10 + 1;
    add(`members after a 20,000-attempt flood ≤ max + 1, ${path.name}`, `${id} ZCARD ${flood.members} / ${limit}`, info({ atMost: 1 }), flood.members / limit);
    if (rolling?.bytesPerMember !== undefined && flood.bytesPerMember !== undefined) {
      add(
        `bytes per member after the flood vs rolling-rate-limiter, ${path.name}`,
        `${flood.bytesPerMember.toFixed(1)} B / ${rolling.bytesPerMember.toFixed(1)} B`,
        info({ below: 1 }),
        flood.bytesPerMember / rolling.bytesPerMember,
      );
    }
  }
  const heap = results.heap.find((record) => record.contender === 'lib-memory');
  if (heap?.error === undefined && heap?.heapPerMillionIdsAfterSecondWave !== undefined) {
    add(
      'in-memory heap bounded: after a second wave of 1M ids (first expired) vs after the first',
      `${(heap.heapPerMillionIdsAfterSecondWave / 2 ** 20).toFixed(0)} MiB / ${(heap.heapPerMillionIds / 2 ** 20).toFixed(0)} MiB`,
      info({ atMost: 1.25 }),
      heap.heapPerMillionIdsAfterSecondWave / heap.heapPerMillionIds,
    );
  }
  return out;
}
