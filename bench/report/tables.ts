// Turns results into tables (headers and rows of text), rendered for the
// terminal (aligned columns) and for markdown.

import { bytesOf, errorOf, keyMemoryOf, measured, medianOf, type BenchResults, type ThroughputMetric } from '../results.js';
import type { TargetResult } from '../targets.js';
import { BYTES_MAXIMA } from '../workloads.js';

export interface Table {
  readonly title: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
  readonly note?: string;
  /** One line each, under the note: what some of the rows are (only rows present in the table). */
  readonly explanations?: readonly string[];
}

/** One line for each kind of row that needs saying what it is, by contender id prefix. */
const EXPLANATIONS: readonly (readonly [string, string])[] = [
  ['lib-script-cb@', 'script path (countBlocked true, useScript): `useScript: true` sends a countBlocked-true limiter through the one-EVALSHA script path instead of the MULTI path.'],
  ['floor-multi@', "floor: bare MULTI (same commands): one MULTI of exactly the library's attemptCommands() for the attempt, replies read only for |S| (and the newest score when there is a gap rule)."],
  ['floor-lua@', 'floor: bare EVALSHA (decide script): the library\'s DECIDE_SCRIPT by its SHA1, with the arguments the script path sends (one limiter, countBlocked false), reply read only for its allowed flag.'],
  [
    'floor-lua-stack3@',
    "floor: bare EVALSHA, 3 tiers: the same decide script over the 3-tier stack's keys and rules (per second max/2, the scenario's per-minute rule, per day max×100; countBlocked false).",
  ],
  ['floor-ping@', 'floor: PING round trip: one PING per decision, no key touched; the most a limiter that makes one round trip per decision can reach with that client (at c1, the round-trip ceiling).'],
  [
    'floor-memory-window',
    'floor: minimal rolling window in a Map: the least work an exact in-memory rolling window does (µs timestamps per id, drop the expired ones from the front, compare, push); no gap rule, no wait time, no clean-up of idle ids.',
  ],
];

function explain(contenders: BenchResults['contenders']): string[] {
  return EXPLANATIONS.filter(([prefix]) => contenders.some((c) => c.id.startsWith(prefix))).map(([, line]) => line);
}

const integer = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');
const decimal = (value: number, digits = 1): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const mib = (bytes: number | undefined): string => (bytes === undefined || !Number.isFinite(bytes) ? '–' : `${(bytes / 2 ** 20).toFixed(1)}`);

function cell(results: BenchResults, scenario: string, contender: string, metric: ThroughputMetric | undefined, format: (value: number) => string): string {
  if (!measured(results, scenario, contender)) return '';
  const value = medianOf(results, scenario, contender, metric);
  if (!Number.isFinite(value) && errorOf(results, scenario, contender) !== undefined) return 'error';
  return format(value);
}

const p50: ThroughputMetric = (record) => record.sample?.p50Us;
const p99: ThroughputMetric = (record) => record.sample?.p99Us;
const server = (pick: (s: NonNullable<Parameters<ThroughputMetric>[0]['server']>) => number): ThroughputMetric => (record) =>
  record.server === undefined ? undefined : pick(record.server);

function contendersOn(results: BenchResults, backends: 'redis' | 'memory'): BenchResults['contenders'] {
  return results.contenders.filter((c) => (backends === 'memory') === (c.backend === 'memory'));
}

export function throughputTable(results: BenchResults): Table {
  const contenders = contendersOn(results, 'redis');
  const rows = contenders.map((c) => [
    c.label,
    cell(results, 'redis-many-c1', c.id, undefined, integer),
    cell(results, 'redis-many-c64', c.id, undefined, integer),
    cell(results, 'redis-hot-c1', c.id, undefined, integer),
    cell(results, 'redis-hot-c64', c.id, undefined, integer),
    cell(results, 'redis-many-c1', c.id, p50, integer),
    cell(results, 'redis-many-c1', c.id, p99, integer),
  ]);
  return {
    title: 'Redis: decisions per second (median of runs); latency at concurrency 1, many ids',
    headers: ['contender', 'many ids c1', 'many ids c64', 'hot id c1', 'hot id c64', 'p50 µs', 'p99 µs'],
    rows,
    note: 'many ids: 100,000 ids, 10 per minute, mostly allowed; hot id: one id, 10 per minute, mostly blocked. c64 = 64 calls in flight from one process.',
    explanations: explain(contenders),
  };
}

