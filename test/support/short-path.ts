// Which decisions the decide script takes on its short path: the script checks the same itself (its precondition
// line, which test/redis/decide/short-path.test.ts finds in it), and the tests that compare the two paths count them.

import type { Tier } from '../../src/core/store.js';
import type { ScriptDecision } from '../../src/redis/decide/decide-codec.js';

/**
 * Whether the script decides `decision` on its short path: one tier, an attempt without an action id on the caller's
 * clock, under a rule that counts actions, with no gap and a max above 1. Such a decision never reads max(S) or the
 * time as a number.
 */
export function takesShortPath(decision: ScriptDecision): boolean {
  if (decision.dryRun || decision.actionId !== undefined || decision.now === undefined || decision.tiers.length !== 1) return false;
  const { rule } = decision.tiers[0] as Tier;
  return rule.minDifferenceUs === 0 && rule.maxInInterval > 1 && !rule.countsCost;
}
