// The decide script's codec: a decision into KEYS and ARGV, and the reply
// back into named values, both by the layout the script declares (and reads
// its arguments by) in decide-script.ts.

import { StoreError } from '../../errors/store-error.js';
import { readInteger } from '../replies.js';
import { decodeValues, encodeFields, encodeKeys, type ReplyCursor } from './call-layout.js';
import type { WindowRule } from '../../core/decision-model.js';
import { DECIDE_SCRIPT, DECISION_HEADER, RULE, type ScriptDecision, takesShortPath, TIER_ARGUMENTS, TIER_KEYS } from './decide-script.js';
import type { Tier } from '../../core/store.js';
import { DRY_RUN_TIER, type NamesOf, readsNewest, RECORDED_TIER, REPLY_HEADER, type ReplyValue, unpackReply } from './decide-reply.js';

type Named<Part extends readonly ReplyValue[]> = { readonly [Name in NamesOf<Part>]: number };

/** A decision's first values in the reply, by name; `now` is -1 where the caller gave the time. */
export type ReplyHeader = Named<typeof REPLY_HEADER>;
/** A recorded attempt's values of one tier, by name; -1 for a value left out or that does not exist. */
export type RecordedTierReply = Named<typeof RECORDED_TIER>;
/** A dry run's values of one tier, by name; -1 for a value left out or that does not exist. */
export type DryRunTierReply = Named<typeof DRY_RUN_TIER>;

/** One decision's part of the reply, by name; a decision that failed alone has only its header. */
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

/** The keys and arguments of one call of the decide script over `decisions`, in its layout. */
export function encodeCall(decisions: readonly ScriptDecision[]): { keys: string[]; args: (string | number)[] } {
  const keys: string[] = [];
  const args: (string | number)[] = [0];
  // The call's rules, by identity (a limiter's tiers keep theirs): a batch of one limiter's decisions sends its rule once.
  const rules: WindowRule[] = [];
  // A decision takes the short path where no later decision of the call uses its key (it then sets the TTL at once).
  const lastUse = decisions.length > 1 ? lastUses(decisions) : undefined;
  for (const [i, decision] of decisions.entries()) {
    const shortPath = takesShortPath(decision) && (lastUse === undefined || lastUse.get((decision.tiers[0] as Tier).key) === i);
    encodeFields(args, DECISION_HEADER, { decision, shortPath });
    for (const tier of decision.tiers) {
      encodeKeys(keys, TIER_KEYS, tier);
      let place = rules.indexOf(tier.rule) + 1;
      if (place === 0) place = rules.push(tier.rule);
      encodeFields(args, TIER_ARGUMENTS, { tier, decision, place });
    }
  }
  args[0] = rules.length;
  for (const rule of rules) encodeFields(args, RULE, rule);
  return { keys, args };
}

/** The place in `decisions` of the last decision that uses each key. */
function lastUses(decisions: readonly ScriptDecision[]): Map<string, number> {
  const last = new Map<string, number>();
  decisions.forEach((decision, i) => {
    for (const tier of decision.tiers) last.set(tier.key, i);
  });
  return last;
}

/** A decision's header at the cursor: its verdict, and the time Redis's clock gave it (-1 where the caller gave it). */
export function readHeader(decision: ScriptDecision, cursor: ReplyCursor): ReplyHeader {
  return decodeValues(REPLY_HEADER, cursor, (when) => when === 'redisClock' && decision.now === undefined);
}

/** A recorded attempt's values of one tier, under `rule`, at the cursor. */
export function readRecordedTier(rule: WindowRule, cursor: ReplyCursor): RecordedTierReply {
  return decodeValues(RECORDED_TIER, cursor, (when, read) => (when === 'readsNewest' ? readsNewest(rule) : when === 'fullAfter' && read.countAfter >= rule.maxInInterval));
}

/** A dry run's values of one tier, under `rule`, at the cursor. */
export function readDryRunTier(rule: WindowRule, cursor: ReplyCursor): DryRunTierReply {
  const max = rule.maxInInterval;
  return decodeValues(DRY_RUN_TIER, cursor, (when, read) => {
    if (when === 'readsNewest') return readsNewest(rule);
    if (when === 'nearlyFull') return max > 1 && read.count >= max - 1;
    return when === 'full' && read.count >= max;
  });
}

/**
 * Reads the reply to a call of `decisions`: checks its values are integers, hands each decision and a cursor at
 * its part to `read`, which reads the part (its header, then, unless it failed, its tiers), and checks that the
 * parts add up to the whole reply; throws a StoreError on a reply of another shape.
 */
export function readReply<T>(decisions: readonly ScriptDecision[], reply: unknown, read: (decision: ScriptDecision, cursor: ReplyCursor) => T): T[] {
  const cursor: ReplyCursor = { values: integersOf(reply), at: 0 };
  const answers: T[] = [];
  for (const decision of decisions) {
    if (cursor.at >= cursor.values.length) throw unexpectedReply(reply);
    answers.push(read(decision, cursor));
  }
  if (cursor.at !== cursor.values.length) throw unexpectedReply(reply);
  return answers;
}

/** The reply to a call of `decisions`, each decision's part by name; throws a StoreError on a reply of another shape. */
export function decodeReply(decisions: readonly ScriptDecision[], reply: unknown): DecisionReply[] {
  return readReply(decisions, reply, (decision, cursor): DecisionReply => {
    const header = readHeader(decision, cursor);
    const rules = header.verdict < 0 ? [] : decision.tiers.map((tier) => tier.rule);
    return decision.dryRun
      ? { dryRun: true, header, tiers: rules.map((rule) => readDryRunTier(rule, cursor)) }
      : { dryRun: false, header, tiers: rules.map((rule) => readRecordedTier(rule, cursor)) };
  });
}

function unexpectedReply(reply: unknown): StoreError {
  return new StoreError(`Unexpected reply to the ${DECIDE_SCRIPT.name} script from Redis: ${JSON.stringify(reply)?.slice(0, 120)}`);
}

/** The decide script's reply: integers, in an array or packed into one (PACKED_REPLY in decide-reply.ts). */
function integersOf(reply: unknown): number[] {
  if (!Array.isArray(reply)) {
    // A client may give an integer reply as text, as some give the array's values.
    const packed = typeof reply === 'string' && reply !== '' ? Number(reply) : reply;
    if (typeof packed === 'number' && Number.isSafeInteger(packed) && packed >= 0) return unpackReply(packed);
    throw unexpectedReply(reply);
  }
  // The client's reply array is ours: its values are read in place, not copied.
  for (let i = 0; i < reply.length; i += 1) reply[i] = readInteger(reply[i], `the ${DECIDE_SCRIPT.name} script`);
  return reply as number[];
}
