// The script path, the default wherever the client runs scripts: one
// EVALSHA of the decide script per decision, every mode alike (countBlocked
// either way, stacked tiers, the Redis clock, action ids); or one per batch
// of decisions with `batch: true`.

import { decideTiers, judge, type RecordedWindow, type Verdict, type WindowRule, type WindowSample } from '../../core/decision-model.js';
import { StoreError } from '../../errors/store-error.js';
import { actionRecordsKey, nextMember } from '../../core/identity.js';
import type { RedisAdapter } from '../adapters/adapter.js';
import { readInteger } from '../replies.js';
import { runScript } from '../scripts/run-script.js';
import { DECIDE_SCRIPT, DECISION_FAILED } from './decide-script.js';
import type { StoreDecision, Tier, TierOutcome } from '../../core/store.js';

const HEADER_VALUES = 3;
const VALUES_PER_TIER = 5;
const NOT_BLOCKED: Verdict = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false };

/** One decision for the decide script: an attempt (recorded) or a dry run, across the tiers of one id. */
export interface ScriptDecision {
  readonly tiers: readonly Tier[];
  /** The attempt's time; undefined to read Redis TIME. */
  readonly now: number | undefined;
  readonly dryRun: boolean;
  readonly actionId?: string | undefined;
}

/** Keys and arguments one decision adds to a call of the decide script: a header of five, then two keys and four rule values per tier. */
export function callSizeOf(decision: ScriptDecision): number {
  return 5 + 6 * decision.tiers.length;
}

/** Appends one decision's keys and arguments, in the decide script's layout, to a call's. */
export function appendDecision(keys: string[], args: (string | number)[], { tiers, now, dryRun, actionId }: ScriptDecision): void {
  const member = dryRun || actionId !== undefined ? '' : nextMember();
  args.push(tiers.length, now === undefined ? '' : now, member, dryRun ? '0' : '1', actionId ?? '');
  for (const { key, rule } of tiers) {
    keys.push(key, actionRecordsKey(key));
    args.push(rule.intervalUs, rule.maxInInterval, rule.minDifferenceUs, rule.countBlocked ? '1' : '0');
  }
}

/**
 * Decides (and, unless `dryRun`, records) an attempt across tiers with one
 * call of the decide script.
 */
export function decideWithScript(redis: RedisAdapter, decision: ScriptDecision): Promise<StoreDecision> {
  return decideBatchWithScript(redis, [decision]).then((outcomes) => {
    const outcome = outcomes[0] as StoreDecision | Error;
    if (outcome instanceof Error) throw outcome;
    return outcome;
  });
}

/**
 * Decides a batch of decisions, in order, with one call of the decide
 * script; all their keys must live in one hash slot. Resolves to each
 * decision's outcome, or the error that decision alone failed with (the
 * script and the model disagreeing); rejects when the call fails.
 */
export function decideBatchWithScript(redis: RedisAdapter, decisions: readonly ScriptDecision[]): Promise<(StoreDecision | Error)[]> {
  const keys: string[] = [];
  const args: (string | number)[] = [];
  let expected = 0;
  for (const decision of decisions) {
    appendDecision(keys, args, decision);
    expected += HEADER_VALUES + VALUES_PER_TIER * decision.tiers.length;
  }
  return runScript(redis, DECIDE_SCRIPT, keys, args, (reply) => {
    const values = integersOf(reply, expected);
    let at = 0;
    return decisions.map((decision) => {
      const length = HEADER_VALUES + VALUES_PER_TIER * decision.tiers.length;
      const outcome = outcomeOf(decision, values.slice(at, at + length));
      at += length;
      return outcome;
    });
  });
}

/**
 * One decision's outcome from its values in the reply. A recorded attempt's
 * outcome is read from what the script judged and stored; a dry run's is
 * derived from the samples it returns, with the same code every store uses.
 * Either way the caller's model must reach the script's decision, or the
 * decision fails loudly.
 */
function outcomeOf({ tiers, dryRun }: ScriptDecision, values: readonly number[]): StoreDecision | StoreError {
  const decidedAt = values[0] as number;
  if ((values[1] as number) < 0) return failedDecision(values[1] as number, tiers);
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
    return new StoreError(
      `The ${DECIDE_SCRIPT.name} script and the decision model disagree (script: ${allowedByScript ? 'allowed' : 'blocked'}); please report this`,
    );
  }
  return { now: decidedAt, alreadyAdmitted, tiers: outcomes };
}

/** The error of a decision the script refused alone (the others of its batch were decided). */
function failedDecision(code: number, tiers: readonly Tier[]): StoreError {
  const keys = tiers.map((tier) => tier.key).join(', ');
  if (code === DECISION_FAILED.wrongType) {
    return new StoreError(`Redis holds a value of another type under ${keys} (WRONGTYPE): this decision failed, and wrote nothing`);
  }
  return new StoreError(`The ${DECIDE_SCRIPT.name} script refused the arguments of a decision on ${keys} (code ${code}); please report this`);
}

/** The decide script's reply: `length` integers. */
function integersOf(reply: unknown, length: number): number[] {
  if (!Array.isArray(reply) || reply.length !== length) {
    throw new StoreError(`Unexpected reply to the ${DECIDE_SCRIPT.name} script from Redis: ${JSON.stringify(reply)?.slice(0, 120)}`);
  }
  return reply.map((value) => readInteger(value, `the ${DECIDE_SCRIPT.name} script`));
}

/** A dry run's sample of one tier: |S|, max(S), the (k-1)-th and the k-th newest. */
function sampleOf([count, newest, kMinus1th, kth]: readonly number[]): WindowSample {
  return { count: count as number, newest: orUndefined(newest), kMinus1thNewest: orUndefined(kMinus1th), kthNewest: orUndefined(kth) };
}

/** A recorded attempt's outcome in one tier: judged on |S| and max(S), described by S' as stored. */
function recordedOutcome(rule: WindowRule, now: number, values: readonly number[], alreadyAdmitted: boolean): TierOutcome {
  const [count, newest, countAfter, newestAfter, maxthAfter] = values as [number, number, number, number, number];
  const verdict = alreadyAdmitted ? NOT_BLOCKED : judge(rule, now, { count, newest: orUndefined(newest) });
  const after: RecordedWindow = { count: countAfter, newest: orUndefined(newestAfter), maxthNewest: orUndefined(maxthAfter) };
  return { verdict, after };
}

function orUndefined(value: number | undefined): number | undefined {
  return value === undefined || value < 0 ? undefined : value;
}