export function serverTable(results: BenchResults): Table {
  const rows = contendersOn(results, 'redis').map((c) => [
    c.label,
    ...(['redis-many-c64', 'redis-hot-c64'] as const).flatMap((scenario) => [
      cell(results, scenario, c.id, server((s) => s.usecTopLevel), (v) => decimal(v, 2)),
      cell(results, scenario, c.id, server((s) => s.cpuUs), (v) => decimal(v, 1)),
      cell(results, scenario, c.id, server((s) => s.commands), (v) => decimal(v, 1)),
      cell(results, scenario, c.id, server((s) => s.bytesOut), integer),
      cell(results, scenario, c.id, server((s) => s.bytesIn), integer),
    ]),
  ]);
  return {
    title: 'Redis server per decision, concurrency 64 (median of runs)',
    headers: ['contender', 'many: cmd µs', 'CPU µs', 'commands', 'B out', 'B in', 'hot: cmd µs', 'CPU µs', 'commands', 'B out', 'B in'],
    rows,
    note: 'cmd µs: INFO commandstats usec of the commands clients sent (MULTI+EXEC or EVALSHA; nested commands not counted twice). CPU µs: redis-server user+sys CPU (INFO cpu), network I/O included. commands: all commandstats calls, nested ones included.',
  };
}

export function memoryTable(results: BenchResults): Table {
  const contenders = contendersOn(results, 'memory');
  const rows = contenders.map((c) => {
    const heap = results.heap.find((record) => record.contender === c.id);
    return [
      c.label,
      cell(results, 'memory-many-c1', c.id, undefined, integer),
      cell(results, 'memory-hot-c1', c.id, undefined, integer),
      cell(results, 'memory-many-c1', c.id, p50, (v) => decimal(v, 2)),
      cell(results, 'memory-many-c1', c.id, p99, (v) => decimal(v, 2)),
      heap === undefined ? '' : heap.error !== undefined ? 'error' : mib(heap.heapPerMillionIds),
      heap === undefined || heap.error !== undefined ? '' : mib(heap.heapPerMillionIdsAfterSecondWave),
    ];
  });
  return {
    title: 'In-memory: decisions per second (median of runs), latency, heap',
    headers: ['contender', 'many ids c1', 'hot id c1', 'p50 µs', 'p99 µs', 'heap MiB / 1M ids', 'after 2nd wave'],
    rows,
    note: 'max 100 per minute. Heap: heapUsed growth after one allowed decision for each of 1M new ids (after gc); "after 2nd wave": 1M more new ids once the first ones expired (injected clock and Date.now() moved past the interval). The floors have no heap measurement.',
    explanations: explain(contenders),
  };
}

export function bytesTable(results: BenchResults): Table {
  const ids = [...new Set(results.bytes.map((record) => record.contender))];
  return {
    title: 'Bytes sent back per decision, window kept full (hot id, 1 h interval)',
    headers: ['contender', ...BYTES_MAXIMA.map((max) => `max ${max.toLocaleString('en-US')}`)],
    rows: ids.map((id) => [results.contenders.find((c) => c.id === id)?.label ?? id, ...BYTES_MAXIMA.map((max) => integer(bytesOf(results, id, max)))]),
    note: "total_net_output_bytes delta / decisions at concurrency 1. rolling-rate-limiter's window was pre-filled with one ZADD of what it would have written; it records blocked attempts too, so its reply also grows with every attempt made during the measurement.",
  };
}

