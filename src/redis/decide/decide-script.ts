import type { WindowRule } from '../../core/decision-model.js';
import { actionRecordsKey, nextMember } from '../../core/identity.js';
import type { Tier } from '../../core/store.js';
import { defineScript } from '../scripts/redis-script.js';
import { type Field, flagField, type KeyField, keyField, luaReader, luaWriter, numberField, textField } from './call-layout.js';
import { FLOOD_BOUND_LUA } from './flood-bound-lua.js';

/** What the decide script answers in a decision's `allowed` slot when that decision alone failed. */
export const DECISION_FAILED = {
  /** A key of the decision holds a value that is not a sorted set (Redis WRONGTYPE). */
  wrongType: -1,
  /** An argument of the decision is not what the script expects. */
  badArgument: -2,
} as const;

/** One decision for the decide script: an attempt (recorded) or a dry run, across the tiers of one id. */
export interface ScriptDecision {
  readonly tiers: readonly Tier[];
  /** The attempt's time; undefined to read Redis TIME. */
  readonly now: number | undefined;
  readonly dryRun: boolean;
  readonly actionId?: string | undefined;
}

// The call layout: one decision after the other, each its header in ARGV, then per tier its keys in KEYS and its
// rule in ARGV. The Lua reads each into a table keyed by these names (readHeader and readTier below), and the
// codec (decide-codec.ts) encodes and decodes by the same lists: a field is added here, and used in the Lua.

/** The header of a decision in ARGV, in order. */
export const DECISION_HEADER: readonly Field<ScriptDecision>[] = [
  /** How many tiers (and pairs of keys) the decision has. */
  numberField('tierCount', (decision) => decision.tiers.length),
  /** Integer microseconds since the epoch; '' to read Redis TIME (once per call). */
  textField('now', (decision) => decision.now ?? ''),
  /** The member recorded for this attempt when it has no action id ('' in a dry run). */
  textField('member', (decision) => (decision.dryRun || decision.actionId !== undefined ? '' : nextMember())),
  /** True to decide and record; false for a dry run that writes nothing. */
  flagField('record', (decision) => !decision.dryRun),
  /**
   * The action id, or '' for none. With one, the member is '+<id>' when the action is admitted and '-<id>' when it is recorded blocked. An
   * action id already admitted (and still in the window) in any tier is answered as admitted again and records
   * nothing. A blocked record of the same id counts like any other; recording the action again replaces that
   * record rather than adding one. (Record mode only.)
   */
  textField('actionId', (decision) => decision.actionId ?? ''),
];

/**
 * The keys of each tier in KEYS, in order. The keys of one decision share a
 * hash tag (the id), so they live in one slot; the store deletes both on
 * `clear` and `undo`.
 */
export const TIER_KEYS: readonly KeyField<Tier>[] = [
  keyField('key', (tier) => tier.key),
  /** `actionRecordsKey`: a copy of the key's records that carry an action id, so that the flood bound finds them without reading the key. */
  keyField('actions', (tier) => actionRecordsKey(tier.key)),
];

/** The rule of each tier in ARGV, after the decision's header, in order. */
export const TIER_RULE: readonly Field<WindowRule>[] = [
  numberField('interval', (rule) => rule.intervalUs),
  numberField('max', (rule) => rule.maxInInterval),
  numberField('gap', (rule) => rule.minDifferenceUs),
  flagField('countBlocked', (rule) => rule.countBlocked),
];

/** A decision's first values in the reply: the time decided at, allowed (1 or 0, or a negative {@link DECISION_FAILED} code when that decision alone failed and wrote nothing), and already admitted (1 or 0). */
export const REPLY_HEADER = ['now', 'allowed', 'alreadyAdmitted'] as const;

/** A recorded attempt's values per tier: |S| and max(S) of the recorded set S after dropping what left the window (what the decision is made on), then |S'|, max(S') and the k-th newest of S' (k = maxInInterval) as stored afterwards; -1 for a value that does not exist. */
export const RECORDED_TIER = ['count', 'newest', 'countAfter', 'newestAfter', 'maxthAfter'] as const;

/** A dry run's values per tier: |S|, max(S), the (k-1)-th and the k-th newest of S; -1 for a value that does not exist, and for the slots a recorded attempt uses and this does not. */
export const DRY_RUN_TIER = ['count', 'newest', 'kMinus1thNewest', 'kthNewest'] as const;

