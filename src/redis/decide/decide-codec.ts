// The decide script's codec: a decision into KEYS and ARGV, and the reply
// back into named values, both by the layout the script declares (and reads
// its arguments by) in decide-script.ts.

import { StoreError } from '../../errors/store-error.js';
import { readInteger } from '../replies.js';
import { decodeFields, encodeFields, encodeKeys } from './call-layout.js';
import type { WindowRule } from '../../core/decision-model.js';
import { DECIDE_SCRIPT, DECISION_HEADER, RULE, TIER_ARGUMENTS, TIER_KEYS, type ScriptDecision } from './decide-script.js';
import { DRY_RUN_TIER, RECORDED_TIER, REPLY_HEADER, REPLY_VALUES_PER_TIER } from './decide-reply.js';

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

/**
 * At most how many keys and arguments one decision adds to a call of the
 * decide script: its header, and per tier its keys, its rule's place and the
 * rule itself (sent once per call, however many decisions use it).
 */
export function callSizeOf(decision: ScriptDecision): number {
  return DECISION_HEADER.length + (TIER_KEYS.length + TIER_ARGUMENTS.length + RULE.length) * decision.tiers.length;
}

/** How many values one decision adds to the reply. */
function replySizeOf(decision: ScriptDecision): number {
  return REPLY_HEADER.length + REPLY_VALUES_PER_TIER * decision.tiers.length;
}

/** The keys and arguments of one call of the decide script over `decisions`, in its layout. */
export function encodeCall(decisions: readonly ScriptDecision[]): { keys: string[]; args: (string | number)[] } {
  const keys: string[] = [];
  const args: (string | number)[] = [0];
  // The call's rules, by identity (a limiter's tiers keep theirs): a batch of one limiter's decisions sends its rule once.
  const rules: WindowRule[] = [];
  for (const decision of decisions) {
    encodeFields(args, DECISION_HEADER, decision);
    for (const tier of decision.tiers) {
      encodeKeys(keys, TIER_KEYS, tier);
      let place = rules.indexOf(tier.rule) + 1;
      if (place === 0) place = rules.push(tier.rule);
      encodeFields(args, TIER_ARGUMENTS, place);
    }
  }
  args[0] = rules.length;
  for (const rule of rules) encodeFields(args, RULE, rule);
  return { keys, args };
}

/** Where each named value sits in its part of the reply: the names' places in the layout lists. */
function placesOf<Name extends string>(names: readonly Name[]): Named<readonly Name[]> {
  return Object.fromEntries(names.map((name, i) => [name, i])) as Named<readonly Name[]>;
}

/** Offsets of the reply's values from the start of a decision's part ({@link REPLY_HEADER}) and of a tier's part. */
export const AT = { header: placesOf(REPLY_HEADER), recorded: placesOf(RECORDED_TIER), dryRun: placesOf(DRY_RUN_TIER) } as const;

/**
 * Reads the reply to a call of `decisions`: checks it is `length` integers, then hands each decision, the values
 * and where its part starts (its tiers' parts start at `at + REPLY_HEADER.length`, {@link REPLY_VALUES_PER_TIER}
 * apart) to `read`; throws a StoreError on a reply of another shape.
 */
export function readReply<T>(decisions: readonly ScriptDecision[], reply: unknown, read: (decision: ScriptDecision, values: readonly number[], at: number) => T): T[] {
  const values = integersOf(reply, decisions.reduce((sum, decision) => sum + replySizeOf(decision), 0));
  const answers: T[] = [];
  let at = 0;
  for (const decision of decisions) {
    answers.push(read(decision, values, at));
    at += replySizeOf(decision);
  }
  return answers;
}

/** The reply to a call of `decisions`, each decision's part by name; throws a StoreError on a reply of another shape. */
export function decodeReply(decisions: readonly ScriptDecision[], reply: unknown): DecisionReply[] {
  return readReply(decisions, reply, (decision, values, at): DecisionReply => {
    const header = decodeFields(REPLY_HEADER, values, at);
    const tierAt = (i: number): number => at + REPLY_HEADER.length + REPLY_VALUES_PER_TIER * i;
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
  // The client's reply array is ours: its values are read in place, not copied.
  for (let i = 0; i < length; i += 1) reply[i] = readInteger(reply[i], `the ${DECIDE_SCRIPT.name} script`);
  return reply as number[];
}
