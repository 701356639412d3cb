// The report: the machine, the targets and the tables, printed to the
// terminal and written to bench/results/latest.{md,svg,json}.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Contender } from './contenders.js';
import { BYTES_MAXIMA } from './footprint.js';
import { COST_BATCHES, COST_KINDS, COST_LABELS, COST_WORKLOAD, costCell, WAIT_CASES, waitCell, type WaitCaseId } from './redis-cost.js';
import { median, SCENARIOS } from './measure.js';
import { evaluateTargets, type BenchData, type TargetResult } from './targets.js';
import type { ThroughputRecord } from './throughput.js';
import { describePinning } from './support/cpu-pinning.js';

export interface BenchResults extends BenchData {
  readonly startedAt: string;
  readonly finishedAt: string;
  /** How the run was started, e.g. `npm run bench -- --runs 1`. */
  readonly command: string;
  readonly runs: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly machine: readonly string[];
  readonly contenders: readonly Pick<Contender, 'id' | 'label' | 'family' | 'backend'>[];
}

export const RESULTS_DIR = fileURLToPath(new URL('results/', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function version(name: string, path = `node_modules/${name}/package.json`): string {
  try {
    return `${name} ${(JSON.parse(readFileSync(`${ROOT}${path}`, 'utf8')) as { version: string }).version}`;
  } catch {
    return `${name} not installed`;
  }
}

/** The machine and software measured, one line per fact. */
export function describeMachine(redisVersion: string): string[] {
  let source = 'unknown (no git)';
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length;
    source = `git ${git('rev-parse', '--short', 'HEAD')}${dirty === 0 ? '' : ` with ${dirty} uncommitted file(s) under src/`}`;
  } catch {
    // not a git checkout
  }
  const load = os.loadavg().map((value) => value.toFixed(2));
  return [
    `CPUs: ${os.availableParallelism()} × ${os.cpus()[0]?.model ?? 'unknown'}; memory ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; ${os.type()} ${os.release()} ${os.arch()}`,
    `load average at start: ${load.join(', ')} (1, 5, 15 min)`,
    `Node ${process.version}; Redis ${redisVersion} (one redis-server on 127.0.0.1, no persistence)`,
    describePinning(),
    `library measured: its CommonJS build in dist/, compiled from ${source}`,
    `packages: ${[version('rolling-window-limiter', 'package.json'), version('ioredis'), `node-redis ${version('redis5').split(' ')[1]} (as redis5)`, version('rolling-rate-limiter'), version('rate-limiter-flexible')].join('; ')}`,
  ];
}

interface Table {
  readonly title: string;
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
  readonly note?: string;
}

const integer = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');
const fixed =
  (digits: number) =>
  (value: number): string =>
    Number.isFinite(value) ? value.toFixed(digits) : '–';
const ratioText = (value: number): string =>
  Number.isFinite(value) ? `${value >= 10 ? value.toFixed(1) : value >= 0.01 ? value.toFixed(2) : value.toPrecision(2)}×` : '–';

/** The median over runs of one figure of a throughput cell, as text ('' when not measured). */
function cell(results: BenchResults, contender: string, scenario: string, pick: (record: ThroughputRecord) => number | undefined, format = integer): string {
  const records = results.throughput.filter((r) => r.contender === contender && r.scenario === scenario);
  if (records.length === 0) return '';
  const value = median(records.map((r) => pick(r) ?? Number.NaN));
  return Number.isFinite(value) || records.every((r) => r.error === undefined) ? format(value) : 'error';
}

const onRedis = (results: BenchResults): BenchResults['contenders'] => results.contenders.filter((c) => c.backend !== 'memory');
const footprint = (results: BenchResults, key: string, format: (value: number) => string): string => {
  const value = results.footprint[key];
  return value === undefined ? '' : typeof value === 'string' ? value : format(value);
};

function tables(results: BenchResults, targets: readonly TargetResult[]): Table[] {
  const redis = onRedis(results).filter((c) => results.throughput.some((r) => r.contender === c.id));
  const memory = results.contenders.filter((c) => c.backend === 'memory');
  const keyed = (suffix: string) => results.contenders.filter((c) => results.footprint[`${c.id} ${suffix}`] !== undefined);
  const all: Table[] = [
    {
      title: 'Targets',
      headers: ['target', 'ratio', 'goal', 'result', 'measured as'],
      rows: targets.map((t) => [
        t.name,
        `${ratioText(t.ratio)}${t.spread === undefined ? '' : ` [${ratioText(t.spread[0])}–${ratioText(t.spread[1])}]`}`,
        [t.min === undefined ? '' : `≥ ${t.min}`, t.max === undefined ? '' : `≤ ${t.max}`].filter(Boolean).join(', ') + (t.info === true ? ' (info)' : ''),
        t.result,
        `${t.a} / ${t.b}${t.pairs === undefined ? '' : `, median of ${t.pairs} slice pairs`}`,
      ]),
      note: 'Throughput ratios pair slice k of one cell with slice k of the other (same round, same load) and take the median over every pair of every run; [min–max] spans the per-run medians. (info) rows document and never miss; `bound:` rows measure a floor, not this library: what any limiter sending those commands could reach.',
    },
    {
      title: 'Redis: decisions per second (median of runs), and latency with one and 64 calls in flight, many ids',
      headers: ['contender', 'many ids c1', 'many ids c64', 'hot id c1', 'hot id c64', 'p50 µs c1', 'p99 µs c1', 'p50 µs c64', 'p99 µs c64'],
      rows: redis.map((c) => [
        c.label,
        ...['many-c1', 'many-c64', 'hot-c1', 'hot-c64'].map((s) => cell(results, c.id, s, (r) => r.perSecond)),
        cell(results, c.id, 'many-c1', (r) => r.p50Us),
        cell(results, c.id, 'many-c1', (r) => r.p99Us),
        cell(results, c.id, 'many-c64', (r) => r.p50Us),
        cell(results, c.id, 'many-c64', (r) => r.p99Us),
      ]),
      note: 'many ids: 100,000 ids, 10 per minute, mostly allowed. hot id: one id, 10 per minute, mostly blocked. c64: 64 calls in flight from one process.',
    },
    {
      title: 'CPU and bytes per decision, 64 calls in flight (median of runs)',
      headers: ['contender', 'client CPU µs', 'Redis CPU µs', 'Redis cmd µs', 'commands', 'B in', 'B out', 'hot: Redis CPU µs', 'hot: B out'],
      rows: redis.map((c) => [
        c.label,
        cell(results, c.id, 'many-c64', (r) => r.clientCpuUs, fixed(1)),
        ...(['cpuUs', 'cmdUs', 'commands', 'bytesIn', 'bytesOut'] as const).map((k) =>
          cell(results, c.id, 'many-c64', (r) => r.server?.[k], k.startsWith('bytes') ? integer : fixed(1)),
        ),
        cell(results, c.id, 'hot-c64', (r) => r.server?.cpuUs, fixed(1)),
        cell(results, c.id, 'hot-c64', (r) => r.server?.bytesOut),
      ]),
      note: "Many ids unless marked hot. client CPU: user + system time of the contender's own process. Redis CPU: redis-server user + system time, network I/O included. Redis cmd µs: INFO commandstats time of the commands clients sent (nested commands not counted twice). commands: nested ones included.",
    },
    {
      title: "Redis's own time per decision on calls encoded beforehand (µs, median of rounds)",
      headers: ['contender', 'client', 'one call per decision', 'calls of 32'],
      rows: (['ioredis', 'node-redis5'] as const)
        .flatMap((client) =>
          COST_KINDS.map((kind) => [COST_LABELS[kind], client, ...COST_BATCHES.map((batch) => footprint(results, costCell(kind, client, batch), fixed(2)))]),
        )
        .filter((row) => row.slice(2).some((value) => value !== '')),
      note: `INFO commandstats usec of EVALSHA / decisions, each contender on a redis-server of its own: ${COST_WORKLOAD.ids.toLocaleString('en-US')} ids visited ${COST_WORKLOAD.visits} times, max ${COST_WORKLOAD.rules.maxInInterval} per minute, ${COST_WORKLOAD.inFlight} calls in flight, the calls encoded before the clock starts. The instructions behind these: npm run bench:instructions.`,
    },
    {
      title:
        "Cost tiers: Redis's time per attempt where the wait walks or W(S) reads records kept for calls in flight, and the key after (µs, median of rounds)",
      headers: ['case', 'µs', 'against', 'members', 'bytes: sorted set', 'bytes: weights'],
      rows: (Object.keys(WAIT_CASES) as WaitCaseId[])
        .filter((id) => results.footprint[waitCell(id)] !== undefined)
        .map((id) => {
          const { label, versus } = WAIT_CASES[id] as { label: string; versus?: WaitCaseId };
          const us = (of: WaitCaseId): number => Number(results.footprint[waitCell(of)]);
          return [
            `${label} (${id})`,
            fixed(1)(us(id)),
            versus === undefined ? '' : `${ratioText(us(id) / us(versus))} ${versus}`,
            ...['members', 'bytes', 'weights-bytes'].map((figure) => footprint(results, waitCell(id, figure), integer)),
          ];
        }),
      note: 'One key written with ZADD and HSET, then the same attempt sent again and again over ioredis, one call per attempt, on a redis-server of its own; INFO commandstats usec of EVALSHA / attempts; members and MEMORY USAGE (SAMPLES 0) of the key and its weights once the attempts are done. The instructions behind these: npm run bench:instructions -- wait.',
    },
    {
      title: 'In memory: decisions per second (median of runs), latency, heap',
      headers: ['contender', 'many ids', 'hot id', 'p50 µs', 'p99 µs', 'heap MiB / 1M ids', 'after 2nd wave'],
      rows: memory.map((c) => [
        c.label,
        cell(results, c.id, 'memory-many', (r) => r.perSecond),
        cell(results, c.id, 'memory-hot', (r) => r.perSecond),
        cell(results, c.id, 'memory-many', (r) => r.p50Us, fixed(2)),
        cell(results, c.id, 'memory-many', (r) => r.p99Us, fixed(2)),
        footprint(results, `${c.id} heap`, (v) => (v / 2 ** 20).toFixed(0)),
        footprint(results, `${c.id} heap-2nd`, (v) => (v / 2 ** 20).toFixed(0)),
      ]),
      note: '100 per minute, one call at a time. Heap: growth of heapUsed (after gc) for one allowed decision on each of 1M new ids; after 2nd wave: 1M more once the first have left the window (Date.now() moved past it).',
    },
    {
      title: 'Bytes sent back per decision, window kept full (hot id, 1 h interval)',
      headers: ['contender', ...BYTES_MAXIMA.map((max) => `max ${max.toLocaleString('en-US')}`)],
      rows: keyed('bytes@10').map((c) => [c.label, ...BYTES_MAXIMA.map((max) => footprint(results, `${c.id} bytes@${max}`, integer))]),
      note: "Redis's total_net_output_bytes / decisions, one call at a time. rolling-rate-limiter's window is written with one ZADD of what it would have stored, then driven through it.",
    },
    {
      title: 'Redis memory per key (MEMORY USAGE, exact), max 10 per minute',
      headers: ['contender', 'state', 'bytes', 'members', 'bytes / member', 'encoding'],
      rows: keyed('quiet bytes').flatMap((c) =>
        ['quiet', 'flood'].map((state) => {
          const [bytes, members] = [results.footprint[`${c.id} ${state} bytes`], results.footprint[`${c.id} ${state} members`]];
          return [
            c.label,
            state === 'quiet' ? 'after 10 allowed' : 'after 20,000 attempts',
            integer(Number(bytes)),
            integer(Number(members)),
            fixed(1)(Number(bytes) / Number(members)),
            String(results.footprint[`${c.id} ${state} encoding`] ?? ''),
          ];
        }),
      ),
      note: "rolling-rate-limiter's first 19,999 attempts are written with one ZADD of what it stores (a UUID v4 member and a microsecond score each), the last one goes through it.",
    },
  ];
  return all.filter((table) => table.rows.length > 0);
}

function markdown(table: Table): string {
  const line = (cells: readonly string[]): string => `| ${cells.map((text) => text.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [
    `### ${table.title}`,
    '',
    line(table.headers),
    line(table.headers.map((_, i) => (i === 0 ? '---' : '---:'))),
    ...table.rows.map(line),
    ...(table.note === undefined ? [] : ['', table.note]),
    '',
  ].join('\n');
}

