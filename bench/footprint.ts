// What a decision and a key cost in bytes, and what the in-memory stores
// keep per id, as `<contender> <measure>` entries:
//
// - `bytes@<max>`: one hot id whose window is kept full (interval 1 h) at
//   maxInInterval 10 to 10,000; the server's total_net_output_bytes over a
//   fixed time at one call in flight, divided by the decisions;
// - `quiet …` / `flood …`: MEMORY USAGE (SAMPLES 0: exact), ZCARD and the
//   encoding of one key after 10 allowed actions, and after 20,000 attempts;
// - `heap` / `heap-2nd`: heap per million ids, in a fresh child (worker.ts).
//
// rolling-rate-limiter sends back its whole set on every call, so driving it
// full through the library would move O(n²) bytes (about 13 GB for the
// flood): its set is written with one ZADD of what it would have stored (a
// UUID v4 member per attempt, microsecond scores), then driven through it.

import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { contender, type Clients, type Contender, type Instance, type Rules } from './contenders.js';
import { drive, measure, RULES } from './measure.js';
import { Child } from './throughput.js';

export type Footprint = Record<string, number | string>;

export const BYTES_MAXIMA = [10, 100, 1_000, 10_000];
const FLOOD = 20_000;

interface FootprintContext {
  readonly admin: Redis;
  readonly clients: Clients;
  readonly namespace: () => string;
  readonly log: (line: string) => void;
}

async function fill(context: FootprintContext, subject: Contender, instance: Instance, id: string, count: number, rules: Rules): Promise<void> {
  if (!subject.id.startsWith('rrl')) return drive(instance.decide, id, count, 64);
  const nowUs = Date.now() * 1000;
  await context.admin.zadd(instance.keyOf!(id), ...Array.from({ length: count }, (_, i) => [nowUs - (count - i) * 50, randomUUID()]).flat());
  await context.admin.expire(instance.keyOf!(id), Math.ceil(rules.interval / 1000));
}

async function attempt(into: Footprint, key: string, log: (line: string) => void, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    into[`${key} error`] = error instanceof Error ? error.message : String(error);
    log(`  ${key}: FAILED ${into[`${key} error`]}`);
  }
}

export async function measureFootprint(context: FootprintContext, ids: { bytes: string[]; keys: string[] }, bytesMs: number): Promise<Footprint> {
  const out: Footprint = {};
  const { admin } = context;
  for (const id of ids.bytes) {
    const subject = contender(id);
    for (const maxInInterval of BYTES_MAXIMA) {
      await attempt(out, id, context.log, async () => {
        const rules = { interval: 3_600_000, maxInInterval, minDifference: 0 };
        const instance = await subject.create(rules, context.namespace(), context.clients);
        await fill(context, subject, instance, 'hot-user', maxInInterval, rules);
        const before = Number((await admin.info('stats')).match(/total_net_output_bytes:(\d+)/)?.[1]);
        const { decisions } = await measure(instance.decide, ['hot-user'], 1, bytesMs, { next: 0 });
        const after = Number((await admin.info('stats')).match(/total_net_output_bytes:(\d+)/)?.[1]);
        out[`${id} bytes@${maxInInterval}`] = (after - before) / decisions;
        context.log(`  ${id.padEnd(28)} max ${String(maxInInterval).padStart(6)}: ${((after - before) / decisions).toFixed(0)} B/decision`);
      });
      await admin.flushdb();
    }
  }
  for (const id of ids.keys) {
    const subject = contender(id);
    for (const state of ['quiet', 'flood'] as const) {
      await attempt(out, id, context.log, async () => {
        const instance = await subject.create(RULES.redis, context.namespace(), context.clients);
        const user = `${state}-user`;
        if (state === 'quiet') await drive(instance.decide, user, RULES.redis.maxInInterval, 1);
        else {
          await fill(context, subject, instance, user, FLOOD - 1, RULES.redis);
          await instance.decide(user);
        }
        const key = instance.keyOf!(user);
        out[`${id} ${state} bytes`] = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
        out[`${id} ${state} members`] = await admin.zcard(key);
        out[`${id} ${state} encoding`] = String(await admin.call('OBJECT', 'ENCODING', key));
        context.log(`  ${id.padEnd(28)} ${state}: ${out[`${id} ${state} bytes`]} B, ${out[`${id} ${state} members`]} members`);
      });
      await admin.flushdb();
    }
  }
  return out;
}

/** Heap per million ids of each in-memory contender, each in a fresh child. */
export async function measureHeap(redisUrl: string, ids: readonly string[], count: number, log: (line: string) => void): Promise<Footprint> {
  const out: Footprint = {};
  for (const id of ids) {
    await attempt(out, id, log, async () => {
      const child = await Child.start(id, redisUrl);
      try {
        const { first, second } = (await child.request({ op: 'heap', ids: count })) as { first: number; second?: number };
        out[`${id} heap`] = first;
        if (second !== undefined) out[`${id} heap-2nd`] = second;
        log(
          `  ${id.padEnd(28)} ${(first / 2 ** 20).toFixed(0)} MiB per million ids${second === undefined ? '' : `, ${(second / 2 ** 20).toFixed(0)} after a second wave`}`,
        );
      } finally {
        child.stop();
      }
    });
  }
  return out;
}
