// The targets, as rows: one measured cell divided by another, and the bound
// the ratio should meet. A cell is `<contender> <measure>`: a throughput
// scenario (`many-c64`, `hot-c1`, `memory-many`) or a footprint entry
// (`bytes@10000`, `flood members`, `heap-2nd`, see footprint.ts); a number
// stands for itself. `{client}` and `{c}` expand to both clients and both
// concurrencies. A throughput ratio pairs slices: slice k of one cell over
// slice k of the other, taken in the same round under the same load, and
// takes the median of every pair of every run.
//
// Rows marked `info` document a comparison (yes / no against their bound, or
// no bound at all) and never count as a miss. The contenders that rows
// compare are measured next to each other in every round (measuringOrder).

import { median, SCENARIOS } from './measure.js';
import type { Footprint } from './footprint.js';
import type { ThroughputRecord } from './throughput.js';

export interface TargetRow {
  readonly name: string;
  readonly a: string;
  readonly b: string | number;
  readonly min?: number;
  readonly max?: number;
  readonly info?: true;
}

export const TARGETS: readonly TargetRow[] = [
  // Each path against the bare request it sends: what is left is the library's own work in the client.
  {
    name: 'MULTI path (useScript: false) / bare MULTI of its commands, {client}, many ids, c{c}',
    a: 'lib-multi@{client} many-c{c}',
    b: 'floor-multi@{client} many-c{c}',
    min: 0.9,
  },
  {
    name: 'script path / bare EVALSHA of the decide script, {client}, many ids, c{c}',
    a: 'lib-script@{client} many-c{c}',
    b: 'floor-lua@{client} many-c{c}',
    min: 0.9,
  },
  {
    name: '3-tier stack / bare EVALSHA over 3 tiers, {client}, many ids, c{c}',
    a: 'lib-stack3@{client} many-c{c}',
    b: 'floor-lua-stack3@{client} many-c{c}',
    min: 0.9,
  },
  {
    name: 'control: bare EVALSHA / the same floor again, ioredis, many ids, c{c}',
    a: 'control-floor-lua@ioredis many-c{c}',
    b: 'floor-lua@ioredis many-c{c}',
    min: 0.9,
    max: 1.1,
    info: true,
  },
  // The default path against what users would otherwise pick, and the MULTI path against the card's own four commands.
  {
    name: 'default path (the script, countBlocked true) / rolling-rate-limiter, {client}, many ids, c64',
    a: 'lib-script-cb@{client} many-c64',
    b: 'rrl@{client} many-c64',
    min: 1,
  },
  {
    name: 'hot id, default path (the script) / rolling-rate-limiter, {client}, c{c}',
    a: 'lib-script-cb@{client} hot-c{c}',
    b: 'rrl@{client} hot-c{c}',
    min: 20,
  },
  {
    name: "MULTI path (useScript: false) / bare MULTI of the card's four commands, {client}, many ids, c64",
    a: 'lib-multi@{client} many-c64',
    b: 'floor-card@{client} many-c64',
    min: 0.7,
  },
  // A hot, mostly blocked id against rolling-rate-limiter's, which sends back its whole window on every call.
  {
    name: 'hot id, MULTI path (useScript: false) / rolling-rate-limiter, {client}, c{c}',
    a: 'lib-multi@{client} hot-c{c}',
    b: 'rrl@{client} hot-c{c}',
    min: 20,
  },
  { name: 'hot id, script path / rolling-rate-limiter, {client}, c{c}', a: 'lib-script@{client} hot-c{c}', b: 'rrl@{client} hot-c{c}', min: 20 },
  {
    name: 'bound: hot id, bare MULTI / rolling-rate-limiter, {client}, c{c}',
    a: 'floor-multi@{client} hot-c{c}',
    b: 'rrl@{client} hot-c{c}',
    min: 20,
    info: true,
  },
  {
    name: 'bytes per decision, max 10,000 / max 10, MULTI path (useScript: false)',
    a: 'lib-multi@ioredis bytes@10000',
    b: 'lib-multi@ioredis bytes@10',
    max: 1.5,
  },
  { name: 'bytes per decision, max 10,000 / max 10, script path', a: 'lib-script@ioredis bytes@10000', b: 'lib-script@ioredis bytes@10', max: 1.5 },
  {
    name: 'default path (the script) / MULTI path (both countBlocked true), ioredis, many ids, c64',
    a: 'lib-script-cb@ioredis many-c64',
    b: 'lib-multi@ioredis many-c64',
    min: 2,
  },
  {
    name: 'default path (the script) / MULTI path, ioredis, many ids, c1',
    a: 'lib-script-cb@ioredis many-c1',
    b: 'lib-multi@ioredis many-c1',
    min: 1,
    info: true,
  },
  {
    name: 'default path (the script) / MULTI path, node-redis5, many ids, c{c}',
    a: 'lib-script-cb@node-redis5 many-c{c}',
    b: 'lib-multi@node-redis5 many-c{c}',
    min: 1,
    info: true,
  },
  // The libraries users would otherwise pick. rate-limiter-flexible counts in fixed windows: less work, weaker guarantees.
  {
    name: 'MULTI path (useScript: false) / rolling-rate-limiter, {client}, many ids, c{c}',
    a: 'lib-multi@{client} many-c{c}',
    b: 'rrl@{client} many-c{c}',
    info: true,
  },
  { name: 'script path / rolling-rate-limiter, {client}, many ids, c{c}', a: 'lib-script@{client} many-c{c}', b: 'rrl@{client} many-c{c}', info: true },
  { name: 'script path / rate-limiter-flexible, {client}, many ids, c{c}', a: 'lib-script@{client} many-c{c}', b: 'rlf@{client} many-c{c}', info: true },
  { name: 'script path / one PING per decision, {client}, many ids, c{c}', a: 'lib-script@{client} many-c{c}', b: 'floor-ping@{client} many-c{c}', info: true },
  // batch: true against one script call per decision, and against the ceiling of one command per decision.
  { name: 'batch: true / script path, {client}, many ids, c64', a: 'lib-batch@{client} many-c64', b: 'lib-script@{client} many-c64', min: 2 },
  { name: 'batch: true / one PING per decision, {client}, many ids, c64', a: 'lib-batch@{client} many-c64', b: 'floor-ping@{client} many-c64', min: 1 },
  {
    name: 'batch: true / script path (a lone call does not wait), {client}, many ids, c1',
    a: 'lib-batch@{client} many-c1',
    b: 'lib-script@{client} many-c1',
    min: 0.8,
  },
  { name: 'client CPU µs per decision, batch: true, {client}, many ids, c64', a: 'lib-batch@{client} many-c64 client-us', b: 1, max: 7.5 },
  { name: 'client CPU µs per decision, script path, {client}, many ids, c64', a: 'lib-script@{client} many-c64 client-us', b: 1, info: true },
  // Redis's own time per decision (INFO commandstats) against the least a rolling window costs it, the sliding-log
  // floor, on calls encoded beforehand and sent alike (redis-cost.ts): the script's work alone.
  {
    name: 'Redis time per decision, decide script / sliding-log floor, one call per decision, {client}',
    a: 'decide-script@{client} redis-us-1',
    b: 'sliding-log@{client} redis-us-1',
    max: 1.5,
  },
  {
    name: 'Redis time per decision, decide script / sliding-log floor, calls of 32, {client}',
    a: 'decide-script@{client} redis-us-32',
    b: 'sliding-log@{client} redis-us-32',
    max: 1.2,
  },
  {
    name: 'Redis time per decision, default path (countBlocked true) / sliding-log floor, one call per decision, {client}',
    a: 'decide-script-cb@{client} redis-us-1',
    b: 'sliding-log@{client} redis-us-1',
    info: true,
  },
  // Costs: a weighted decision against a plain one and the floor, on the same workload (redis-cost.ts).
  {
    name: 'Redis time per decision, cost tier / plain decide script, one call per decision, {client}',
    a: 'decide-cost@{client} redis-us-1',
    b: 'decide-script@{client} redis-us-1',
    info: true,
  },
  {
    name: 'Redis time per decision, cost tier / plain decide script, calls of 32, {client}',
    a: 'decide-cost@{client} redis-us-32',
    b: 'decide-script@{client} redis-us-32',
    info: true,
  },
  {
    name: 'Redis time per decision, cost tier / sliding-log floor, one call per decision, {client}',
    a: 'decide-cost@{client} redis-us-1',
    b: 'sliding-log@{client} redis-us-1',
    info: true,
  },
  {
    name: 'Redis time per decision, cost tier / sliding-log floor, calls of 32, {client}',
    a: 'decide-cost@{client} redis-us-32',
    b: 'sliding-log@{client} redis-us-32',
    info: true,
  },
  {
    name: 'Redis time per decision, cost tier (countBlocked true) / default path, one call per decision, {client}',
    a: 'decide-cost-cb@{client} redis-us-1',
    b: 'decide-script-cb@{client} redis-us-1',
    info: true,
  },
  {
    name: 'Redis time per decision, RPM + TPM stack / stack of two action tiers, one call per decision, {client}',
    a: 'decide-rpm-tpm@{client} redis-us-1',
    b: 'decide-stack2@{client} redis-us-1',
    info: true,
  },
  {
    name: 'Redis time per decision, RPM + TPM stack / stack of two action tiers, calls of 32, {client}',
    a: 'decide-rpm-tpm@{client} redis-us-32',
    b: 'decide-stack2@{client} redis-us-32',
    info: true,
  },
  {
    name: 'members per key, 200k-token tier at its budget, calls of 1,000 / 200',
    a: 'decide-wait@ioredis steady-200k members',
    b: 200,
    max: 1.1,
    info: true,
  },
  // The same in the throughput cells, where a contender whose client works harder also slows redis-server down (two
  // cores, and commandstats counts the time a command waited for the CPU).
  {
    name: 'Redis time per decision under load, script path / sliding-log floor, {client}, many ids, c64',
    a: 'lib-script@{client} many-c64 redis-us',
    b: 'floor-log@{client} many-c64 redis-us',
    max: 1.5,
    info: true,
  },
  {
    name: 'Redis time per decision under load, batch: true / sliding-log floor batched, {client}, many ids, c64',
    a: 'lib-batch@{client} many-c64 redis-us',
    b: 'floor-log-batch@{client} many-c64 redis-us',
    max: 1.2,
    info: true,
  },
  {
    name: 'Redis time per decision, default path (countBlocked true) / sliding-log floor, {client}, many ids, c64',
    a: 'lib-script-cb@{client} many-c64 redis-us',
    b: 'floor-log@{client} many-c64 redis-us',
    info: true,
  },
  {
    name: 'Redis time per decision, MULTI path / sliding-log floor, {client}, many ids, c64',
    a: 'lib-multi@{client} many-c64 redis-us',
    b: 'floor-log@{client} many-c64 redis-us',
    info: true,
  },
  {
    name: 'Redis time per decision, 3-tier stack / script path, {client}, many ids, c64',
    a: 'lib-stack3@{client} many-c64 redis-us',
    b: 'lib-script@{client} many-c64 redis-us',
    info: true,
  },
  { name: 'batch: true / script path, hot id, {client}, c{c}', a: 'lib-batch@{client} hot-c{c}', b: 'lib-script@{client} hot-c{c}', info: true },
  {
    name: '3-tier stack, batch: true / 3-tier stack, {client}, many ids, c{c}',
    a: 'lib-batch-stack3@{client} many-c{c}',
    b: 'lib-stack3@{client} many-c{c}',
    info: true,
  },
  {
    name: '3-tier stack / one script-path limiter, {client}, many ids, c{c}',
    a: 'lib-stack3@{client} many-c{c}',
    b: 'lib-script@{client} many-c{c}',
    info: true,
  },
  {
    name: 'hot id / many ids (a hot id costs no more), MULTI path (useScript: false), {client}, c{c}',
    a: 'lib-multi@{client} hot-c{c}',
    b: 'lib-multi@{client} many-c{c}',
    min: 0.8,
    info: true,
  },
  {
    name: 'hot id / many ids (a hot id costs no more), script path, {client}, c{c}',
    a: 'lib-script@{client} hot-c{c}',
    b: 'lib-script@{client} many-c{c}',
    min: 0.8,
    info: true,
  },
  { name: 'in memory / rolling-rate-limiter, many ids', a: 'lib-memory memory-many', b: 'rrl-memory memory-many', info: true },
  { name: 'in memory / rolling-rate-limiter, hot id', a: 'lib-memory memory-hot', b: 'rrl-memory memory-hot', info: true },
  { name: 'in memory / rate-limiter-flexible, many ids', a: 'lib-memory memory-many', b: 'rlf-memory memory-many', info: true },
  { name: 'members after a 20,000-attempt flood / (max + 1), MULTI path (useScript: false)', a: 'lib-multi@ioredis flood members', b: 11, max: 1, info: true },
  { name: 'members after a 20,000-attempt flood / (max + 1), script path', a: 'lib-script@ioredis flood members', b: 11, max: 1, info: true },
  {
    name: "key size after a 20,000-attempt flood / rolling-rate-limiter's",
    a: 'lib-multi@ioredis flood bytes',
    b: 'rrl@ioredis flood bytes',
    max: 1,
    info: true,
  },
  { name: 'in-memory heap after a 2nd million ids (1st expired) / after the 1st', a: 'lib-memory heap-2nd', b: 'lib-memory heap', max: 1.25, info: true },
];