function text(table: Table): string {
  const widths = table.headers.map((header, i) => Math.max(header.length, ...table.rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [`== ${table.title}`, line(table.headers), ...table.rows.map(line)].join('\n');
}

const COLORS: Record<string, string> = { library: '#1d4ed8', rrl: '#dc2626', rlf: '#f59e0b', floor: '#15803d' };
const escapeXml = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Bars of decisions per second, one group per scenario with its own scale, each bar with its ratio to rolling-rate-limiter. */
function svg(results: BenchResults): string {
  const parts: string[] = [];
  const label = (x: number, y: number, content: string, attributes = ''): string => `<text x="${x}" y="${y}" ${attributes}>${escapeXml(content)}</text>`;
  let y = 28;
  parts.push(label(16, y, 'Decisions per second, median of runs (longer is better; each group has its own scale)', 'font-size="17" font-weight="600"'));
  parts.push(
    label(
      16,
      (y += 20),
      `${results.machine[0]}; ${results.machine[2]}; ${results.runs} run(s), ${results.finishedAt.slice(0, 10)}`,
      'font-size="12" fill="#555"',
    ),
  );
  Object.entries({
    library: 'this library',
    rrl: 'rolling-rate-limiter',
    rlf: 'rate-limiter-flexible (fixed window)',
    floor: 'floors: bare commands, PING',
  }).forEach(([key, name], i) =>
    parts.push(`<rect x="${16 + i * 260}" y="${y + 10}" width="12" height="12" fill="${COLORS[key]}"/>`, label(34 + i * 260, y + 21, name, 'font-size="12"')),
  );
  y += 50;
  for (const scenario of SCENARIOS) {
    const bars = results.contenders.flatMap((c) => {
      const value = median(results.throughput.filter((r) => r.contender === c.id && r.scenario === scenario.id).map((r) => r.perSecond ?? Number.NaN));
      return Number.isFinite(value) ? [{ c, value }] : [];
    });
    if (bars.length === 0) continue;
    const top = Math.max(...bars.map((bar) => bar.value));
    parts.push(label(16, y, scenario.label, 'font-size="14" font-weight="600"'));
    y += 10;
    for (const { c, value } of bars) {
      const reference = c.backend === 'memory' ? 'rrl-memory' : `rrl@${c.backend}`;
      const base = bars.find((bar) => bar.c.id === reference)?.value;
      const width = Math.max(1, (value / top) * 480);
      const color = COLORS[c.family === 'peer' ? c.id.slice(0, 3) : c.family] ?? '#888';
      const shade = c.backend === 'node-redis5' ? ' fill-opacity="0.55"' : '';
      parts.push(
        label(430, y + 13, c.label, 'font-size="12" text-anchor="end"'),
        `<rect x="440" y="${y}" width="${width.toFixed(1)}" height="17" fill="${color}"${shade}/>`,
        label(
          446 + width,
          y + 13,
          `${integer(value)}/s${base === undefined || c.id === reference ? '' : ` · ${ratioText(value / base)} rolling-rate-limiter`}`,
          'font-size="12"',
        ),
      );
      y += 22;
    }
    y += 24;
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="1260" height="${y}" viewBox="0 0 1260 ${y}" font-family="system-ui, sans-serif">`,
    `<rect width="1260" height="${y}" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** Rounds every number to 4 significant digits: the JSON keeps what the report is built from, not noise. */
const compact = (_key: string, value: unknown): unknown => (typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value);

/**
 * Prints the tables and writes latest.md, latest.svg and latest.json, all from the same rounded figures, so that
 * `--rebuild` gives the same report; returns the targets.
 */
export async function writeReport(measured: BenchResults): Promise<TargetResult[]> {
  const json = `${JSON.stringify(measured, compact)}\n`;
  const results = JSON.parse(json) as BenchResults;
  const targets = evaluateTargets(results);
  const all = tables(results, targets);
  for (const table of all) console.log(`\n${text(table)}`);
  const md = [
    '# Benchmark results (latest run)',
    '',
    `Run ${results.startedAt} to ${results.finishedAt} with \`${results.command}\`: ${results.durationMs} ms per throughput measurement after ${results.warmupMs} ms of warm-up, ${results.runs} run(s). See [docs/benchmarks.md](../../docs/benchmarks.md) for what each row is.`,
    '',
    ...results.machine.map((line) => `- ${line}`),
    '',
    ...all.map(markdown),
    '![Decisions per second](latest.svg)',
    '',
  ].join('\n');
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(`${RESULTS_DIR}latest.md`, md);
  await writeFile(`${RESULTS_DIR}latest.svg`, svg(results));
  await writeFile(`${RESULTS_DIR}latest.json`, json);
  return targets;
}
