// Rewrites bench/results/latest.md and latest.svg (and the targets in
// latest.json) from the measurements already in latest.json, without
// measuring again: for changes to the report itself.
//
//   npx tsx bench/rebuild-report.ts [path/to/results.json]

import { readFile } from 'node:fs/promises';
import type { BenchResults } from './results.js';
import { RESULTS_DIR, writeResults } from './report/write.js';
import { computeTargets } from './targets.js';

const source = process.argv[2] ?? `${RESULTS_DIR}latest.json`;
const results = JSON.parse(await readFile(source, 'utf8')) as BenchResults & { targets?: unknown };
delete results.targets;
const files = await writeResults(results, computeTargets(results));
console.log(`\nRewrote ${files.join(', ')} from ${source}`);
