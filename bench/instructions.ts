// Redis's own work per decision, as instructions counted by callgrind inside
// EVALSHA: the decide script against the sliding-log floor, one call per
// decision and in calls of 32, on the same ids (each visited twice: once new,
// once holding a record). Unlike time, the count does not move with what else
// the machine runs, so a change to the Lua shows as it is, run after run.
//
//   npm run bench:instructions     (needs valgrind and redis-server)
//
// Each measurement runs its own redis-server under callgrind, counting only
// inside evalShaCommand (the script, the commands it calls, and the reply),
// and reads the total when the server exits.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { WindowRule } from '../src/core/decision-model.js';
import type { Tier } from '../src/core/store.js';
import { encodeCall } from '../src/redis/decide/decide-codec.js';
import { DECIDE_SCRIPT } from '../src/redis/decide/decide-script.js';
import { SLIDING_LOG_LUA, slidingLogCall } from './floors.js';
import { startRedisServer } from './support/redis-server.js';

const IDS = 5_000;
const VISITS = 2;
const IN_FLIGHT = 16;
const RULES = { interval: 60_000, maxInInterval: 10 };

type Kind = 'script' | 'default path' | 'floor';
interface Measurement {
  readonly kind: Kind;
  readonly batch: number;
}

/** The calls of one contender over `ids` at time `now` (µs): KEYS and ARGV of each call, `batch` decisions a call. */
function callsOf(kind: Kind, ids: readonly number[], batch: number, namespace: string, now: () => number): { keys: string[]; args: (string | number)[] }[] {
  const calls = [];
  const rule: WindowRule = { intervalUs: RULES.interval * 1000, maxInInterval: RULES.maxInInterval, minDifferenceUs: 0, countBlocked: kind === 'default path' };
  for (let i = 0; i < ids.length; i += batch) {
    const group = ids.slice(i, i + batch);
    if (kind === 'floor') {
      calls.push(
        slidingLogCall(
          group.map((id) => {
            const at = now();
            return { key: `${namespace}:{u${id}}`, cutoff: String(at - rule.intervalUs), now: String(at), member: `m${id}-${at}` };
          }),
          RULES.maxInInterval,
          RULES.interval,
        ),
      );
    } else {
      // encodeCall() reads only each tier's key and rule.
      calls.push(encodeCall(group.map((id) => ({ tiers: [{ key: `${namespace}:{u${id}}`, rule } as unknown as Tier], now: now(), dryRun: false }))));
    }
  }
  return calls;
}

/** Instructions per decision of one contender and batch size, from a redis-server of its own under callgrind. */
async function measure({ kind, batch }: Measurement, dir: string): Promise<number> {
  const out = join(dir, `callgrind-${kind.replace(' ', '-')}-${batch}.out`);
  const server = await startRedisServer(['valgrind', '--tool=callgrind', '--toggle-collect=evalShaCommand', `--callgrind-out-file=${out}`]);
  const client = new Redis(server.url);
  try {
    const sha1 = (await client.script('LOAD', kind === 'floor' ? SLIDING_LOG_LUA : DECIDE_SCRIPT.lua)) as string;
    const ids = Array.from({ length: IDS }, (_, i) => (i * 7919) % IDS);
    let clock = Date.now() * 1000;
    for (let visit = 0; visit < VISITS; visit += 1) {
      const calls = callsOf(kind, ids, batch, 'count', () => (clock += 1));
      let next = 0;
      const sender = async (): Promise<void> => {
        for (let call = calls[next++]; call !== undefined; call = calls[next++]) await client.evalsha(sha1, call.keys.length, ...call.keys, ...call.args);
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
    }
  } finally {
    client.disconnect();
    await server.stop();
  }
  const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'));
  if (totals === null) throw new Error(`no totals in ${out}`);
  return Number(totals[1]) / (IDS * VISITS);
}

async function main(): Promise<void> {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('bench:instructions needs valgrind (apt-get install valgrind)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'rrl-instructions-'));
  try {
    const counts = new Map<string, number>();
    for (const kind of ['script', 'default path', 'floor'] as const) {
      for (const batch of [1, 32]) counts.set(`${kind} ${batch}`, await measure({ kind, batch }, dir));
    }
    const thousands = (n: number | undefined): string => `${((n ?? NaN) / 1000).toFixed(1)}k`;
    console.log(`Redis instructions per decision inside EVALSHA (callgrind), ${IDS} ids visited ${VISITS} times, max ${RULES.maxInInterval}/min, one tier`);
    console.log('| | one call per decision | calls of 32 decisions |\n| --- | ---: | ---: |');
    for (const kind of ['script', 'default path', 'floor'] as const) {
      const label = { script: 'decide script (countBlocked: false)', 'default path': 'decide script (countBlocked: true)', floor: 'sliding-log floor' }[kind];
      console.log(`| ${label} | ${thousands(counts.get(`${kind} 1`))} | ${thousands(counts.get(`${kind} 32`))} |`);
    }
    const ratio = (batch: number): string => ((counts.get(`script ${batch}`) ?? NaN) / (counts.get(`floor ${batch}`) ?? NaN)).toFixed(2);
    console.log(`| **script / floor** | **${ratio(1)}×** | **${ratio(32)}×** |`);
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
