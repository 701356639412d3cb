// Redis's own work per decision, as instructions counted by callgrind inside
// EVALSHA: the decide script against the sliding-log floor, one call per
// decision and in calls of 32, on the workload of redis-cost.ts; and, with
// `wait`, the wait cases (a blocked attempt's walk, W(S) with records kept for
// calls in flight). Unlike time, the count does not move with what else the
// machine runs, so a change to the Lua shows as it is, run after run.
//
//   npm run bench:instructions              every kind (about 15 minutes; needs valgrind and redis-server)
//   npm run bench:instructions -- cost      only the kinds whose name contains one of the words given
//   npm run bench:instructions -- wait      the wait cases (about 3 minutes); `wait walk` only theirs
//
// Each measurement runs its own redis-server under callgrind, counting only
// inside evalShaCommand (the script, the commands it calls, and the reply),
// and reads the total when the server exits.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COST_BATCHES, COST_KINDS, COST_LABELS, COST_WORKLOAD, measureCost, measureWait, WAIT_CASES, type CostKind, type WaitCaseId } from './redis-cost.js';

const thousands = (n: number | undefined): string => `${((n ?? NaN) / 1000).toFixed(1)}k`;

async function kinds(dir: string, chosen: readonly CostKind[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const kind of chosen) {
    for (const batch of COST_BATCHES) counts.set(`${kind} ${batch}`, await measureCost(kind, batch, 'ioredis', 'instructions', dir));
  }
  const { ids, visits, rules, tokens } = COST_WORKLOAD;
  console.log(
    `Redis instructions per decision inside EVALSHA (callgrind), ${ids} ids visited ${visits} times, max ${rules.maxInInterval}/min; cost tiers ${tokens.maxCostInInterval}/min, cost ~${tokens.cost}`,
  );
  console.log('| | one call per decision | calls of 32 decisions |\n| --- | ---: | ---: |');
  for (const kind of chosen) console.log(`| ${COST_LABELS[kind]} | ${thousands(counts.get(`${kind} 1`))} | ${thousands(counts.get(`${kind} 32`))} |`);
  const ratios: [string, CostKind, CostKind][] = [
    ['**script / floor**', 'script', 'floor'],
    ['default path / floor', 'default path', 'floor'],
    ['cost tier / script', 'cost tier', 'script'],
    ['cost tier / floor', 'cost tier', 'floor'],
    ['cost tier (countBlocked: true) / default path', 'cost tier cb', 'default path'],
    ['RPM + TPM stack / actions stack', 'RPM + TPM stack', 'actions stack'],
  ];
  const ratio = (a: CostKind, b: CostKind, batch: number): string => ((counts.get(`${a} ${batch}`) ?? NaN) / (counts.get(`${b} ${batch}`) ?? NaN)).toFixed(2);
  for (const [name, a, b] of ratios) {
    if (chosen.includes(a) && chosen.includes(b)) console.log(`| ${name} | ${ratio(a, b, 1)}× | ${ratio(a, b, 32)}× |`);
  }
}

async function waits(dir: string, chosen: readonly WaitCaseId[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const id of chosen) counts.set(id, (await measureWait(id, 'instructions', dir)).perAttempt);
  console.log('Redis instructions per attempt inside EVALSHA (callgrind), one key, one call per attempt');
  console.log('| case | instructions | against |\n| --- | ---: | ---: |');
  for (const id of chosen) {
    const { label, versus } = WAIT_CASES[id] as { label: string; versus?: WaitCaseId };
    const against = versus === undefined ? '' : `${((counts.get(id) ?? NaN) / (counts.get(versus) ?? NaN)).toFixed(1)}× ${versus}`;
    console.log(`| ${label} (\`${id}\`) | ${thousands(counts.get(id))} | ${against} |`);
  }
}

async function main(): Promise<void> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('bench:instructions needs valgrind (apt-get install valgrind)');
  }
  const words = process.argv.slice(2).filter((word) => word !== 'wait');
  const matches = (name: string): boolean => words.length === 0 || words.some((word) => name.includes(word));
  const dir = mkdtempSync(join(tmpdir(), 'rrl-instructions-'));
  try {
    if (process.argv.includes('wait')) await waits(dir, (Object.keys(WAIT_CASES) as WaitCaseId[]).filter(matches));
    else await kinds(dir, COST_KINDS.filter(matches));
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
