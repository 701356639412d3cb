// The script path: one EVALSHA per decision, for what must be decided before
// it is written (countBlocked: false, stacked tiers, the Redis clock, action
// ids).

import { microsecondsToWholeMillisecondsUp } from '../clock.js';
import { decideTiers, judge, type RecordedWindow, type Verdict, type WindowRule, type WindowSample } from '../decision.js';
import { StoreError } from '../errors/store-error.js';
import { nextMember } from '../member.js';
import type { RedisAdapter } from '../redis/adapter.js';
import { decimalString } from '../redis/decimal.js';
import { readInteger } from '../redis/replies.js';
import { runScript } from '../redis/run-script.js';
import { DECIDE_SCRIPT } from '../redis/scripts/decide-script.js';
import { LIMIT_ONE_TIER_SCRIPT } from '../redis/scripts/limit-one-tier-script.js';
import { LIMIT_PLAIN_TIERS_SCRIPT } from '../redis/scripts/limit-plain-tiers-script.js';
import { LIMIT_SCRIPT } from '../redis/scripts/limit-script.js';
import type { RedisScript } from '../redis/scripts/redis-script.js';
import type { StoreDecision, Tier, TierOutcome } from './store.js';

const HEADER_VALUES = 3;
const VALUES_PER_TIER = 5;
const NOT_BLOCKED: Verdict = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false };

/**
 * Decides (and, unless `dryRun`, records) an attempt across tiers with the
 * decide script. A recorded attempt's outcome is read from what the script
 * judged and stored; a dry run's is derived from the samples it returns, with
 * the same code every store uses. Either way the caller's model must reach
 * the script's decision, or the call fails loudly.
 */
export async function decideWithScript(
  redis: RedisAdapter,
  tiers: readonly Tier[],
  now: number | undefined,
  dryRun: boolean,
  actionId?: string,
): Promise<StoreDecision> {
  const member = dryRun || actionId !== undefined ? '' : nextMember();
  const args: (string | number)[] = [now === undefined ? '' : now, member, dryRun ? '0' : '1', actionId ?? ''];
  for (const { rule } of tiers) {
    args.push(rule.intervalUs, rule.maxInInterval, rule.minDifferenceUs, rule.countBlocked ? '1' : '0');
  }
  const values = await runScript(redis, DECIDE_SCRIPT, tiers.map((tier) => tier.key), args, (reply) => decideValuesOf(reply, tiers.length));
  const decidedAt = values[0] as number;
  const allowedByScript = values[1] === 1;
  const alreadyAdmitted = values[2] === 1;
  const perTier = tiers.map((_, i) => values.slice(HEADER_VALUES + VALUES_PER_TIER * i, HEADER_VALUES + VALUES_PER_TIER * (i + 1)));
  const rules = tiers.map((tier) => tier.rule);

  let outcomes: readonly TierOutcome[];
  let allowed: boolean;
  if (dryRun) {
    const decision = decideTiers(rules, decidedAt, perTier.map(sampleOf));
    outcomes = decision.tiers;
    allowed = decision.allowed;
  } else {
    outcomes = perTier.map((tierValues, i) => recordedOutcome(rules[i] as WindowRule, decidedAt, tierValues, alreadyAdmitted));
    allowed = alreadyAdmitted || outcomes.every((outcome) => !outcome.verdict.blocked);
  }
  if (allowed !== allowedByScript) {
    throw new StoreError(
      `The ${DECIDE_SCRIPT.name} script and the decision model disagree (script: ${allowedByScript ? 'allowed' : 'blocked'}); please report this`,
    );
  }
  return { now: decidedAt, alreadyAdmitted, tiers: outcomes };
}

/**
 * Decides and records an attempt across tiers with a limit script, which
 * answers only whether it was blocked: one EVALSHA whose reply is one
 * integer, for `limit()` without an action id. On the caller's clock, one
 * tier (the common case) takes the one-tier script, and tiers that are all
 * plain (no gap rule, blocked attempts not counted) the plain-tiers script:
 * both with shorter requests than the general script's.
 */
export function limitWithScript(redis: RedisAdapter, tiers: readonly Tier[], now: number | undefined): Promise<boolean> {
  if (now !== undefined) {
    const [only] = tiers;
    if (only !== undefined && tiers.length === 1) return limitOneTierWithScript(redis, only, now);
    if (tiers.every((tier) => isPlain(tier.rule))) return limitPlainTiersWithScript(redis, tiers, now);
  }
  const args: string[] = [now === undefined ? '' : decimalString(now), nextMember()];
  for (const { rule } of tiers) {
    args.push(...ruleArgumentsOf(rule).general, now === undefined ? '' : decimalString(now - rule.intervalUs));
  }
  return runScript(redis, LIMIT_SCRIPT, tiers.map((tier) => tier.key), args, readLimitVerdict);
}

/** A rule with no gap rule that does not count blocked attempts: all a decision needs from Redis is the count. */
function isPlain(rule: WindowRule): boolean {
  return rule.minDifferenceUs === 0 && !rule.countBlocked;
}

