// The MULTI path: decisions made of plain commands in one MULTI/EXEC, for
// what can be decided without a script. Works on any client, needs no EVAL
// permission.

import { microsecondsToWholeMillisecondsUp } from '../clock.js';
import { decideTiers, judge, type RecordedWindow, type WindowRule, type WindowSample } from '../decision.js';
import { StoreError } from '../errors/store-error.js';
import { nextMember } from '../member.js';
import type { RedisAdapter } from '../redis/adapter.js';
import { decimalString } from '../redis/decimal.js';
import type { RedisCommand } from '../redis/client-types.js';
import { readInteger, readScoredMembers } from '../redis/replies.js';
import type { StoreDecision, Tier } from './store.js';

/**
 * One attempt under one limiter with `countBlocked: true`. Every attempt is
 * recorded in this mode, so the transaction can write first and read the
 * result:
 *
 * ```
 * ZREMRANGEBYSCORE key -inf <now - interval>   drop what left the window
 * ZADD             key <now> <member>          record the attempt
 * ZCARD            key                         |S'|
 * ZREVRANGE        key 0 1 WITHSCORES          the two newest: max(S') and max(S)
 * ZREVRANGE        key k-1 k-1 WITHSCORES      the k-th newest of S' (k = maxInInterval > 2)
 * ZREMRANGEBYRANK  key 0 -(k+1)                keep only the newest k
 * PEXPIRE          key <interval ms>           idle ids cost nothing
 * ```
 *
 * Replies are a few numbers and at most three members, whatever
 * `maxInInterval` is. Keeping only the newest k members bounds the key under
 * a flood (at most k + 1 members, and only inside the transaction) without
 * changing any decision: the count rule, the gap rule and the wait only ever
 * look at the newest k timestamps.
 *
 * Ranks are counted from the newest with ZREVRANGE and non-negative indexes:
 * Redis clamps negative ranges past the start of a set, and redis-mock does
 * not clamp them the same way.
 */
export async function attemptWithMulti(redis: RedisAdapter, tier: Tier, now: number): Promise<StoreDecision> {
  const { key, rule } = tier;
  if (!rule.countBlocked) throw new StoreError('The MULTI path records every attempt; it cannot serve countBlocked: false');
  const k = rule.maxInInterval;
  const member = nextMember();
  const commands: RedisCommand[] = [
    ['zremrangebyscore', key, '-inf', now - rule.intervalUs],
    ['zadd', key, now, member],
    ['zcard', key],
    ['zrevrange', key, 0, 1, 'withscores'],
  ];
  if (k > 2) commands.push(['zrevrange', key, k - 1, k - 1, 'withscores']);
  commands.push(['zremrangebyrank', key, 0, -(k + 1)], ['pexpire', key, microsecondsToWholeMillisecondsUp(rule.intervalUs)]);

  const replies = await redis.transaction(commands);
  if (readInteger(replies[1], 'ZADD') !== 1) {
    throw new StoreError(`ZADD did not add member ${member}: the member already existed`);
  }
  const count = readInteger(replies[2], 'ZCARD');
  const newestTwo = readScoredMembers(replies[3], 'ZREVRANGE 0 1');
  const maxth = k > 2 ? readScoredMembers(replies[4], `ZREVRANGE ${k - 1} ${k - 1}`)[0] : newestTwo[k - 1];
  const previous = newestTwo.find((entry) => entry.member !== member);

  const verdict = judge(rule, now, { count: count - 1, newest: previous?.score });
  const after: RecordedWindow = { count, newest: newestTwo[0]?.score, maxthNewest: maxth?.score };
  return { now, alreadyAdmitted: false, tiers: [{ verdict, after }] };
}

/**
 * One attempt under one limiter with `countBlocked: true`, answering only
 * whether it is blocked (what `limit()` needs). Four commands, five with a
 * gap rule:
 *
 * ```
 * ZADD             key <now> <member>          record the attempt
 * ZREVRANGE        key k k WITHSCORES          the (k+1)-th newest, this attempt included (k = maxInInterval)
 * ZREVRANGE        key 0 1 WITHSCORES          the two newest (only with minDifference): max(S)
 * ZREMRANGEBYRANK  key 0 -(k+1)                keep only the newest k
 * PEXPIRE          key <interval ms>           idle ids cost nothing
 * ```
 *
 * The count rule blocks when |S| >= k, that is when at least k + 1 stored
 * timestamps, this attempt's included, are newer than `now - interval`: when
 * the (k+1)-th newest is. So the trim by score of the info path is not
 * needed here: the trim by rank keeps the key at k members whatever it
 * holds, members older than the window are never counted, and the key
 * expires with its newest member. One command fewer than a MULTI of
 * ZREMRANGEBYSCORE, ZRANGE, ZADD, ZREMRANGEBYRANK and PEXPIRE, measured in
 * docs/benchmarks.md.
 *
 * This is the default path of `limit()`, so it is written for the client's
 * sake: every argument is already a string (what node-redis sends, and what
 * ioredis would make of a number; the timestamp through decimalString, as on
 * the script path), and the answer is read in one `then` rather than through
 * an `async` function.
 */