export interface BenchData {
  readonly throughput: readonly ThroughputRecord[];
  readonly footprint: Footprint;
}

export interface TargetResult extends TargetRow {
  readonly b: string;
  readonly ratio: number;
  readonly result: 'pass' | 'MISS' | 'yes' | 'no' | '';
  /** Throughput: how many slice pairs the ratio is the median of, and the range of the per-run medians. */
  readonly pairs?: number;
  readonly spread?: readonly [number, number];
}

/** Every row with its `{client}` and `{c}` expanded. */
function expanded(): TargetRow[] {
  return TARGETS.flatMap((row) =>
    (row.name.includes('{client}') ? ['ioredis', 'node-redis5'] : ['']).flatMap((client) =>
      (row.name.includes('{c}') ? ['1', '64'] : ['']).map((c) => {
        const fill = (text: string): string => text.replaceAll('{client}', client).replaceAll('{c}', c);
        return { ...row, name: fill(row.name), a: fill(row.a), b: typeof row.b === 'number' ? row.b : fill(row.b) };
      }),
    ),
  );
}

const split = (cell: string): [contender: string, measure: string] => [cell.slice(0, cell.indexOf(' ')), cell.slice(cell.indexOf(' ') + 1)];
const isThroughput = (cell: string): boolean => SCENARIOS.some((s) => s.id === split(cell)[1]);
const PER_DECISION: Record<string, (record: ThroughputRecord) => number | undefined> = {
  'redis-us': (r) => r.server?.cmdUs,
  'client-us': (r) => r.clientCpuUs,
};