/** How many values each tier adds to the reply, in either mode. */
export const REPLY_VALUES_PER_TIER = Math.max(RECORDED_TIER.length, DRY_RUN_TIER.length);

/**
 * Decides attempts for one id each, across one or more tiers, one after the
 * other in the order given, each atomically and exactly as if it had been
 * sent alone, and records them (docs/semantics.md: the steps, and "Stacks").
 * One call carries one decision, or a batch of them (`batch: true`) whose
 * keys all live in one hash slot, laid out as {@link DECISION_HEADER},
 * {@link TIER_KEYS} and {@link TIER_RULE} say; the reply is a flat array of
 * integers, for each decision {@link REPLY_HEADER}, then per tier
 * {@link RECORDED_TIER} or {@link DRY_RUN_TIER}: a few numbers per tier,
 * whatever maxInInterval is.
 *
 * The one script of every script mode (the default wherever the client runs
 * scripts): `countBlocked: false`, stacked tiers, `clock: 'redis'`, action
 * ids, and `batch: true`. The caller derives the info (steps 6 and 7) from
 * the samples it returns, with the same code as every other store, and
 * checks that it reaches the same allowed/blocked decision.
 *
 * Every read comes before the key's PEXPIRE: a key given a TTL of 1 ms may
 * be gone at the next command of the same script. The text is put together
 * from constants of this module and its imports when it loads, never from an
 * input: its SHA1 never changes.
 */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  `if redis.replicate_commands then redis.replicate_commands() end
local WRONG_TYPE, BAD_ARGUMENT = ${DECISION_FAILED.wrongType}, ${DECISION_FAILED.badArgument}
local reply, r = {}, 0

${FLOOD_BOUND_LUA}
${luaReader('readHeader', [{ array: 'ARGV', offset: 'a', fields: DECISION_HEADER }])}

${luaReader('readTier', [
  { array: 'KEYS', offset: 'k', fields: TIER_KEYS },
  { array: 'ARGV', offset: 'a', fields: TIER_RULE },
])}

${luaWriter('answerHeader', REPLY_HEADER)}

${luaWriter('answerRecorded', RECORDED_TIER, REPLY_VALUES_PER_TIER)}

${luaWriter('answerDryRun', DRY_RUN_TIER, REPLY_VALUES_PER_TIER)}

local function fail(n, now, allowed)
  local alreadyAdmitted = 0
  answerHeader(now, allowed, alreadyAdmitted)
  for j = 1, ${REPLY_VALUES_PER_TIER} * n do reply[r + j] = -1 end
  r = r + ${REPLY_VALUES_PER_TIER} * n
end

-- One decision: its header, read at ARGV[a0 + 1], then each tier's keys after KEYS[k0] and its rule after the header.
local function decide(k0, a0, header)
  local n = header.tierCount
  local now, nowText = timeOf(header.now)
  if now == nil then return fail(n, 0, BAD_ARGUMENT) end
  local record, actionId = header.record, header.actionId
  local tiers = {}
  for i = 1, n do
    local tier = readTier(k0 + ${TIER_KEYS.length} * (i - 1), a0 + ${DECISION_HEADER.length} + ${TIER_RULE.length} * (i - 1))
    if not (tier and tier.max >= 1) then return fail(n, now, BAD_ARGUMENT) end
    tiers[i] = tier
  end
  -- The first command on each key tells a key of another type, before anything is written: the decision then
  -- fails alone. Step 1 (record mode): drop what left the window, from the companion too, so that it never holds
  -- a record the key no longer does (whatever the clock does next); an empty key has nothing to drop.
  local counts, held = {}, {}
  for i = 1, n do
    local tier = tiers[i]
    local count
    if record then
      count = redis.pcall('ZCARD', tier.key)
      if actionId ~= '' and not failed(count) and failed(redis.pcall('ZCARD', tier.actions)) then count = WRONG_TYPE end
    else
      tier.cutoff = score(now - tier.interval)
      count = redis.pcall('ZCOUNT', tier.key, '(' .. tier.cutoff, '+inf')
    end
    if count == WRONG_TYPE or failed(count) then return fail(n, now, WRONG_TYPE) end
    counts[i], held[i] = count, count
  end
  if record then
    for i = 1, n do
      if counts[i] > 0 then
        local tier = tiers[i]
        tier.cutoff = score(now - tier.interval)
        local dropped = redis.call('ZREMRANGEBYSCORE', tier.key, '-inf', tier.cutoff)
        if dropped > 0 then
          counts[i] = counts[i] - dropped
          redis.pcall('ZREMRANGEBYSCORE', tier.actions, '-inf', tier.cutoff)
        end
      end
    end
  end
  local replayed = false
  if record and actionId ~= '' then
    for i = 1, n do
      if redis.call('ZSCORE', tiers[i].key, '+' .. actionId) then replayed = true end
    end
  end
  -- Each tier's |S| and max(S), and for a dry run the (k-1)-th and k-th newest of S.
  local passes = true
  local newests = {}
  for i = 1, n do
    local tier = tiers[i]
    local count, max = counts[i], tier.max
    local newest = count > 0 and scoreAt(tier.key, '-1') or -1
    newests[i] = newest
    if count >= max or (tier.gap > 0 and newest >= 0 and now - newest < tier.gap) then passes = false end
  end
  local allowed, alreadyAdmitted = (passes or replayed) and 1 or 0, replayed and 1 or 0
  answerHeader(now, allowed, alreadyAdmitted)
  local member = header.member
  if actionId ~= '' then member = (passes and '+' or '-') .. actionId end
  for i = 1, n do
    local tier = tiers[i]
    local key, actions, max = tier.key, tier.actions, tier.max
    local count, newest = counts[i], newests[i]
    if not record then
      local kMinus1thNewest, kthNewest = -1, -1
      if max == 1 then
        if count >= 1 then kthNewest = newest end
      elseif count >= max - 1 then
        local pair = redis.call('ZRANGE', key, integer(-max), integer(1 - max), 'WITHSCORES')
        kMinus1thNewest = pair[#pair] + 0
        if count >= max then kthNewest = pair[2] + 0 end
      end
      answerDryRun(count, newest, kMinus1thNewest, kthNewest)
    elseif replayed or not (passes or tier.countBlocked) then
      -- Nothing recorded: S' = S.
      local countAfter, newestAfter = count, newest
      local maxthAfter = -1
      if count >= max then maxthAfter = max == 1 and newest or scoreAt(key, integer(-max)) end
      answerRecorded(count, newest, countAfter, newestAfter, maxthAfter)
    else
      local countAfter, newestAfter = count, newest
      if actionId ~= '' then
        -- The action is recorded once: an earlier blocked record is replaced.
        countAfter = countAfter - redis.call('ZREM', key, '-' .. actionId)
        redis.call('ZREM', actions, '-' .. actionId)
        redis.call('ZADD', actions, nowText, member)
      end
      countAfter = countAfter + redis.call('ZADD', key, nowText, member)
      countAfter = trim(key, actions, max, countAfter)
      if actionId ~= '' then
        newestAfter = countAfter > 0 and scoreAt(key, '-1') or -1
      elseif now > newestAfter then
        newestAfter = now
      end
      -- With max 1, the max-th newest is the newest.
      local maxthAfter = -1
      if countAfter >= max then maxthAfter = max == 1 and newestAfter or scoreAt(key, integer(-max)) end
      answerRecorded(count, newest, countAfter, newestAfter, maxthAfter)
      -- The companion outlives its key: it is given its TTL wherever it may hold a record, that is, where the key
      -- held one before (a new key's companion holds nothing its key does) or this decision wrote to it.
      local ttl = ttlOf(tier.interval)
      redis.call('PEXPIRE', key, ttl[1])
      if held[i] > 0 or actionId ~= '' then redis.call('PEXPIRE', actions, ttl[2]) end
    end
  end
end

local k0, a0 = 0, 0
while a0 < #ARGV do
  local header = readHeader(a0)
  if header == nil or header.tierCount < 1 then return redis.error_reply('decide: bad tier count in the header at argument ' .. (a0 + 1)) end
  decide(k0, a0, header)
  k0 = k0 + ${TIER_KEYS.length} * header.tierCount
  a0 = a0 + ${DECISION_HEADER.length} + ${TIER_RULE.length} * header.tierCount
end
return reply
`,
);
