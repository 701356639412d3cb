// The script path, the default wherever the client runs scripts: one
// EVALSHA of the decide script per decision, every mode alike (countBlocked
// either way, stacked tiers, the Redis clock, action ids); or one per batch
// of decisions with `batch: true`.

import type { StoreDecision } from '../../core/store.js';
import type { StoreError } from '../../errors/store-error.js';
import type { RedisAdapter } from '../adapters/adapter.js';
import { runScript } from '../scripts/run-script.js';
import { encodeCall, readOutcomes, type ScriptDecision } from './decide-codec.js';
import { DECIDE_SCRIPT } from './decide-script.js';

/** Decides (and, unless `dryRun`, records) an attempt across tiers with one call of the decide script. */
export function decideWithScript(redis: RedisAdapter, decision: ScriptDecision): Promise<StoreDecision> {
  return decideBatchWithScript(redis, [decision]).then(([outcome]) => {
    if (outcome instanceof Error) throw outcome;
    return outcome as StoreDecision;
  });
}

/**
 * Decides a batch of decisions, in order, with one call of the decide script; all their keys must live in one
 * hash slot. Resolves to each decision's outcome, or the error that decision alone failed with; rejects when the
 * call fails.
 */
export function decideBatchWithScript(redis: RedisAdapter, decisions: readonly ScriptDecision[]): Promise<(StoreDecision | StoreError)[]> {
  const { keys, args } = encodeCall(decisions);
  return runScript(redis, DECIDE_SCRIPT, keys, args, (reply) => readOutcomes(decisions, reply));
}