/** A per-decision figure of a throughput cell (`<contender> <scenario> redis-us`), the median of its runs; undefined when not measured. */
function perDecision(data: BenchData, cell: string): number | undefined {
  const [contender, scenario, figure] = cell.split(' ') as [string, string, string?];
  const pick = figure === undefined ? undefined : PER_DECISION[figure];
  const records = data.throughput.filter((r) => r.contender === contender && r.scenario === scenario);
  return pick === undefined || records.length === 0 ? undefined : median(records.map((r) => pick(r) ?? Number.NaN));
}

/**
 * The contenders that rows compare by throughput, goals first, each placed
 * next to the one it is first compared with, on a side not already taken by
 * an earlier pair.
 */
export function measuringOrder(): string[] {
  const order: string[] = [];
  const paired = new Set<string>();
  const place = (newcomer: string, partner: string): void => {
    const at = order.indexOf(partner);
    const free = (neighbour: string | undefined): boolean => neighbour === undefined || !paired.has(`${neighbour} ${partner}`);
    order.splice(free(order[at + 1]) ? at + 1 : free(order[at - 1]) ? at : order.length, 0, newcomer);
    paired.add(`${newcomer} ${partner}`).add(`${partner} ${newcomer}`);
  };
  for (const { a, b } of [...expanded()].sort((x, y) => Number(x.info === true) - Number(y.info === true))) {
    if (typeof b !== 'string' || !isThroughput(a) || !isThroughput(b)) continue;
    const [x, y] = [split(a)[0], split(b)[0]];
    if (!order.includes(x) && !order.includes(y)) order.push(...new Set([x, y]));
    if (x !== y) paired.add(`${x} ${y}`).add(`${y} ${x}`);
    if (!order.includes(y)) place(y, x);
    if (!order.includes(x)) place(x, y);
  }
  return order;
}

