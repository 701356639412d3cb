// The script path, the default wherever the client runs scripts: one
// EVALSHA of the decide script per decision, every mode alike (countBlocked
// either way, stacked tiers, the Redis clock, action ids); or one per batch
// of decisions with `batch: true`.

import { decideTiers, judge, type RecordedWindow, type Verdict, type WindowRule, type WindowSample } from '../../core/decision-model.js';
import type { StoreDecision, Tier, TierOutcome } from '../../core/store.js';
import { StoreError } from '../../errors/store-error.js';
import type { RedisAdapter } from '../adapters/adapter.js';
import { runScript } from '../scripts/run-script.js';
import { appendDecision, decodeReply, type DecisionReply, type DryRunTierReply, type RecordedTierReply } from './decide-codec.js';
import { DECIDE_SCRIPT, DECISION_FAILED, type ScriptDecision } from './decide-script.js';

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
  const keys: string[] = [];
  const args: (string | number)[] = [];
  for (const decision of decisions) appendDecision(keys, args, decision);
  return runScript(redis, DECIDE_SCRIPT, keys, args, (reply) => decodeReply(decisions, reply).map((values, i) => outcomeOf(decisions[i] as ScriptDecision, values)));
}

/**
 * One decision's outcome from its values in the reply. A recorded attempt's
 * outcome is read from what the script judged and stored; a dry run's is
 * derived from the samples it returns, with the same code every store uses.
 * Either way the caller's model must reach the script's decision, or the
 * decision fails loudly.
 */
function outcomeOf({ tiers }: ScriptDecision, reply: DecisionReply): StoreDecision | StoreError {
  const { now: decidedAt, allowed: allowedCode, alreadyAdmitted: replayed } = reply.header;
  if (allowedCode < 0) return failedDecision(allowedCode, tiers);
  const allowedByScript = allowedCode === 1;
  const alreadyAdmitted = replayed === 1;
  const rules = tiers.map((tier) => tier.rule);

  let outcomes: readonly TierOutcome[];
  let allowed: boolean;
  if (reply.dryRun) {
    const decision = decideTiers(rules, decidedAt, reply.tiers.map(sampleOf));
    outcomes = decision.tiers;
    allowed = decision.allowed;
  } else {
    outcomes = reply.tiers.map((tier, i) => recordedOutcome(rules[i] as WindowRule, decidedAt, tier, alreadyAdmitted));
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

/** A dry run's sample of one tier: |S|, max(S), the (k-1)-th and the k-th newest. */
function sampleOf({ count, newest, kMinus1thNewest, kthNewest }: DryRunTierReply): WindowSample {
  return { count, newest: orUndefined(newest), kMinus1thNewest: orUndefined(kMinus1thNewest), kthNewest: orUndefined(kthNewest) };
}

/** A recorded attempt's outcome in one tier: judged on |S| and max(S), described by S' as stored. */
function recordedOutcome(rule: WindowRule, now: number, tier: RecordedTierReply, alreadyAdmitted: boolean): TierOutcome {
  const verdict = alreadyAdmitted ? NOT_BLOCKED : judge(rule, now, { count: tier.count, newest: orUndefined(tier.newest) });
  const after: RecordedWindow = { count: tier.countAfter, newest: orUndefined(tier.newestAfter), maxthNewest: orUndefined(tier.maxthAfter) };
  return { verdict, after };
}

function orUndefined(value: number): number | undefined {
  return value < 0 ? undefined : value;
}
