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
//
// Costs: a cost tier (200,000 per minute fed calls of about 1,000) and an
// RPM + TPM stack on the same workload, beside the plain kinds; and the
// wait's walk (WAIT_CASES): one key in a given state, the same attempt sent
// again and again, to price what a blocked attempt reads.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import type { WindowRule } from '../src/core/decision-model.js';
import type { Tier } from '../src/core/store.js';
import { actionRecordsKey, recordWeightsKey } from '../src/core/identity.js';
import { encodeCall } from '../src/redis/decide/decide-codec.js';
import { DECIDE_SCRIPT } from '../src/redis/decide/decide-script.js';
import { SLIDING_LOG_LUA, slidingLogCall } from './floors.js';
import { median } from './measure.js';
import { startRedisServer } from './support/redis-server.js';

/**
 * The workload: ids visited in a scattered order, each visit of every id before the next (once new, then holding
 * records). A cost tier counts up to `tokens.maxCostInInterval` a minute, and each attempt costs about
 * `tokens.cost` (±10%).
 */
export const COST_WORKLOAD = {
  ids: 20_000,
  visits: 3,
  inFlight: 16,
  rules: { interval: 60_000, maxInInterval: 10 },
  tokens: { maxCostInInterval: 200_000, cost: 1_000 },
} as const;

/**
 * The decide script with `countBlocked: false` (the script path), with `countBlocked: true` (the default path), and
 * the floor; a cost tier either way, a stack of two action tiers (per minute and per day), and an RPM + TPM stack (the
 * rule per minute and a cost tier, countBlocked false).
 */
export const COST_KINDS = ['script', 'default path', 'floor', 'cost tier', 'cost tier cb', 'actions stack', 'RPM + TPM stack'] as const;
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
  'cost tier': 'cost tier, 200k/min, cost ~1,000 (countBlocked: false)',
  'cost tier cb': 'cost tier, 200k/min, cost ~1,000 (countBlocked: true)',
  'actions stack': 'stack: 10/min + 1,000/day (countBlocked: false)',
  'RPM + TPM stack': 'stack: 10/min + 200k tokens/min (countBlocked: false)',
};

/** The bench cell of a kind's Redis time, `<name>@<client> redis-us-<batch>`, as the targets name it. */
export function costCell(kind: CostKind, client: CostClient, batch: number): string {
  const name = {
    script: 'decide-script',
    'default path': 'decide-script-cb',
    floor: 'sliding-log',
    'cost tier': 'decide-cost',
    'cost tier cb': 'decide-cost-cb',
    'actions stack': 'decide-stack2',
    'RPM + TPM stack': 'decide-rpm-tpm',
  }[kind];
  return `${name}@${client} redis-us-${batch}`;
}

interface Call {
  readonly keys: string[];
  readonly args: (string | number)[];
}

/** A rule of the workload: the plain one unless told otherwise. */
function ruleOf(countBlocked: boolean, rule: Partial<WindowRule> = {}): WindowRule {
  const { interval, maxInInterval } = COST_WORKLOAD.rules;
  return { intervalUs: interval * 1000, maxInInterval, countsCost: false, minDifferenceUs: 0, countBlocked, inFlightUs: 2_000_000, ...rule };
}

/** The cost tier's rule. */
const costRule = (countBlocked: boolean): WindowRule => ruleOf(countBlocked, { maxInInterval: COST_WORKLOAD.tokens.maxCostInInterval, countsCost: true });

/** Each tier of a kind's decisions: its key's prefix and rule (one object per rule, as a limiter keeps it, so a call sends it once). */
function tiersOfKind(kind: Exclude<CostKind, 'floor'>): { prefix: string; rule: WindowRule }[] {
  const day = ruleOf(false, { intervalUs: 86_400_000_000, maxInInterval: 1_000 });
  return {
    script: [{ prefix: 'cost', rule: ruleOf(false) }],
    'default path': [{ prefix: 'cost', rule: ruleOf(true) }],
    'cost tier': [{ prefix: 'cost', rule: costRule(false) }],
    'cost tier cb': [{ prefix: 'cost', rule: costRule(true) }],
    'actions stack': [
      { prefix: 'cost', rule: ruleOf(false) },
      { prefix: 'cost-day', rule: day },
    ],
    'RPM + TPM stack': [
      { prefix: 'cost', rule: ruleOf(false) },
      { prefix: 'cost-tpm', rule: costRule(false) },
    ],
  }[kind];
}

/** What an attempt on `id` costs: about `tokens.cost`, ±10%, the same on every visit. */
const costOf = (id: number): number => COST_WORKLOAD.tokens.cost - 100 + (id % 201);