export function limitWithMulti(redis: RedisAdapter, tier: Tier, now: number): Promise<boolean> {
  const { key, rule } = tier;
  if (!rule.countBlocked) return Promise.reject(new StoreError('The MULTI path records every attempt; it cannot serve countBlocked: false'));
  const k = String(rule.maxInInterval);
  const member = nextMember();
  const gapRule = rule.minDifferenceUs > 0;
  const commands: RedisCommand[] = [['zadd', key, decimalString(now), member], ['zrevrange', key, k, k, 'withscores']];
  if (gapRule) commands.push(['zrevrange', key, '0', '1', 'withscores']);
  commands.push(
    ['zremrangebyrank', key, '0', String(-(rule.maxInInterval + 1))],
    ['pexpire', key, String(microsecondsToWholeMillisecondsUp(rule.intervalUs))],
  );
  return redis.transaction(commands).then((replies) => blockedByReplies(replies, rule, now, member, gapRule));
}

/** limitWithMulti's verdict from the transaction's replies. */
function blockedByReplies(replies: readonly unknown[], rule: WindowRule, now: number, member: string, gapRule: boolean): boolean {
  if (readInteger(replies[0], 'ZADD') !== 1) {
    throw new StoreError(`ZADD did not add member ${member}: the member already existed`);
  }
  const k = rule.maxInInterval;
  const oldestOfWindow = now - rule.intervalUs;
  const kPlus1th = readScoredMembers(replies[1], `ZREVRANGE ${k} ${k}`)[0];
  const blockedDueToCount = kPlus1th !== undefined && kPlus1th.score > oldestOfWindow;
  if (blockedDueToCount || !gapRule) return blockedDueToCount;
  const previous = readScoredMembers(replies[2], 'ZREVRANGE 0 1').find((entry) => entry.member !== member);
  const newest = previous !== undefined && previous.score > oldestOfWindow ? previous.score : undefined;
  return judge(rule, now, { count: 0, newest }).blocked;
}

/**
 * A dry run across tiers: one read-only MULTI of, per tier, `ZCOUNT` (|S|),
 * `ZREVRANGE 0 0` (max(S)) and `ZREVRANGE k-2 k-1` (the (k-1)-th and k-th
 * newest). Members older than the window may still be stored (nothing is
 * removed); only the newest |S| count.
 */
export async function peekWithMulti(redis: RedisAdapter, tiers: readonly Tier[], now: number): Promise<StoreDecision> {
  const commands: RedisCommand[] = [];
  for (const { key, rule } of tiers) {
    const k = rule.maxInInterval;
    commands.push(['zcount', key, `(${now - rule.intervalUs}`, '+inf'], ['zrevrange', key, 0, 0, 'withscores']);
    if (k >= 2) commands.push(['zrevrange', key, k - 2, k - 1, 'withscores']);
  }
  const replies = await redis.transaction(commands);
  let at = 0;
  const samples = tiers.map(({ rule }): WindowSample => {
    const k = rule.maxInInterval;
    const count = readInteger(replies[at++], 'ZCOUNT');
    const newest = readScoredMembers(replies[at++], 'ZREVRANGE 0 0')[0]?.score;
    let kMinus1th: number | undefined;
    let kth = newest;
    if (k >= 2) {
      const pair = readScoredMembers(replies[at++], `ZREVRANGE ${k - 2} ${k - 1}`);
      kMinus1th = pair[0]?.score;
      kth = pair[1]?.score;
    }
    return {
      count,
      newest: count > 0 ? newest : undefined,
      kMinus1thNewest: k >= 2 && count >= k - 1 ? kMinus1th : undefined,
      kthNewest: count >= k ? kth : undefined,
    };
  });
  const decision = decideTiers(
    tiers.map((tier) => tier.rule),
    now,
    samples,
  );
  return { now, alreadyAdmitted: false, tiers: decision.tiers };
}
