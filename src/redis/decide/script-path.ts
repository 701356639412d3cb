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
import type { ReplyCursor } from './call-layout.js';
import { type DryRunTierReply, encodeCall, readDryRunTier, readHeader, readRecordedTier, readReply, type RecordedTierReply } from './decide-codec.js';
import { DECIDE_SCRIPT, type ScriptDecision } from './decide-script.js';
import { VERDICT } from './decide-reply.js';

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
 * One decision's outcome from its part of the reply, at the cursor. A
 * recorded attempt's outcome is read from what the script judged and stored;
 * a dry run's is derived from the samples it returns, with the same code
 * every store uses. Either way the caller's model must reach the script's
 * decision, or the decision fails loudly.
 */
function outcomeOf(decision: ScriptDecision, cursor: ReplyCursor): StoreDecision | StoreError {
  const { tiers, dryRun } = decision;
  const header = readHeader(decision, cursor);
  if (header.verdict < 0) return failedDecision(header.verdict, tiers);
  const decidedAt = decision.now ?? header.now;
  const alreadyAdmitted = header.verdict === VERDICT.alreadyAdmitted;

  let outcomes: readonly TierOutcome[];
  let allowed: boolean;
  if (dryRun) {
    const decided = decideTiers(
      tiers.map((tier) => tier.rule),
      decidedAt,
      tiers.map((tier) => sampleOf(readDryRunTier(tier.rule, cursor))),
    );
    outcomes = decided.tiers;
    allowed = decided.allowed;
  } else {
    const recorded: TierOutcome[] = [];
    allowed = true;
    for (const tier of tiers) {
      const outcome = recordedOutcome(tier.rule, decidedAt, readRecordedTier(tier.rule, cursor), alreadyAdmitted);
      if (outcome.verdict.blocked) allowed = false;
      recorded.push(outcome);
    }
    outcomes = recorded;
    allowed ||= alreadyAdmitted;
  }
  if (allowed !== (header.verdict !== VERDICT.blocked)) {
    return new StoreError(
      `The ${DECIDE_SCRIPT.name} script and the decision model disagree (script: ${header.verdict === VERDICT.blocked ? 'blocked' : 'allowed'}); please report this`,
    );
  }
  return { now: decidedAt, alreadyAdmitted, tiers: outcomes };
}

/** The error of a decision the script refused alone (the others of its batch were decided). */
function failedDecision(code: number, tiers: readonly Tier[]): StoreError {
  const keys = tiers.map((tier) => tier.key).join(', ');
  if (code === VERDICT.wrongType) {
    return refusedByStore(new StoreError(`Redis holds a value of another type under ${keys} (WRONGTYPE): this decision failed, and wrote nothing`));
  }
  return refusedByStore(new StoreError(`The ${DECIDE_SCRIPT.name} script refused the arguments of a decision on ${keys} (code ${code}); please report this`));
}

/** A dry run's sample of one tier: |S|, max(S), the (k-1)-th and the k-th newest. */
function sampleOf(values: DryRunTierReply): WindowSample {
  return {
    count: values.count,
    newest: orUndefined(values.newest),
    kMinus1thNewest: orUndefined(values.kMinus1thNewest),
    kthNewest: orUndefined(values.kthNewest),
  };
}

/** A recorded attempt's outcome in one tier: judged on |S| and max(S), described by S' as stored. */
function recordedOutcome(rule: WindowRule, now: number, values: RecordedTierReply, alreadyAdmitted: boolean): TierOutcome {
  const verdict = alreadyAdmitted ? NOT_BLOCKED : judge(rule, now, { count: values.count, newest: orUndefined(values.newest) });
  const after: RecordedWindow = { count: values.countAfter, newest: orUndefined(values.newestAfter), maxthNewest: orUndefined(values.maxthAfter) };
  return { verdict, after };
}

function orUndefined(value: number): number | undefined {
  return value < 0 ? undefined : value;
}
