// The store that decides with plain commands (the MULTI path): decisions made of plain commands in one MULTI/EXEC,
// for what can be decided without a script (one limiter that counts blocked attempts, on the caller's clock, and
// every dry run on the caller's clock). Works on any client, needs no EVAL permission.

import { microsecondsToWholeMillisecondsUp } from '../core/clock.js';
import { decideTiers, forgetUpTo, retentionUs, type WindowRule, type WindowSample } from '../core/decision-model.js';
import { actionRecordsKey, nextMember } from '../core/identity.js';
import type { StoreDecision, Tier } from '../core/store.js';
import { StoreError } from '../errors/store-error.js';
import { UnsupportedError } from '../errors/unsupported-error.js';
import type { RedisAdapter } from './adapters/adapter.js';
import type { RedisCommand } from './adapters/client-types.js';
import { clearWithMulti, undoWithMulti } from './clear-and-undo.js';
import { RedisStore } from './redis-store.js';
import { readInteger, readScoredMembers } from './replies.js';

/**
 * The Redis store that decides with plain commands, one MULTI per operation (`useScript: false`, or a client without
 * scripts such as redis-mock): for one limiter that counts blocked attempts, on the caller's clock, without action
 * ids (options/assemble.ts refuses the rest when the limiter is built). A dry run is a read-only MULTI.
 */
export class MultiStore extends RedisStore {
  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string): Promise<StoreDecision> {
    if (actionId !== undefined) {
      // Action ids come with each call, so this is the one refusal that cannot be made when the limiter is built.
      const why = this.adapter.supportsScripts ? '`useScript: false`' : `${this.adapter.kind} cannot run scripts`;
      throw new UnsupportedError(`Action ids need the decide script, and this limiter decides with plain commands (${why})`);
    }
    return this.checked(attemptWithMulti(this.adapter, tiers[0] as Tier, now as number));
  }

  async peek(tiers: readonly Tier[], now: number | undefined): Promise<StoreDecision> {
    return this.checked(peekWithMulti(this.adapter, tiers, now as number));
  }

  async settle(): Promise<boolean> {
    // Never reached: a limiter that counts cost is refused this store when it is built (options/assemble.ts).
    throw new UnsupportedError('Costs need the decide script, and this limiter decides with plain commands');
  }

  async clear(keys: readonly string[]): Promise<void> {
    return this.checked(clearWithMulti(this.adapter, keys));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    return this.checked(undoWithMulti(this.adapter, keys, actionId));
  }
}

/**
 * The reads that sample the recorded set S of one key: the newest (read only
 * where a gap rule needs it), the (k-1)-th and the k-th newest timestamps
 * (k = `maxInInterval`), by rank from the newest. Two ranks at most for
 * k <= 2, in one command; above, the pair in one command, and the newest in
 * another where the rule has a gap: a few members, whatever `maxInInterval` is.
 *
 * Ranks are counted from the newest with ZREVRANGE and non-negative indexes:
 * Redis clamps negative ranges past the start of a set, and redis-mock does
 * not clamp them the same way.
 */
export function sampleReads(key: string, rule: WindowRule): RedisCommand[] {
  const k = rule.maxInInterval;
  if (k <= 2) return [['zrevrange', key, 0, k - 1, 'withscores']];
  const pair: RedisCommand = ['zrevrange', key, k - 2, k - 1, 'withscores'];
  return sampleReadsNewest(rule) ? [['zrevrange', key, 0, 0, 'withscores'], pair] : [pair];
}

/** Whether {@link sampleReads} reads max(S): always for k <= 2 (in the same range), else only for a gap rule. */
function sampleReadsNewest(rule: WindowRule): boolean {
  return rule.maxInInterval <= 2 || rule.minDifferenceUs > 0;
}

/** The sample of S from |S| and the replies of {@link sampleReads}; max(S) is left out where it was not read. */
function sampleOf(rule: WindowRule, count: number, replies: readonly unknown[]): WindowSample {
  const k = rule.maxInInterval;
  // The scores read, newest first: ranks 0 to k-1 when k <= 2, else ranks 0 (with a gap rule), k-2 and k-1 (fewer
  // when S is smaller).
  const scores = replies.flatMap((reply) => readScoredMembers(reply, 'ZREVRANGE').map((entry) => entry.score));
  const newestRead = sampleReadsNewest(rule);
  const kthAt = newestRead ? Math.min(k, 3) - 1 : 1;
  return {
    count,
    newest: count > 0 && newestRead ? scores[0] : undefined,
    kMinus1thNewest: k >= 2 && count >= k - 1 ? scores[kthAt - 1] : undefined,
    kthNewest: count >= k ? scores[kthAt] : undefined,
  };
}