/** Paired-slice ratio of two throughput cells over every run. */
function throughputRatio(data: BenchData, a: string, b: string): Pick<TargetResult, 'ratio' | 'pairs' | 'spread'> | undefined {
  const find = (run: number, cell: string): ThroughputRecord | undefined => {
    const [contender, scenario] = split(cell);
    return data.throughput.find((r) => r.run === run && r.contender === contender && r.scenario === scenario);
  };
  const pooled: number[] = [];
  const perRun: number[] = [];
  let seen = false;
  for (const run of new Set(data.throughput.map((r) => r.run))) {
    const [top, bottom] = [find(run, a), find(run, b)];
    seen ||= top !== undefined && bottom !== undefined;
    if (top?.slices === undefined || bottom?.slices === undefined) continue;
    const pairs = top.slices
      .slice(0, bottom.slices.length)
      .map((value, k) => value / bottom.slices![k]!)
      .filter(Number.isFinite);
    pooled.push(...pairs);
    perRun.push(median(pairs));
  }
  if (!seen) return undefined;
  return { ratio: median(pooled), pairs: pooled.length, ...(perRun.length > 1 ? { spread: [Math.min(...perRun), Math.max(...perRun)] as const } : {}) };
}

/** Every row whose cells were measured (so an `--only` run judges only what it measured). */
export function evaluateTargets(data: BenchData): TargetResult[] {
  return expanded().flatMap((row): TargetResult[] => {
    const { b } = row;
    let measured: Pick<TargetResult, 'ratio' | 'pairs' | 'spread'> | undefined;
    if (typeof b === 'string' && isThroughput(row.a) && isThroughput(b)) measured = throughputRatio(data, row.a, b);
    else {
      const value = (cell: string | number): number | undefined =>
        typeof cell === 'number' ? cell : ((data.footprint[cell] as number | undefined) ?? perDecision(data, cell));
      const [top, bottom] = [value(row.a), value(b)];
      if (top !== undefined || bottom !== undefined) measured = { ratio: (top ?? Number.NaN) / (bottom ?? Number.NaN) };
    }
    if (measured === undefined) return [];
    const bounded = row.min !== undefined || row.max !== undefined;
    const pass = Number.isFinite(measured.ratio) && measured.ratio >= (row.min ?? -Infinity) && measured.ratio <= (row.max ?? Infinity);
    const result = row.info === true ? (bounded ? (pass ? 'yes' : 'no') : '') : pass ? 'pass' : 'MISS';
    return [{ ...row, b: String(b), ...measured, result }];
  });
}
