// Redis's own work per decision, as instructions counted by callgrind inside
// EVALSHA: the decide script against the sliding-log floor, one call per
// decision and in calls of 32, on the workload of redis-cost.ts. Unlike
// time, the count does not move with what else the machine runs, so a
// change to the Lua shows as it is, run after run.
//
//   npm run bench:instructions     (needs valgrind and redis-server)
//
// Each measurement runs its own redis-server under callgrind, counting only
// inside evalShaCommand (the script, the commands it calls, and the reply),
// and reads the total when the server exits.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COST_BATCHES, COST_KINDS, COST_LABELS, COST_WORKLOAD, measureCost } from './redis-cost.js';

async function main(): Promise<void> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('bench:instructions needs valgrind (apt-get install valgrind)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'rrl-instructions-'));
  try {
    const counts = new Map<string, number>();
    for (const kind of COST_KINDS) {
      for (const batch of COST_BATCHES) counts.set(`${kind} ${batch}`, await measureCost(kind, batch, 'ioredis', 'instructions', dir));
    }
    const { ids, visits, rules } = COST_WORKLOAD;
    const thousands = (n: number | undefined): string => `${((n ?? NaN) / 1000).toFixed(1)}k`;
    console.log(`Redis instructions per decision inside EVALSHA (callgrind), ${ids} ids visited ${visits} times, max ${rules.maxInInterval}/min, one tier`);
    console.log('| | one call per decision | calls of 32 decisions |\n| --- | ---: | ---: |');
    for (const kind of COST_KINDS) console.log(`| ${COST_LABELS[kind]} | ${thousands(counts.get(`${kind} 1`))} | ${thousands(counts.get(`${kind} 32`))} |`);
    const ratio = (kind: string, batch: number): string => ((counts.get(`${kind} ${batch}`) ?? NaN) / (counts.get(`floor ${batch}`) ?? NaN)).toFixed(2);
    console.log(`| **script / floor** | **${ratio('script', 1)}×** | **${ratio('script', 32)}×** |`);
    console.log(`| default path / floor | ${ratio('default path', 1)}× | ${ratio('default path', 32)}× |`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
