// The script path, the default wherever the client runs scripts: one
// EVALSHA of the decide script per decision, every mode alike (countBlocked
// either way, stacked tiers, the Redis clock, action ids); or one per batch
// of decisions with `batch: true`.

import { decideTiers, judge, type RecordedWindow, type Verdict, type WindowRule, type WindowSample } from '../../core/decision-model.js';
import type { StoreDecision, Tier, TierOutcome } from '../../core/store.js';
import { refusedByStore } from '../../core/store-error-policy.js';
import { StoreError } from '../../errors/store-error.js';
import type { RedisAdapter } from '../adapters/adapter.js';
import { runScript } from '../scripts/run-script.js';
import { AT, encodeCall, readReply } from './decide-codec.js';
import { DECIDE_SCRIPT, type ScriptDecision } from './decide-script.js';
import { DECISION_FAILED, REPLY_HEADER, REPLY_VALUES_PER_TIER } from './decide-reply.js';

const NOT_BLOCKED: Verdict = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false };

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
  const { keys, args } = encodeCall(decisions);
  return runScript(redis, DECIDE_SCRIPT, keys, args, (reply) => readReply(decisions, reply, outcomeOf));
}

/**
 * One decision's outcome from its values in the reply, its part starting at
 * `at`. A recorded attempt's outcome is read from what the script judged and
 * stored; a dry run's is derived from the samples it returns, with the same
 * code every store uses. Either way the caller's model must reach the
 * script's decision, or the decision fails loudly.
 */
function outcomeOf({ tiers, dryRun }: ScriptDecision, values: readonly number[], at: number): StoreDecision | StoreError {
  const decidedAt = values[at + AT.header.now] as number;
  const allowedCode = values[at + AT.header.allowed] as number;
  if (allowedCode < 0) return failedDecision(allowedCode, tiers);
  const allowedByScript = allowedCode === 1;
  const alreadyAdmitted = values[at + AT.header.alreadyAdmitted] === 1;
  const first = at + REPLY_HEADER.length;

  let outcomes: readonly TierOutcome[];
  let allowed: boolean;
  if (dryRun) {
    const decision = decideTiers(
      tiers.map((tier) => tier.rule),
      decidedAt,
      tiers.map((_, i) => sampleOf(values, first + REPLY_VALUES_PER_TIER * i)),
    );
    outcomes = decision.tiers;
    allowed = decision.allowed;
  } else {
    const recorded: TierOutcome[] = [];
    allowed = true;
    for (let i = 0; i < tiers.length; i += 1) {
      const outcome = recordedOutcome((tiers[i] as Tier).rule, decidedAt, values, first + REPLY_VALUES_PER_TIER * i, alreadyAdmitted);
      if (outcome.verdict.blocked) allowed = false;
      recorded.push(outcome);
    }
    outcomes = recorded;
    allowed ||= alreadyAdmitted;
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
    return refusedByStore(new StoreError(`Redis holds a value of another type under ${keys} (WRONGTYPE): this decision failed, and wrote nothing`));
  }
  return refusedByStore(new StoreError(`The ${DECIDE_SCRIPT.name} script refused the arguments of a decision on ${keys} (code ${code}); please report this`));
}

/** A dry run's sample of one tier, its values from `at`: |S|, max(S), the (k-1)-th and the k-th newest. */
function sampleOf(values: readonly number[], at: number): WindowSample {
  return {
    count: values[at + AT.dryRun.count] as number,
    newest: orUndefined(values[at + AT.dryRun.newest] as number),
    kMinus1thNewest: orUndefined(values[at + AT.dryRun.kMinus1thNewest] as number),
    kthNewest: orUndefined(values[at + AT.dryRun.kthNewest] as number),
  };
}

/** A recorded attempt's outcome in one tier, its values from `at`: judged on |S| and max(S), described by S' as stored. */
function recordedOutcome(rule: WindowRule, now: number, values: readonly number[], at: number, alreadyAdmitted: boolean): TierOutcome {
  const verdict = alreadyAdmitted
    ? NOT_BLOCKED
    : judge(rule, now, { count: values[at + AT.recorded.count] as number, newest: orUndefined(values[at + AT.recorded.newest] as number) });
  const after: RecordedWindow = {
    count: values[at + AT.recorded.countAfter] as number,
    newest: orUndefined(values[at + AT.recorded.newestAfter] as number),
    maxthNewest: orUndefined(values[at + AT.recorded.maxthAfter] as number),
  };
  return { verdict, after };
}

function orUndefined(value: number): number | undefined {
  return value < 0 ? undefined : value;
}
