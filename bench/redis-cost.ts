// Redis's own cost per decision: the decide script against the sliding-log
// floor (floors.ts), one call per decision and in calls of 32, on calls
// encoded before anything is measured, sent the same way over the same
// client, each contender on a redis-server of its own. So the figure is the
// script's work alone: in the throughput cells, 64 calls in flight on two
// cores, a contender whose client works harder takes CPU from redis-server,
// and INFO commandstats counts the time a command waited to run again.
//
// Two meters: Redis time (INFO commandstats usec of EVALSHA / decisions),
// part of `npm run bench`; and instructions counted by callgrind inside
// EVALSHA, which no load on the machine moves (`npm run bench:instructions`,
// which needs valgrind).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import type { WindowRule } from '../src/core/decision-model.js';
import type { Tier } from '../src/core/store.js';
import { encodeCall } from '../src/redis/decide/decide-codec.js';
import { DECIDE_SCRIPT } from '../src/redis/decide/decide-script.js';
import { SLIDING_LOG_LUA, slidingLogCall } from './floors.js';
import { median } from './measure.js';
import { startRedisServer } from './support/redis-server.js';

/** The workload: ids visited in a scattered order, each visit of every id before the next (once new, then holding records). */
export const COST_WORKLOAD = { ids: 20_000, visits: 3, inFlight: 16, rules: { interval: 60_000, maxInInterval: 10 } } as const;

/** The decide script with `countBlocked: false` (the script path), with `countBlocked: true` (the default path), and the floor. */
export const COST_KINDS = ['script', 'default path', 'floor'] as const;
export type CostKind = (typeof COST_KINDS)[number];
export const COST_BATCHES = [1, 32] as const;
export type CostClient = 'ioredis' | 'node-redis5';

/** How a cost is measured: Redis time in µs per decision, or callgrind instructions per decision. */
export type CostMeter = 'time' | 'instructions';

/** The label of a kind in the tables. */
export const COST_LABELS: Record<CostKind, string> = {
  script: 'decide script (countBlocked: false)',
  'default path': 'decide script (countBlocked: true)',
  floor: 'sliding-log floor',
};

/** The bench cell of a kind's Redis time, `<name>@<client> redis-us-<batch>`, as the targets name it. */
export function costCell(kind: CostKind, client: CostClient, batch: number): string {
  const name = { script: 'decide-script', 'default path': 'decide-script-cb', floor: 'sliding-log' }[kind];
  return `${name}@${client} redis-us-${batch}`;
}

interface Call {
  readonly keys: string[];
  readonly args: (string | number)[];
}

/** The calls of one kind over `ids` at the times `now()` gives (µs), `batch` decisions a call, encoded as the library and the floor encode them. */
function callsOf(kind: CostKind, ids: readonly number[], batch: number, now: () => number): Call[] {
  const calls: Call[] = [];
  const { interval, maxInInterval } = COST_WORKLOAD.rules;
  const rule: WindowRule = {
    intervalUs: interval * 1000,
    maxInInterval,
    countsCost: false,
    minDifferenceUs: 0,
    countBlocked: kind === 'default path',
    inFlightUs: 2_000_000,
  };
  for (let i = 0; i < ids.length; i += batch) {
    const group = ids.slice(i, i + batch);
    if (kind === 'floor') {
      const attempts = group.map((id) => {
        const at = now();
        return { key: `cost:{u${id}}`, cutoff: String(at - rule.intervalUs), now: String(at), member: `m${id}-${at}` };
      });
      calls.push(slidingLogCall(attempts, maxInInterval, interval));
    } else {
      // encodeCall() reads only each tier's key and rule.
      calls.push(encodeCall(group.map((id) => ({ tiers: [{ key: `cost:{u${id}}`, rule } as unknown as Tier], now: now(), dryRun: false }))));
    }
  }
  return calls;
}

/** A reply that must be text. */
function textOf(reply: unknown): string {
  if (typeof reply !== 'string') throw new Error(`expected text, got ${typeof reply}`);
  return reply;
}

