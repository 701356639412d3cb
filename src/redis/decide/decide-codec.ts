// The decide script's codec: a decision into KEYS and ARGV, and the reply
// back into named values, both by the layout the script declares (and reads
// its arguments by) in decide-script.ts.

import { StoreError } from '../../errors/store-error.js';
import { readInteger } from '../replies.js';
import { decodeFields, encodeFields, encodeKeys } from './call-layout.js';
import {
  DECIDE_SCRIPT,
  DECISION_HEADER,
  DRY_RUN_TIER,
  RECORDED_TIER,
  REPLY_HEADER,
  REPLY_VALUES_PER_TIER,
  TIER_KEYS,
  TIER_RULE,
  type ScriptDecision,
} from './decide-script.js';

type Named<Names extends readonly string[]> = { readonly [Name in Names[number]]: number };

/** A decision's first values in the reply, by name. */
export type ReplyHeader = Named<typeof REPLY_HEADER>;
/** A recorded attempt's values of one tier, by name. */
export type RecordedTierReply = Named<typeof RECORDED_TIER>;
/** A dry run's values of one tier, by name. */
export type DryRunTierReply = Named<typeof DRY_RUN_TIER>;

/** One decision's part of the reply, by name. */
export type DecisionReply =
  | { readonly dryRun: false; readonly header: ReplyHeader; readonly tiers: readonly RecordedTierReply[] }
  | { readonly dryRun: true; readonly header: ReplyHeader; readonly tiers: readonly DryRunTierReply[] };

/** How many keys and arguments one decision adds to a call of the decide script. */
export function callSizeOf(decision: ScriptDecision): number {
  return DECISION_HEADER.length + (TIER_KEYS.length + TIER_RULE.length) * decision.tiers.length;
}

/** How many values one decision adds to the reply. */
function replySizeOf(decision: ScriptDecision): number {
  return REPLY_HEADER.length + REPLY_VALUES_PER_TIER * decision.tiers.length;
}

/** Appends one decision's keys and arguments, in the decide script's layout, to a call's. */
export function appendDecision(keys: string[], args: (string | number)[], decision: ScriptDecision): void {
  encodeFields(args, DECISION_HEADER, decision);
  for (const tier of decision.tiers) {
    encodeKeys(keys, TIER_KEYS, tier);
    encodeFields(args, TIER_RULE, tier.rule);
  }
}

/** The reply to a call of `decisions`, each decision's part by name; throws a StoreError on a reply of another shape. */
export function decodeReply(decisions: readonly ScriptDecision[], reply: unknown): DecisionReply[] {
  const values = integersOf(reply, decisions.reduce((sum, decision) => sum + replySizeOf(decision), 0));
  let at = 0;
  return decisions.map((decision) => {
    const header = decodeFields(REPLY_HEADER, values, at);
    const first = at + REPLY_HEADER.length;
    at += replySizeOf(decision);
    const tierAt = (i: number): number => first + REPLY_VALUES_PER_TIER * i;
    return decision.dryRun
      ? { dryRun: true, header, tiers: decision.tiers.map((_, i) => decodeFields(DRY_RUN_TIER, values, tierAt(i))) }
      : { dryRun: false, header, tiers: decision.tiers.map((_, i) => decodeFields(RECORDED_TIER, values, tierAt(i))) };
  });
}

/** The decide script's reply: `length` integers. */
function integersOf(reply: unknown, length: number): number[] {
  if (!Array.isArray(reply) || reply.length !== length) {
    throw new StoreError(`Unexpected reply to the ${DECIDE_SCRIPT.name} script from Redis: ${JSON.stringify(reply)?.slice(0, 120)}`);
  }
  return reply.map((value) => readInteger(value, `the ${DECIDE_SCRIPT.name} script`));
}
