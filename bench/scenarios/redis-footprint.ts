// Measures 4 and 5: what a decision sends back, and what a key costs.
//
// Bytes per decision: one hot id whose window is kept full (interval 1 h) at
// maxInInterval 10 to 10,000; total_net_output_bytes delta over a fixed time
// at concurrency 1, divided by the decisions (the admin's INFO reply is in the
// delta too, and left in).
//
// Memory per key: MEMORY USAGE (SAMPLES 0: exact) and ZCARD after 10 allowed
// actions, and after a 20,000-attempt flood on one id, at max 10 per minute.
//
// rolling-rate-limiter replies with its whole set on every call, so driving
// its window full through the library itself costs O(n²) bytes (about 13 GB
// for the flood). Its sets are therefore pre-filled with one ZADD of exactly
// what it would have written (a UUID v4 member per attempt, microsecond
// scores), then driven through the library.

import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { BenchOptions } from '../cli.js';
import type { Contender, Instance, Rules } from '../contenders/types.js';
import { drive, measure } from '../measure.js';
import { netOutputBytes } from '../redis-stats.js';
import { BYTES_INTERVAL_MS, FLOOD_ATTEMPTS, HOT_ID, REDIS_RULES } from '../workloads.js';

export interface BytesRecord {
  readonly contender: string;
  readonly maxInInterval: number;
  readonly decisions?: number;
  readonly blockedShare?: number;
  readonly bytesPerDecision?: number;
  readonly error?: string;
}

export interface KeyMemoryRecord {
  readonly contender: string;
  readonly state: 'after 10 allowed' | 'after flood';
  /** Whether the state was replayed with ZADD rather than driven through the library. */
  readonly replayed: boolean;
  readonly bytes?: number;
  readonly members?: number;
  readonly bytesPerMember?: number;
  readonly encoding?: string;
  readonly error?: string;
}

export interface FootprintContext {
  readonly options: BenchOptions;
  readonly admin: Redis;
  readonly namespace: () => string;
  readonly log: (line: string) => void;
}

const isRollingRateLimiter = (contender: Contender): boolean => contender.id.startsWith('rrl');

/** What rolling-rate-limiter would have stored after `count` attempts, written in one ZADD. */
async function replayRollingState(admin: Redis, key: string, count: number, rules: Rules): Promise<void> {
  const nowUs = Date.now() * 1000;
  const args: (string | number)[] = [];
  for (let i = count; i > 0; i -= 1) args.push(nowUs - i * 50, randomUUID());
  await admin.zadd(key, ...args);
  await admin.expire(key, Math.ceil(rules.interval / 1000));
}

function keyOf(instance: Instance, id: string): string {
  if (instance.keyOf === undefined) throw new Error('a Redis contender must expose its keys');
  return instance.keyOf(id);
}

async function fill(context: FootprintContext, contender: Contender, instance: Instance, id: string, count: number, rules: Rules): Promise<boolean> {
  if (!isRollingRateLimiter(contender)) {
    await drive(instance.decide, id, count, 64);
    return false;
  }
  await replayRollingState(context.admin, keyOf(instance, id), count, rules);
  return true;
}

/** Measure 4 for each contender and maximum. */
export async function measureBytes(context: FootprintContext, contenders: readonly Contender[], maxima: readonly number[]): Promise<BytesRecord[]> {
  const records: BytesRecord[] = [];
  for (const contender of contenders) {
    for (const maxInInterval of maxima) {
      const rules: Rules = { interval: BYTES_INTERVAL_MS, maxInInterval, minDifference: 0 };
      const id = HOT_ID[0] as string;
      try {
        const instance = await contender.create(rules, context.namespace());
        await fill(context, contender, instance, id, maxInInterval, rules);
        await drive(instance.decide, id, 5, 1);
        const before = await netOutputBytes(context.admin);
        const sample = await measure(instance.decide, HOT_ID, 1, context.options.bytesDurationMs);
        const after = await netOutputBytes(context.admin);
        const bytesPerDecision = (after - before) / sample.decisions;
        records.push({ contender: contender.id, maxInInterval, decisions: sample.decisions, blockedShare: sample.blocked / sample.decisions, bytesPerDecision });
        context.log(`  bytes ${contender.id.padEnd(24)} max ${String(maxInInterval).padStart(6)}: ${bytesPerDecision.toFixed(0)} B/decision (${sample.decisions} decisions)`);
      } catch (error) {
        records.push({ contender: contender.id, maxInInterval, error: error instanceof Error ? error.message : String(error) });
      } finally {
        await context.admin.flushdb();
      }
    }
  }
  return records;
}

async function describeKey(admin: Redis, key: string): Promise<{ bytes: number; members: number; encoding: string }> {
  const bytes = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const members = await admin.zcard(key);
  const encoding = String(await admin.call('OBJECT', 'ENCODING', key));
  return { bytes, members, encoding };
}

/** Measure 5 for each contender: after 10 allowed actions, and after a flood. */
export async function measureKeyMemory(context: FootprintContext, contenders: readonly Contender[]): Promise<KeyMemoryRecord[]> {
  const records: KeyMemoryRecord[] = [];
  const rules = REDIS_RULES;
  for (const contender of contenders) {
    for (const state of ['after 10 allowed', 'after flood'] as const) {
      try {
        const instance = await contender.create(rules, context.namespace());
        const id = state === 'after flood' ? 'flooded-user' : 'quiet-user';
        let replayed = false;
        if (state === 'after 10 allowed') {
          await drive(instance.decide, id, rules.maxInInterval, 1);
        } else {
          // The last of the 20,000 attempts always goes through the contender itself.
          replayed = await fill(context, contender, instance, id, FLOOD_ATTEMPTS - 1, rules);
          await drive(instance.decide, id, 1, 1);
        }
        const { bytes, members, encoding } = await describeKey(context.admin, keyOf(instance, id));
        records.push({ contender: contender.id, state, replayed, bytes, members, bytesPerMember: bytes / members, encoding });
        context.log(`  key memory ${contender.id.padEnd(24)} ${state.padEnd(17)} ${bytes} B, ${members} members (${encoding})${replayed ? ', replayed' : ''}`);
      } catch (error) {
        records.push({ contender: contender.id, state, replayed: false, error: error instanceof Error ? error.message : String(error) });
      } finally {
        await context.admin.flushdb();
      }
    }
  }
  return records;
}