/** Sends EVALSHA of `sha1` over one client of the given kind; `close` disconnects it. */
async function connect(
  client: CostClient,
  url: string,
): Promise<{
  evalsha: (sha1: string, call: Call) => Promise<unknown>;
  load: (lua: string) => Promise<string>;
  info: () => Promise<string>;
  close: () => void;
}> {
  if (client === 'ioredis') {
    const redis = new Redis(url);
    return {
      evalsha: (sha1, { keys, args }) => redis.evalsha(sha1, keys.length, ...keys, ...args),
      load: async (lua) => String(await redis.script('LOAD', lua)),
      info: () => redis.info('commandstats'),
      close: () => redis.disconnect(),
    };
  }
  const redis = createClient({ url });
  await redis.connect();
  return {
    evalsha: (sha1, { keys, args }) => redis.sendCommand(['EVALSHA', sha1, String(keys.length), ...keys, ...args.map(String)]),
    load: async (lua) => textOf(await redis.sendCommand(['SCRIPT', 'LOAD', lua])),
    info: async () => textOf(await redis.sendCommand(['INFO', 'commandstats'])),
    close: () => redis.destroy(),
  };
}

/**
 * One kind's cost per decision, in calls of `batch`, on a redis-server of its own: Redis time in µs (`time`), or,
 * with `instructions`, the instructions callgrind counts inside EVALSHA (the server then runs under valgrind, its
 * output in `dir`).
 */
export async function measureCost(kind: CostKind, batch: number, client: CostClient, meter: CostMeter, dir?: string): Promise<number> {
  const out = join(dir ?? '.', `callgrind-${kind.replace(' ', '-')}-${batch}.out`);
  const server = await startRedisServer(
    meter === 'instructions' ? ['valgrind', '--tool=callgrind', '--toggle-collect=evalShaCommand', `--callgrind-out-file=${out}`] : [],
  );
  const redis = await connect(client, server.url);
  const { ids: idCount, visits, inFlight } = COST_WORKLOAD;
  let usec: number;
  try {
    const sha1 = await redis.load(kind === 'floor' ? SLIDING_LOG_LUA : DECIDE_SCRIPT.lua);
    const ids = Array.from({ length: idCount }, (_, i) => (i * 7919) % idCount);
    let clock = Date.now() * 1000;
    for (let visit = 0; visit < visits; visit += 1) {
      const calls = callsOf(kind, ids, batch, () => (clock += 1));
      let next = 0;
      const sender = async (): Promise<void> => {
        for (let call = calls[next++]; call !== undefined; call = calls[next++]) await redis.evalsha(sha1, call);
      };
      await Promise.all(Array.from({ length: inFlight }, sender));
    }
    usec = Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(await redis.info())?.[1]);
  } finally {
    redis.close();
    await server.stop();
  }
  if (meter === 'time') return usec / (idCount * visits);
  const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'));
  if (totals === null) throw new Error(`no totals in ${out}`);
  return Number(totals[1]) / (idCount * visits);
}

/**
 * Redis time per decision of every kind, batch and client, as bench cells ({@link costCell}): the median of
 * `rounds` rounds, each of which measures every kind once, in turn, so that a slow spell of the machine falls on
 * all of them alike.
 */
export async function measureRedisTime(rounds: number, log: (line: string) => void): Promise<Record<string, number>> {
  const samples = new Map<string, number[]>();
  for (let round = 0; round < rounds; round += 1) {
    for (const client of ['ioredis', 'node-redis5'] as const) {
      for (const batch of COST_BATCHES) {
        for (const kind of COST_KINDS) {
          const cell = costCell(kind, client, batch);
          samples.set(cell, [...(samples.get(cell) ?? []), await measureCost(kind, batch, client, 'time')]);
        }
      }
    }
    log(`  round ${round + 1} of ${rounds}`);
  }
  return Object.fromEntries([...samples].map(([cell, values]) => [cell, median(values)]));
}