export function keyMemoryTable(results: BenchResults): Table {
  const rows: string[][] = [];
  for (const id of [...new Set(results.keyMemory.map((record) => record.contender))]) {
    for (const state of ['after 10 allowed', 'after flood'] as const) {
      const record = keyMemoryOf(results, id, state);
      if (record === undefined) continue;
      const label = results.contenders.find((c) => c.id === id)?.label ?? id;
      rows.push(
        record.error !== undefined
          ? [label, state, 'error', '', '', '']
          : [label, state + (record.replayed ? ' (replayed)' : ''), integer(record.bytes ?? Number.NaN), integer(record.members ?? Number.NaN), decimal(record.bytesPerMember ?? Number.NaN), record.encoding ?? ''],
      );
    }
  }
  return {
    title: 'Redis memory per key (MEMORY USAGE … SAMPLES 0), max 10 per minute',
    headers: ['contender', 'state', 'bytes', 'members', 'bytes / member', 'encoding'],
    rows,
    note: "flood: 20,000 attempts on one id. (replayed): rolling-rate-limiter's first 19,999 attempts written with one ZADD of what it stores (a UUID v4 member and a microsecond score each), the last one through the library.",
  };
}

export function targetsTable(targets: readonly TargetResult[]): Table {
  return {
    title: 'Targets (throughput: median of paired-slice ratios over all runs, [min–max] of the per-run ratios)',
    headers: ['target', 'ratio', 'goal', 'result', 'measured as'],
    rows: targets.map((t) => [
      t.target,
      `${decimal(t.ratio, 2)}×${t.spread === undefined ? '' : ` [${decimal(t.spread[0], 2)}–${decimal(t.spread[1], 2)}]`}`,
      t.goal,
      t.informational === true ? (t.pass ? 'yes' : 'no') : t.pass ? 'pass' : 'MISS',
      t.measure,
    ]),
    explanations: [
      ...(targets.some((t) => t.measure.includes('paired slices'))
        ? [
            'Throughput ratios pair slices: slice k of A against slice k of B, both from round k of the same run, so that both saw the same load; the ratio is the median over every pair of every run, so that a burst of load from elsewhere spoils a pair, not the result. [min–max] is the spread of the per-run ratios (the median of each run\'s pairs).',
          ]
        : []),
      ...(targets.some((t) => t.target.startsWith('ceiling:'))
        ? ['ceiling: rows measure a bound (a bare PING, EVALSHA or MULTI), not this library, and follow the target they bound: a MISS there means that target cannot be reached on this machine.']
        : []),
      ...(targets.some((t) => t.informational === true) ? ['(info) rows document, they are not goals (yes / no against the bound shown). The control row shows how far apart two identical contenders read in the same run: a target that misses by less than the control\'s spread is within this machine\'s noise.'] : []),
    ],
  };
}

/** Aligned plain-text columns. */
export function renderText(table: Table): string {
  const widths = table.headers.map((header, i) => Math.max(header.length, ...table.rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((text, i) => (i === 0 ? text.padEnd(widths[i] ?? 0) : text.padStart(widths[i] ?? 0))).join('  ');
  return [
    `== ${table.title}`,
    line(table.headers),
    line(widths.map((w) => '-'.repeat(w))),
    ...table.rows.map(line),
    ...(table.note === undefined ? [] : [`   ${table.note}`]),
    ...(table.explanations ?? []).map((text) => `   - ${text}`),
  ].join('\n');
}

/** A GitHub-flavoured markdown table with its title, note and explanations. */
export function renderMarkdown(table: Table): string {
  const escape = (text: string): string => text.replace(/\|/g, '\\|');
  const align = table.headers.map((_, i) => (i === 0 ? '---' : '---:'));
  return [
    `### ${table.title}`,
    '',
    `| ${table.headers.map(escape).join(' | ')} |`,
    `| ${align.join(' | ')} |`,
    ...table.rows.map((row) => `| ${row.map(escape).join(' | ')} |`),
    ...(table.note === undefined ? [] : ['', table.note]),
    ...(table.explanations === undefined || table.explanations.length === 0 ? [] : ['', ...table.explanations.map((text) => `- ${text}`)]),
  ].join('\n');
}
