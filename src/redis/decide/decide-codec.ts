// The decide script's codec: decisions into KEYS and ARGV, and the reply back
// into each decision's outcome, checked against the decision model. The
// layout is the one decide-script.ts names in its header, field by field in
// the same order (a test holds the lists below equal to the Lua's).

import { microsecondsToWholeMillisecondsUp } from '../../core/clock.js';
import { decideTiers, judge, retentionUs, weightOn, type RecordedWindow, type Verdict, type WindowRule, type WindowSample } from '../../core/decision-model.js';
import { actionRecordsKey, nextMember, recordWeightsKey } from '../../core/identity.js';
import { refusedByStore } from '../../core/store-error-policy.js';
import type { StoreDecision, Tier, TierOutcome } from '../../core/store.js';
import { StoreError } from '../../errors/store-error.js';
import { DECIDE_SCRIPT } from './decide-script.js';

/** One decision for the decide script: an attempt (recorded) or a dry run, across the tiers of one id. */
export interface ScriptDecision {
  readonly tiers: readonly Tier[];
  /** The attempt's time; undefined to read Redis TIME. */
  readonly now: number | undefined;
  readonly dryRun: boolean;
  readonly actionId?: string | undefined;
  /** What the attempt weighs on tiers that count cost (1 when left out). */
  readonly cost?: number | undefined;
  /** The action id is never retried: a blocked attempt is recorded under a member of its own, without it. */
  readonly singleUse?: boolean | undefined;
}

/** The fields of a decision's header in ARGV, in order. */
export const HEADER_FIELDS = ['tiers', 'now', 'member', 'actionId'] as const;
/** The keys of each tier in KEYS, in order; a tier whose rule counts actions sends all but the last. */
export const KEY_FIELDS = ['key', 'actions', 'weights'] as const;
/** The fields each tier adds to its decision in ARGV, after the header, in order; a tier whose rule counts actions sends all but the last. */
export const TIER_FIELDS = ['rule', 'cutoff', 'forget', 'cost'] as const;
/** The fields of a rule in ARGV, at the end of the call, in order. */
export const RULE_FIELDS = ['interval', 'max', 'gap', 'countBlocked', 'ttl', 'countsCost'] as const;

/**
 * The values the reply holds, in order: per decision (`now` only on Redis's clock), then per tier by its kind, each
 * present where the script's header says (a value that does not exist reads -1). The readers below read them in
 * this order; test/architecture/decide-contract.test.ts holds these lists equal to the header's reply block.
 */
export const REPLY_FIELDS = {
  decision: ['verdict', 'now'],
  actions: {
    attempt: ['count', 'countAfter', 'newest', 'newestAfter', 'fitsAfter'],
    dryRun: ['count', 'newest', 'kMinus1thNewest', 'kthNewest'],
  },
  cost: {
    attempt: ['count', 'countAfter', 'newest', 'newestAfter', 'fitsAfter'],
    dryRun: ['count', 'countAfter', 'newest', 'newestAfter', 'fitsAfter'],
  },
} as const;

/**
 * A decision's first value in the reply: how it was decided, or (negative) why it alone failed and recorded nothing:
 * a key of another type, a key that holds the records of a rule of the other kind (actions against cost), or records
 * that would weigh more than their sums count exactly.
 */
export const VERDICT = { blocked: 0, allowed: 1, alreadyAdmitted: 2, wrongType: -1, otherKind: -2, tooHeavy: -3 } as const;

/**
 * At most how many keys and arguments one decision adds to a call: its header, and per tier its keys, its fields
 * and its rule (sent once per call, however many decisions use it).
 */
export function callSizeOf(decision: ScriptDecision): number {
  let size = HEADER_FIELDS.length;
  for (const { rule } of decision.tiers) size += KEY_FIELDS.length + TIER_FIELDS.length + RULE_FIELDS.length - (rule.countsCost ? 0 : 2);
  return size;
}