/**
 * The commands of one attempt under one limiter with `countBlocked: true`
 * (docs/guides/how-it-works-on-redis.md). Every attempt is recorded in this mode, so the
 * transaction needs no decision before it writes:
 *
 * ```
 * ZREMRANGEBYSCORE key -inf <now - interval - inFlight>  step 1: forget what no call in flight can count
 * ZCOUNT           key (<now - interval> +inf      |S|, stamps after now included
 * ZREVRANGE        key 0 0 WITHSCORES              max(S), with a gap rule      } one ZREVRANGE 0 k-1
 * ZREVRANGE        key k-2 k-1 WITHSCORES          the (k-1)-th and k-th newest } when k <= 2
 * ZADD             key <now> <member>              record the attempt
 * ZREMRANGEBYRANK  key 0 -(k+1)                    keep the newest k: the flood bound
 * PEXPIRE          key <interval + inFlight ms>    idle ids cost nothing
 * ```
 *
 * The decision is docs/semantics.md steps 2 to 7 on that sample, by the same code every
 * store uses. Records stay `inFlight` (the limiter's timeout) past their window, uncounted by
 * on-time calls, for calls that reach Redis late or out of stamp order ("Time in flight").
 * Keeping only the newest k changes no decision: the count rule, the gap rule and the wait
 * only ever look at the newest k timestamps.
 *
 * Where Redis runs scripts, processes that decide with the decide script may share the key and
 * record actions with ids, which `undo` and retries must still find, whatever their rank: their
 * copies in the key's companion ({@link actionRecordsKey}) are put back after the flood bound
 * (`ZUNIONSTORE key 2 key companion`, before the PEXPIRE, since it rewrites the key), and the
 * companion forgets what the key forgets.
 */
export function attemptCommands(key: string, rule: WindowRule, now: number, member: string, sharedWithScripts = false): RedisCommand[] {
  const forget = forgetUpTo(rule, now);
  const actions = actionRecordsKey(key);
  const restoreActions: RedisCommand[] = [
    ['zremrangebyscore', actions, '-inf', forget],
    ['zunionstore', key, 2, key, actions, 'aggregate', 'max'],
  ];
  return [
    ['zremrangebyscore', key, '-inf', forget],
    ['zcount', key, `(${now - rule.intervalUs}`, '+inf'],
    ...sampleReads(key, rule),
    ['zadd', key, now, member],
    ['zremrangebyrank', key, 0, -(rule.maxInInterval + 1)],
    ...(sharedWithScripts ? restoreActions : []),
    ['pexpire', key, microsecondsToWholeMillisecondsUp(retentionUs(rule))],
  ];
}

/** One attempt under one limiter with `countBlocked: true`, in one MULTI of {@link attemptCommands}. */
export async function attemptWithMulti(redis: RedisAdapter, tier: Tier, now: number): Promise<StoreDecision> {
  const { key, rule } = tier;
  if (!rule.countBlocked) throw new StoreError('The MULTI path records every attempt; it cannot serve countBlocked: false');
  const member = nextMember();
  const commands = attemptCommands(key, rule, now, member, redis.supportsScripts);
  const replies = await redis.transaction(commands);
  const reads = sampleReads(key, rule).length;
  if (readInteger(replies[2 + reads], 'ZADD') !== 1) {
    throw new StoreError(`ZADD did not add member ${member}: the member already existed`);
  }
  const sample = sampleOf(rule, readInteger(replies[1], 'ZCOUNT'), replies.slice(2, 2 + reads));
  const decision = decideTiers([rule], now, [sample]);
  return { now, alreadyAdmitted: false, tiers: decision.tiers };
}

/**
 * A dry run across tiers: one read-only MULTI of, per tier, `ZCOUNT` (|S|)
 * and the reads of {@link sampleReads}. Members older than the window may
 * still be stored (nothing is removed); only the newest |S| count.
 */
export async function peekWithMulti(redis: RedisAdapter, tiers: readonly Tier[], now: number): Promise<StoreDecision> {
  const commands: RedisCommand[] = [];
  const readsPerTier: number[] = [];
  for (const { key, rule } of tiers) {
    const reads = sampleReads(key, rule);
    commands.push(['zcount', key, `(${now - rule.intervalUs}`, '+inf'], ...reads);
    readsPerTier.push(reads.length);
  }
  const replies = await redis.transaction(commands);
  let at = 0;
  const samples = tiers.map(({ rule }, i): WindowSample => {
    const reads = readsPerTier[i] as number;
    const sample = sampleOf(rule, readInteger(replies[at], 'ZCOUNT'), replies.slice(at + 1, at + 1 + reads));
    at += 1 + reads;
    return sample;
  });
  const decision = decideTiers(
    tiers.map((tier) => tier.rule),
    now,
    samples,
  );
  return { now, alreadyAdmitted: false, tiers: decision.tiers };
}