/** The calls of one kind over `ids` at the times `now()` gives (µs), `batch` decisions a call, encoded as the library and the floor encode them. */
function callsOf(kind: CostKind, ids: readonly number[], batch: number, now: () => number): Call[] {
  const calls: Call[] = [];
  const { interval, maxInInterval } = COST_WORKLOAD.rules;
  const tiers = kind === 'floor' ? [] : tiersOfKind(kind);
  const counts = tiers.some(({ rule }) => rule.countsCost);
  for (let i = 0; i < ids.length; i += batch) {
    const group = ids.slice(i, i + batch);
    if (kind === 'floor') {
      const attempts = group.map((id) => {
        const at = now();
        return { key: `cost:{u${id}}`, cutoff: String(at - interval * 1000), now: String(at), member: `m${id}-${at}` };
      });
      calls.push(slidingLogCall(attempts, maxInInterval, interval));
    } else {
      // encodeCall() reads only each tier's key and rule.
      const decisions = group.map((id) => ({
        tiers: tiers.map(({ prefix, rule }) => ({ key: `${prefix}:{u${id}}`, rule }) as unknown as Tier),
        now: now(),
        dryRun: false,
        ...(counts ? { cost: costOf(id) } : {}),
      }));
      calls.push(encodeCall(decisions));
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

/**
 * One key in a given state, and the same attempt sent on it again and again: what a decision costs Redis where the
 * wait's walk (fitsAfter, from the oldest record of the window, 64 at a time) or W(S) has records to read.
 */
export interface WaitCase {
  readonly label: string;
  /** The case it is set against (a plain action tier in the same state, or no records kept). */
  readonly versus?: string;
  readonly countsCost: boolean;
  readonly countBlocked: boolean;
  /** maxInInterval, or maxCostInInterval on a cost tier. */
  readonly max: number;
  /** Records in the window before the first attempt, each weighing `weight`. */
  readonly records: number;
  readonly weight: number;
  /** Records kept for calls in flight (at or before the window's cutoff, after the forget stamp), weighing 1 each. */
  readonly kept: number;
  /** What each attempt costs, and how it is decided (checked on the first). */
  readonly cost: number;
  readonly verdict: 'blocked' | 'allowed';
  /** How many attempts are timed (a tenth of them under callgrind). */
  readonly attempts: number;
  /**
   * µs between the records in the window, and between the attempts' stamps (one record leaves the window per
   * attempt): a key at its budget, admitting as it drains. Without it, the records and attempts are 1 µs apart and
   * every record stays in the window.
   */
  readonly spacing?: number;
  /**
   * The records in the window are admitted actions' (`+r<i>`, copied in the key's companion), and each attempt
   * carries a single-use action id of its own, as a request through the HTTP middleware does.
   */
  readonly actions?: boolean;
}

const n = (value: number): string => value.toLocaleString('en-US');
const full = (max: number, countsCost: boolean, attempts: number): WaitCase => ({
  label: `${countsCost ? 'cost tier' : 'action tier'}, max ${n(max)}, ${n(max)} records of 1: blocked attempt of ${countsCost ? `${n(max)} (walks them all)` : '1'}`,
  ...(countsCost ? { versus: `plain-${max}` } : {}),
  countsCost,
  countBlocked: false,
  max,
  records: max,
  weight: 1,
  kept: 0,
  cost: countsCost ? max : 1,
  verdict: 'blocked',
  attempts,
});
// 1,000 records in the window from the start, so that the attempts' own records (a tenth of them under callgrind)
// change the key little, and its weights are a hash table either way (a listpack up to 512 fields by default).
const kept = (count: number, attempts: number): WaitCase => ({
  label: `cost tier, max 10^9, 1,000 records of 1 in the window and ${n(count)} kept for calls in flight: allowed attempt of 1`,
  ...(count > 0 ? { versus: 'kept-0' } : {}),
  countsCost: true,
  countBlocked: false,
  max: 1e9,
  records: 1_000,
  weight: 1,
  kept: count,
  cost: 1,
  verdict: 'allowed',
  attempts,
});
const { maxCostInInterval, cost: tokens } = COST_WORKLOAD.tokens;
const ofTokens = { countsCost: true, max: maxCostInInterval, records: maxCostInInterval / tokens, weight: tokens, kept: 0, cost: tokens } as const;

/** The cases, by the id of their cells (`decide-wait@ioredis <id> redis-us`). */
export const WAIT_CASES = {
  'plain-200': full(200, false, 4_000),
  'walk-200': full(200, true, 2_000),
  'blocked-200k': {
    ...ofTokens,
    label: 'cost tier, 200k, 200 records of 1,000: blocked attempt of 1,000 (walks 1 record, reads 64)',
    versus: 'plain-200',
    countBlocked: false,
    verdict: 'blocked',
    attempts: 2_000,
  },
  'plain-20000': full(20_000, false, 4_000),
  'walk-20000': full(20_000, true, 40),
  'steady-plain': {
    ...full(200, false, 4_000),
    label: 'action tier, max 200, at its limit: an attempt every 300 ms, each admitted as the oldest record leaves',
    verdict: 'allowed',
    spacing: 300_000,
  },
  'steady-200k': {
    ...ofTokens,
    label: 'cost tier, 200k, at its budget: an attempt of 1,000 every 300 ms, each admitted as the oldest record leaves',
    versus: 'steady-plain',
    countBlocked: false,
    verdict: 'allowed',
    attempts: 4_000,
    spacing: 300_000,
  },
  'flood-plain': {
    ...full(200, false, 4_000),
    label: 'action tier, max 200, countBlocked true: a hot id hammering, every attempt blocked and recorded',
    countBlocked: true,
  },
  'flood-200k': {
    ...ofTokens,
    label: 'cost tier, 200k, countBlocked true: a hot id hammering with attempts of 1,000, every one blocked and recorded',
    versus: 'flood-plain',
    countBlocked: true,
    verdict: 'blocked',
    attempts: 4_000,
  },
  'flood-single-use': {
    ...ofTokens,
    label:
      'cost tier, 200k, countBlocked true: 200 admitted actions of 1,000, hammered with requests of 1,000, each with a single-use action id (the HTTP middleware), every one blocked and recorded',
    versus: 'flood-200k',
    countBlocked: true,
    verdict: 'blocked',
    attempts: 4_000,
    actions: true,
  },
  'flood-20000': {
    ...full(20_000, true, 400),
    label: 'cost tier, max 20,000, countBlocked true, hammered with attempts of 1: 20,000 records of 1, each attempt trims the oldest (walks 1)',
    versus: 'flood-plain',
    countBlocked: true,
    cost: 1,
  },
  'flood-200k-small': {
    ...ofTokens,
    label: 'cost tier, 200k, countBlocked true, hammered with attempts of 1 (the default cost): 200,000 records of 1, each attempt trims the oldest (walks 1)',
    versus: 'flood-plain',
    countBlocked: true,
    weight: 1,
    records: 200_000,
    cost: 1,
    verdict: 'blocked',
    attempts: 400,
  },
  'kept-0': kept(0, 1_000),
  'kept-200': kept(200, 1_000),
  'kept-20000': kept(20_000, 40),
} as const satisfies Record<string, WaitCase>;
export type WaitCaseId = keyof typeof WAIT_CASES;

/** The bench cell of a wait case's figure: `redis-us` (Redis time per attempt), `members`, `bytes` (the sorted set's), `weights-bytes`. */
export const waitCell = (id: WaitCaseId, figure = 'redis-us'): string => `decide-wait@ioredis ${id} ${figure}`;

/** What a wait case measured: per attempt, Redis time (µs) or instructions; and the key as the attempts left it. */
export interface WaitResult {
  readonly perAttempt: number;
  readonly members: number;
  readonly bytes: number;
  readonly weightsBytes: number;
}

/**
 * One wait case, one call per attempt over ioredis, on a redis-server of its own: the key is written with plain
 * commands (ZADD, HSET), so that only the attempts run EVALSHA; then Redis time in µs or, with `instructions`,
 * callgrind's count inside EVALSHA (output in `dir`), per attempt; and the key's members and MEMORY USAGE after.
 */
export async function measureWait(id: WaitCaseId, meter: CostMeter, dir?: string): Promise<WaitResult> {
  const c: WaitCase = WAIT_CASES[id];
  const attempts = meter === 'time' ? c.attempts : Math.ceil(c.attempts / 10);
  const out = join(dir ?? '.', `callgrind-wait-${id}.out`);
  const server = await startRedisServer(
    meter === 'instructions' ? ['valgrind', '--tool=callgrind', '--toggle-collect=evalShaCommand', `--callgrind-out-file=${out}`] : [],
  );
  const redis = new Redis(server.url);
  let result: WaitResult;
  try {
    const sha1 = String(await redis.script('LOAD', DECIDE_SCRIPT.lua));
    const rule = ruleOf(c.countBlocked, { maxInInterval: c.max, countsCost: c.countsCost });
    const key = `wait:{${id}}`;
    const weights = recordWeightsKey(key);
    // Kept records at base + i, records in the window from base + 1.5 s, the attempts from base + interval + 1 s:
    // the kept ones are then past the cutoff and after the forget stamp (interval + 2 s back). Spaced records and
    // attempts start half a second later: the first attempt's window has just lost the oldest record.
    const base = Date.now() * 1000;
    const spacing = c.spacing ?? 1;
    const written = [
      ...Array.from({ length: c.kept }, (_, i) => ({ stamp: base + i, member: `k${i}`, weight: 1 })),
      ...Array.from({ length: c.records }, (_, i) => ({
        stamp: base + 1_500_000 + i * spacing,
        member: `${c.actions === true ? '+' : ''}r${i}`,
        weight: c.weight,
      })),
    ];
    // Their running sums first, where the decide script's first write of a key puts them (a small hash is a listpack,
    // read from its start): every record here is without an action id, and the kept ones are at or before the latest
    // cutoff weighed (each is read once, as the cutoff passes it).
    const total = written.reduce((sum, { weight }) => sum + weight, 0);
    const anon = c.actions === true ? total - c.records * c.weight : total;
    if (c.countsCost) await redis.hset(weights, 'total', total, 'anon', anon, 'past', c.kept, 'pastAt', base + Math.max(0, c.kept - 1), 'seal', total);
    for (let i = 0; i < written.length; i += 1_000) {
      const chunk = written.slice(i, i + 1_000);
      await redis.zadd(key, ...chunk.flatMap(({ stamp, member }) => [stamp, member]));
      if (c.countsCost) await redis.hset(weights, ...chunk.flatMap(({ member, weight }) => [member, weight]));
      const actions = chunk.filter(({ member }) => member.startsWith('+'));
      if (actions.length > 0) await redis.zadd(actionRecordsKey(key), ...actions.flatMap(({ stamp, member }) => [stamp, member]));
    }
    const start = base + rule.intervalUs + (c.spacing === undefined ? 1_000_000 : 1_500_000);
    const calls = Array.from({ length: attempts }, (_, j) =>
      encodeCall([
        {
          tiers: [{ key, rule } as unknown as Tier],
          now: start + j * spacing,
          dryRun: false,
          ...(c.countsCost ? { cost: c.cost } : {}),
          ...(c.actions === true ? { actionId: `q${j}`, singleUse: true } : {}),
        },
      ]),
    );
    const send = ({ keys, args }: Call): Promise<unknown> => redis.evalsha(sha1, keys.length, ...keys, ...args);
    const [verdict] = (await send(calls[0]!)) as number[];
    if (verdict !== (c.verdict === 'blocked' ? 0 : 1)) throw new Error(`wait case ${id}: the first attempt was ${verdict === 0 ? 'blocked' : 'allowed'}`);
    let next = 1;
    const sender = async (): Promise<void> => {
      for (let call = calls[next++]; call !== undefined; call = calls[next++]) await send(call);
    };
    await Promise.all(Array.from({ length: COST_WORKLOAD.inFlight }, sender));
    const usec = Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(await redis.info('commandstats'))?.[1]);
    const bytesOf = async (name: string): Promise<number> => Number(await redis.call('MEMORY', 'USAGE', name, 'SAMPLES', '0'));
    const perAttempt = meter === 'time' ? usec / attempts : Number.NaN;
    result = { perAttempt, members: await redis.zcard(key), bytes: await bytesOf(key), weightsBytes: c.countsCost ? await bytesOf(weights) : 0 };
  } finally {
    redis.disconnect();
    await server.stop();
  }
  if (meter === 'time') return result;
  const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'));
  if (totals === null) throw new Error(`no totals in ${out}`);
  return { ...result, perAttempt: Number(totals[1]) / attempts };
}

/**
 * Every wait case's figures as bench cells ({@link waitCell}): Redis time per attempt, the median of `rounds` rounds
 * that each measure every case once, in turn; the key's members and bytes from the last round.
 */
export async function measureWaitTime(rounds: number, log: (line: string) => void): Promise<Record<string, number>> {
  const samples = new Map<string, number[]>();
  const cells: Record<string, number> = {};
  for (let round = 0; round < rounds; round += 1) {
    for (const id of Object.keys(WAIT_CASES) as WaitCaseId[]) {
      const { perAttempt, members, bytes, weightsBytes } = await measureWait(id, 'time');
      samples.set(waitCell(id), [...(samples.get(waitCell(id)) ?? []), perAttempt]);
      Object.assign(cells, { [waitCell(id, 'members')]: members, [waitCell(id, 'bytes')]: bytes, [waitCell(id, 'weights-bytes')]: weightsBytes });
    }
    log(`  round ${round + 1} of ${rounds}`);
  }
  return { ...cells, ...Object.fromEntries([...samples].map(([cell, values]) => [cell, median(values)])) };
}