/** The keys and arguments of one call of the decide script over `decisions`, in its layout. */
export function encodeCall(decisions: readonly ScriptDecision[]): { keys: string[]; args: (string | number)[] } {
  const keys: string[] = [];
  const args: (string | number)[] = [0];
  // The call's rules, by identity (a limiter's tiers keep theirs): a batch of one limiter's decisions sends its rule once.
  const rules: WindowRule[] = [];
  for (const { tiers, now, dryRun, actionId, cost = 1, singleUse = false } of decisions) {
    // tiers, now, member, actionId
    args.push(tiers.length, now ?? '', dryRun || (actionId !== undefined && !singleUse) ? '' : nextMember(), actionId ?? '');
    for (const tier of tiers) {
      const { rule } = tier;
      // key, actions
      keys.push(tier.key, actionRecordsKey(tier.key));
      let place = rules.indexOf(rule);
      if (place < 0) place = rules.push(rule) - 1;
      // rule, cutoff, forget (the writer's own horizon, in whole milliseconds as the script counts it)
      args.push(
        RULE_FIELDS.length * place,
        now === undefined ? '' : `(${now - rule.intervalUs}`,
        now === undefined ? '' : now - 1000 * microsecondsToWholeMillisecondsUp(retentionUs(rule)),
      );
      if (rule.countsCost) {
        // weights; cost
        keys.push(recordWeightsKey(tier.key));
        args.push(cost);
      }
    }
  }
  args[0] = rules.length;
  for (const rule of rules) {
    const ttl = microsecondsToWholeMillisecondsUp(retentionUs(rule));
    // interval, max, gap, countBlocked, ttl, countsCost
    args.push(rule.intervalUs, rule.maxInInterval, rule.minDifferenceUs, rule.countBlocked ? '1' : '0', ttl, rule.countsCost ? '1' : '0');
  }
  return { keys, args };
}

/** Whether a tier's reply carries max(S) and max(S'): only a tier with a gap rule, or one of at most 1 action, reads them. */
export function readsNewest(rule: WindowRule): boolean {
  return rule.minDifferenceUs > 0 || (rule.maxInInterval === 1 && !rule.countsCost);
}

/** A reply being read: its values, and where the next one is. */
interface Cursor {
  readonly values: readonly number[];
  at: number;
}

/** The next value at the cursor; -1 (it does not exist) where `present` is false. */
function next(cursor: Cursor, present = true): number {
  return present ? (cursor.values[cursor.at++] as number) : -1;
}

/**
 * Reads the reply to a call of `decisions` into each decision's outcome, in order, or the error that decision alone
 * failed with (a key of another type; the script and the model disagreeing); throws a StoreError on a reply of
 * another shape.
 */
export function readOutcomes(decisions: readonly ScriptDecision[], reply: unknown): (StoreDecision | StoreError)[] {
  const cursor: Cursor = { values: integersOf(reply), at: 0 };
  const outcomes = decisions.map((decision) => {
    if (cursor.at >= cursor.values.length) throw unexpectedReply(reply);
    const from = cursor.at;
    const outcome = outcomeOf(decision, cursor);
    // A value no integer reads exactly fails its decision alone: the others of the call were read in their places.
    for (let i = from; i < cursor.at; i += 1) {
      if (!Number.isSafeInteger(cursor.values[i])) return inexactReply(decision.tiers, cursor.values[i] as number);
    }
    return outcome;
  });
  if (cursor.at !== cursor.values.length) throw unexpectedReply(reply);
  return outcomes;
}

const NOT_BLOCKED: Verdict = { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false };

/**
 * One decision's outcome from its part of the reply. An attempt's outcome is judged on |S| and max(S) as the
 * script read them, and described by S' as stored; a dry run's is derived from the samples it returns, with the
 * same code every store uses. Either way the caller's model must reach the script's verdict, or the decision fails
 * loudly.
 */
function outcomeOf(decision: ScriptDecision, cursor: Cursor): StoreDecision | StoreError {
  const { tiers, dryRun, cost = 1 } = decision;
  const verdict = next(cursor);
  const redisNow = next(cursor, decision.now === undefined);
  if (verdict < 0) return failedDecision(verdict, tiers);
  const now = decision.now ?? redisNow;
  const alreadyAdmitted = verdict === VERDICT.alreadyAdmitted;

  let outcomes: readonly TierOutcome[];
  let allowed: boolean;
  if (dryRun) {
    const samples = tiers.map(({ rule }): WindowSample => {
      if (rule.countsCost) {
        // The script weighed S' as the attempt would leave it: the model takes it as it is, whichever way it was.
        const { count, newest, after } = readWeighed(rule, cost, cursor);
        return { count, newest, kMinus1thNewest: undefined, kthNewest: undefined, weighed: { recorded: after, notRecorded: after } };
      }
      const max = rule.maxInInterval;
      const count = next(cursor);
      const newest = next(cursor, readsNewest(rule));
      const kMinus1thNewest = next(cursor, max > 1 && count >= max - 1);
      const kthNewest = next(cursor, count >= max);
      return { count, newest: orUndefined(newest), kMinus1thNewest: orUndefined(kMinus1thNewest), kthNewest: orUndefined(kthNewest) };
    });
    const decided = decideTiers(
      tiers.map((tier) => tier.rule),
      now,
      samples,
      cost,
    );
    outcomes = decided.tiers;
    allowed = decided.allowed;
  } else {
    allowed = true;
    outcomes = tiers.map(({ rule }): TierOutcome => {
      const { count, newest, after } = readWeighed(rule, cost, cursor);
      const tierVerdict = alreadyAdmitted ? NOT_BLOCKED : judge(rule, now, { count, newest }, cost);
      if (tierVerdict.blocked) allowed = false;
      return { verdict: tierVerdict, after };
    });
    allowed ||= alreadyAdmitted;
  }
  if (allowed !== (verdict !== VERDICT.blocked)) {
    return new StoreError(
      `The ${DECIDE_SCRIPT.name} script and the decision model disagree (script: ${verdict === VERDICT.blocked ? 'blocked' : 'allowed'}); please report this`,
    );
  }
  return { now, alreadyAdmitted, tiers: outcomes };
}

