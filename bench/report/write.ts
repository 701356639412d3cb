// Writes bench/results/latest.{json,md,svg} and prints the same tables to the
// terminal.

import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { machineLines } from '../machine.js';
import type { BenchResults } from '../results.js';
import type { TargetResult } from '../targets.js';
import { renderSvg } from './svg.js';
import { bytesTable, keyMemoryTable, memoryTable, renderMarkdown, renderText, serverTable, targetsTable, throughputTable, type Table } from './tables.js';

export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

function tablesOf(results: BenchResults): Table[] {
  const tables: Table[] = [];
  if (results.throughput.some((r) => r.scenario.startsWith('redis'))) tables.push(throughputTable(results), serverTable(results));
  if (results.throughput.some((r) => r.scenario.startsWith('memory')) || results.heap.length > 0) tables.push(memoryTable(results));
  if (results.bytes.length > 0) tables.push(bytesTable(results));
  if (results.keyMemory.length > 0) tables.push(keyMemoryTable(results));
  return tables;
}

function markdown(results: BenchResults, targets: readonly TargetResult[]): string {
  const { options } = results;
  return [
    '# Benchmark results (latest run)',
    '',
    `Run ${results.startedAt} to ${results.finishedAt} with \`${['npm run bench', '--', options.quick ? '--quick' : '', `--runs ${options.runs}`, options.only === undefined ? '' : `--only ${options.only}`].filter(Boolean).join(' ')}\`: ${options.durationMs} ms per throughput measurement after ${options.warmupMs} ms of warm-up; medians of ${options.runs} run(s).`,
    '',
    ...machineLines(results.machine).map((line) => `- ${line}`),
    '',
    renderMarkdown(targetsTable(targets)),
    '',
    ...tablesOf(results).flatMap((table) => [renderMarkdown(table), '']),
    '![Decisions per second](latest.svg)',
    '',
  ].join('\n');
}

/** Prints every table and writes the three files; returns their paths. */
export async function writeResults(results: BenchResults, targets: readonly TargetResult[]): Promise<string[]> {
  for (const table of [...tablesOf(results), targetsTable(targets)]) console.log(`\n${renderText(table)}`);
  await mkdir(RESULTS_DIR, { recursive: true });
  const files: [string, string][] = [
    ['latest.json', `${JSON.stringify({ ...results, targets }, null, 2)}\n`],
    ['latest.md', markdown(results, targets)],
    ['latest.svg', renderSvg(results)],
  ];
  for (const [name, content] of files) await writeFile(`${RESULTS_DIR}${name}`, content);
  return files.map(([name]) => `${RESULTS_DIR}${name}`);
}