/**
 * What the limit scripts are told about a rule, as strings. The one-tier
 * script's, from ARGV[4] on: maxInInterval and the TTL, then the gap and
 * countBlocked only when either is not the default. The plain-tiers script's,
 * per tier after the cut-off: maxInInterval and the TTL. The general
 * script's, per tier before the cut-off: interval, maxInInterval, gap,
 * countBlocked, TTL.
 */
interface RuleArguments {
  readonly oneTier: readonly string[];
  readonly plain: readonly [max: string, ttlMs: string];
  readonly general: readonly string[];
}

/** Each rule's arguments, worked out once: a limiter's rule never changes, and its calls are many. */
const ruleArguments = new WeakMap<WindowRule, RuleArguments>();

function ruleArgumentsOf(rule: WindowRule): RuleArguments {
  let strings = ruleArguments.get(rule);
  if (strings === undefined) {
    const max = String(rule.maxInInterval);
    const ttlMs = String(microsecondsToWholeMillisecondsUp(rule.intervalUs));
    const gapUs = String(rule.minDifferenceUs);
    const countBlocked = rule.countBlocked ? '1' : '0';
    strings = {
      oneTier: isPlain(rule) ? [max, ttlMs] : [max, ttlMs, gapUs, countBlocked],
      plain: [max, ttlMs],
      general: [String(rule.intervalUs), max, gapUs, countBlocked, ttlMs],
    };
    ruleArguments.set(rule, strings);
  }
  return strings;
}

/** One tier at the caller's `now`, with the one-tier limit script. */
function limitOneTierWithScript(redis: RedisAdapter, { key, rule }: Tier, now: number): Promise<boolean> {
  const args = [decimalString(now), nextMember(), decimalString(now - rule.intervalUs), ...ruleArgumentsOf(rule).oneTier];
  return runScript(redis, LIMIT_ONE_TIER_SCRIPT, [key], args, readOneTierVerdict);
}

/** Tiers whose rules are all plain (see isPlain) at the caller's `now`, with the plain-tiers limit script. */
function limitPlainTiersWithScript(redis: RedisAdapter, tiers: readonly Tier[], now: number): Promise<boolean> {
  const args = [decimalString(now), nextMember()];
  const keys: string[] = [];
  for (const { key, rule } of tiers) {
    const [max, ttlMs] = ruleArgumentsOf(rule).plain;
    args.push(decimalString(now - rule.intervalUs), max, ttlMs);
    keys.push(key);
  }
  return runScript(redis, LIMIT_PLAIN_TIERS_SCRIPT, keys, args, readPlainTiersVerdict);
}

/** A limit script's reply: 1 blocked, 0 allowed, anything else a failure. */
function verdictOf(script: RedisScript, reply: unknown): boolean {
  const value = readInteger(reply, `the ${script.name} script`);
  if (value !== 0 && value !== 1) throw new StoreError(`Unexpected reply to the ${script.name} script from Redis: ${value}`);
  return value === 1;
}

const readLimitVerdict = (reply: unknown): boolean => verdictOf(LIMIT_SCRIPT, reply);
const readOneTierVerdict = (reply: unknown): boolean => verdictOf(LIMIT_ONE_TIER_SCRIPT, reply);
const readPlainTiersVerdict = (reply: unknown): boolean => verdictOf(LIMIT_PLAIN_TIERS_SCRIPT, reply);

/** The decide script's reply: the header, then each tier's values, all integers. */
function decideValuesOf(reply: unknown, tierCount: number): number[] {
  if (!Array.isArray(reply) || reply.length !== HEADER_VALUES + VALUES_PER_TIER * tierCount) {
    throw new StoreError(`Unexpected reply to the ${DECIDE_SCRIPT.name} script from Redis: ${JSON.stringify(reply)?.slice(0, 120)}`);
  }
  return reply.map((value) => readInteger(value, `the ${DECIDE_SCRIPT.name} script`));
}

/** A dry run's sample of one tier: |S|, max(S), the (k-1)-th and the k-th newest. */
function sampleOf([count, newest, kMinus1th, kth]: number[]): WindowSample {
  return { count: count as number, newest: orUndefined(newest), kMinus1thNewest: orUndefined(kMinus1th), kthNewest: orUndefined(kth) };
}

/** A recorded attempt's outcome in one tier: judged on |S| and max(S), described by S' as stored. */
function recordedOutcome(rule: WindowRule, now: number, values: number[], alreadyAdmitted: boolean): TierOutcome {
  const [count, newest, countAfter, newestAfter, maxthAfter] = values as [number, number, number, number, number];
  const verdict = alreadyAdmitted ? NOT_BLOCKED : judge(rule, now, { count, newest: orUndefined(newest) });
  const after: RecordedWindow = { count: countAfter, newest: orUndefined(newestAfter), maxthNewest: orUndefined(maxthAfter) };
  return { verdict, after };
}

function orUndefined(value: number | undefined): number | undefined {
  return value === undefined || value < 0 ? undefined : value;
}