/**
 * A tier's part of the reply that names S and S' by their weight (every attempt, and a dry run on a tier that counts
 * cost): |S| or W(S) and max(S), with S' as the script recorded it (or would have).
 */
function readWeighed(rule: WindowRule, cost: number, cursor: Cursor): { count: number; newest: number | undefined; after: RecordedWindow } {
  const count = next(cursor);
  const countAfter = next(cursor);
  const newest = next(cursor, readsNewest(rule));
  const newestAfter = next(cursor, readsNewest(rule));
  const fitsAfter = next(cursor, countAfter + weightOn(rule, cost) > rule.maxInInterval);
  return { count, newest: orUndefined(newest), after: { count: countAfter, newest: orUndefined(newestAfter), fitsAfter: orUndefined(fitsAfter) } };
}

/** The error of a decision the script refused alone (the others of its batch were decided). */
function failedDecision(code: number, tiers: readonly Tier[]): StoreError {
  const keys = tiers.map((tier) => tier.key).join(', ');
  if (code === VERDICT.wrongType) {
    return refusedByStore(new StoreError(`Redis holds a value of another type under ${keys} (WRONGTYPE): this decision failed, and wrote nothing`));
  }
  if (code === VERDICT.otherKind) return refusedByStore(otherKindError(tiers));
  if (code === VERDICT.tooHeavy) {
    return refusedByStore(
      new StoreError(
        `The records under ${keys} would weigh more than 2^52 with this attempt, more than their sums count exactly: this decision failed, and recorded nothing`,
      ),
    );
  }
  return refusedByStore(new StoreError(`The ${DECIDE_SCRIPT.name} script refused the arguments of a decision on ${keys} (code ${code}); please report this`));
}

/**
 * The error of a decision on a namespace whose key holds the records of a rule of the other kind: a limit of actions
 * and a budget of cost written under one namespace (by two processes, or two deployments) would each misread the
 * other's records.
 */
function otherKindError(tiers: readonly Tier[]): StoreError {
  const described = tiers.map(({ key, rule }) =>
    rule.countsCost ? `${key} (this limiter: maxCostInInterval ${rule.maxInInterval})` : `${key} (this limiter: maxInInterval ${rule.maxInInterval})`,
  );
  return new StoreError(
    `A limiter of the other kind writes the same namespace: ${described.join(', ')} holds the records of a limiter that counts ` +
      'cost (maxCostInInterval) where this one counts actions (maxInInterval), or the other way round. ' +
      'A limit of actions and a budget of cost cannot share a namespace: give each its own (e.g. a suffix naming the rule). ' +
      'This decision failed, and wrote nothing',
    { code: 'NAMESPACE_CONFLICT' },
  );
}

/** The error of a decision whose part of the reply holds a value no integer reads exactly (its others are read). */
function inexactReply(tiers: readonly Tier[], value: number): StoreError {
  const keys = tiers.map((tier) => tier.key).join(', ');
  return refusedByStore(
    new StoreError(`The ${DECIDE_SCRIPT.name} script answered ${String(value)} for ${keys}, beyond what an integer reads exactly: this decision failed`),
  );
}

function orUndefined(value: number): number | undefined {
  return value < 0 ? undefined : value;
}

function unexpectedReply(reply: unknown): StoreError {
  return new StoreError(`Unexpected reply to the ${DECIDE_SCRIPT.name} script from Redis: ${JSON.stringify(reply)?.slice(0, 120)}`);
}

/**
 * The decide script's reply: an array of numbers (integers, each decision's checked as it is read, so that one out of
 * range fails its decision alone); anything else is a reply of another shape.
 */
function integersOf(reply: unknown): number[] {
  if (!Array.isArray(reply)) throw unexpectedReply(reply);
  // The client's reply array is ours: its values are read in place, not copied.
  for (let i = 0; i < reply.length; i += 1) {
    const item: unknown = reply[i];
    const value = typeof item === 'string' && item !== '' ? Number(item) : item;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw unexpectedReply(reply);
    reply[i] = value;
  }
  return reply as number[];
}
