// bench/results/latest.svg, written by hand: a horizontal bar chart of
// decisions per second, one group per throughput scenario, one bar per
// contender, each bar labelled with its median and its ratio to
// rolling-rate-limiter measured in the same run. Each group has its own scale.

import type { ContenderInfo } from '../results.js';
import { errorOf, measured, medianOf, throughputRatio, type BenchResults } from '../results.js';
import { THROUGHPUT_SCENARIOS } from '../workloads.js';

const WIDTH = 1260;
const LABEL_RIGHT = 430;
const BAR_LEFT = 440;
const BAR_MAX = 480;
const BAR_HEIGHT = 17;
const BAR_GAP = 5;
const GROUP_GAP = 26;
/** The empty decision, shown as a number rather than a bar. */
const CEILING = 'floor-noop';

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function colorOf(contender: ContenderInfo): string {
  const nodeRedis = contender.backend === 'node-redis 5';
  if (contender.family === 'library') return nodeRedis ? '#7aa7f7' : '#1d4ed8';
  if (contender.family === 'floor') return nodeRedis ? '#86d9a1' : '#15803d';
  return contender.id.startsWith('rrl') ? '#dc2626' : '#f59e0b';
}

const LEGEND: readonly [string, string][] = [
  ['#1d4ed8', 'this library (ioredis / memory)'],
  ['#7aa7f7', 'this library (node-redis 5)'],
  ['#dc2626', 'rolling-rate-limiter 0.4.2'],
  ['#f59e0b', 'rate-limiter-flexible (fixed window)'],
  ['#15803d', 'raw floor (ioredis / memory)'],
  ['#86d9a1', 'raw floor (node-redis 5)'],
];

function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${x}" y="${y}" ${attributes}>${escapeXml(content)}</text>`;
}

/** The whole SVG document. */
export function renderSvg(results: BenchResults): string {
  const parts: string[] = [];
  let y = 30;
  parts.push(text(16, y, 'Decisions per second, median of runs (longer is better; each group has its own scale)', 'class="title"'));
  y += 22;
  parts.push(text(16, y, `${results.machine.nproc} CPUs, Node ${results.machine.node}, Redis ${results.machine.redis}, ${results.options.runs} run(s) of ${results.options.durationMs} ms per bar, ${results.finishedAt.slice(0, 10)}`, 'class="sub"'));
  y += 20;
  LEGEND.forEach(([color, name], i) => {
    const x = 16 + (i % 3) * 330;
    const row = y + Math.floor(i / 3) * 18;
    parts.push(`<rect x="${x}" y="${row - 11}" width="12" height="12" fill="${color}"/>`, text(x + 18, row, name, 'class="legend"'));
  });
  y += 2 * 18 + 14;

  for (const scenario of THROUGHPUT_SCENARIOS) {
    // The harness ceiling would flatten every other bar of its group: it is given in the group's title instead.
    const contenders = results.contenders.filter((c) => c.id !== CEILING && measured(results, scenario.id, c.id));
    if (contenders.length === 0) continue;
    const ceiling = medianOf(results, scenario.id, CEILING);
    const reference = scenario.kind === 'memory' ? 'rrl-memory' : 'rrl@ioredis';
    const values = contenders.map((c) => medianOf(results, scenario.id, c.id));
    const top = Math.max(...values.filter((v) => Number.isFinite(v)), 1);
    const title = Number.isFinite(ceiling) ? `${scenario.label} (harness ceiling: ${Math.round(ceiling).toLocaleString('en-US')}/s)` : scenario.label;
    parts.push(text(16, y, title, 'class="group"'));
    y += 10;
    contenders.forEach((contender, i) => {
      const value = values[i] as number;
      const barY = y + i * (BAR_HEIGHT + BAR_GAP);
      const middle = barY + BAR_HEIGHT / 2 + 4;
      parts.push(text(LABEL_RIGHT, middle, contender.label, 'class="label" text-anchor="end"'));
      if (!Number.isFinite(value)) {
        parts.push(text(BAR_LEFT, middle, errorOf(results, scenario.id, contender.id) === undefined ? 'no data' : 'error', 'class="value"'));
        return;
      }
      const width = Math.max(1, (value / top) * BAR_MAX);
      const ratio = contender.id === reference ? undefined : throughputRatio(results, { scenario: scenario.id, contender: contender.id }, { scenario: scenario.id, contender: reference });
      const ratioText = contender.id === reference ? '(reference)' : ratio !== undefined && Number.isFinite(ratio.median) ? `${ratio.median >= 10 ? ratio.median.toFixed(0) : ratio.median.toFixed(2)}× rolling-rate-limiter` : '';
      parts.push(
        `<rect x="${BAR_LEFT}" y="${barY}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" fill="${colorOf(contender)}"><title>${escapeXml(`${contender.label}: ${Math.round(value)} decisions/s`)}</title></rect>`,
        text(BAR_LEFT + width + 6, middle, `${Math.round(value).toLocaleString('en-US')}/s · ${ratioText}`, 'class="value"'),
      );
    });
    y += contenders.length * (BAR_HEIGHT + BAR_GAP) + GROUP_GAP;
  }

  const height = y + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">`,
    '<style>.title{font-size:17px;font-weight:600}.sub{font-size:12px;fill:#555}.legend{font-size:12px}.group{font-size:14px;font-weight:600}.label{font-size:12px}.value{font-size:12px;fill:#222}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
