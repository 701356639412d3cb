import type { WindowRule } from '../../core/decision-model.js';
import { microsecondsToWholeMillisecondsUp } from '../../core/clock.js';
import { actionRecordsKey, nextMember } from '../../core/identity.js';
import type { Tier } from '../../core/store.js';
import { defineScript } from '../scripts/redis-script.js';
import { type Field, flagField, type KeyField, keyField, luaAppend, luaOffsets, numberField, textField } from './call-layout.js';
import { DECISION_FAILED, DRY_RUN_TIER, RECORDED_TIER, REPLY_HEADER, REPLY_VALUES_PER_TIER } from './decide-reply.js';
import { FLOOD_BOUND_LUA } from './flood-bound-lua.js';

/** One decision for the decide script: an attempt (recorded) or a dry run, across the tiers of one id. */
export interface ScriptDecision {
  readonly tiers: readonly Tier[];
  /** The attempt's time; undefined to read Redis TIME. */
  readonly now: number | undefined;
  readonly dryRun: boolean;
  readonly actionId?: string | undefined;
}

// The call layout: ARGV[1] is how many rules the call carries; then one decision after the other, each its
// header, then per tier its keys in KEYS and the place of its rule in ARGV; then the rules, each once however many
// decisions of the call use it. The Lua names each field's offset after these lists (luaOffsets), and the codec
// (decide-codec.ts) encodes by the same lists: a field is added here, and used in the Lua.

/** The header of a decision in ARGV, in order. A decision records (an attempt) when its member or its action id is not ''; it is a dry run when both are. */
export const DECISION_HEADER: readonly Field<ScriptDecision>[] = [
  /** How many tiers (and pairs of keys) the decision has. */
  numberField('tierCount', (decision) => decision.tiers.length),
  /** Integer microseconds since the epoch; '' to read Redis TIME (once per call). */
  textField('now', (decision) => decision.now ?? ''),
  /** The member recorded for this attempt when it has no action id; '' in a dry run and with an action id. */
  textField('member', (decision) => (decision.dryRun || decision.actionId !== undefined ? '' : nextMember())),
  /**
   * The action id, or '' for none (and in a dry run). With one, the member is '+<id>' when the action is admitted
   * and '-<id>' when it is recorded blocked. An action id already admitted (and still in the window) in any tier
   * is answered as admitted again and records nothing. A blocked record of the same id counts like any other;
   * recording the action again replaces that record rather than adding one.
   */
  textField('actionId', (decision) => (decision.dryRun ? '' : (decision.actionId ?? ''))),
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

/** What each tier adds to its decision in ARGV, after the header, in order. */
export const TIER_ARGUMENTS: readonly Field<number>[] = [
  /** The place of the tier's rule among the call's rules, from 1. */
  numberField('rule', (place) => place),
];

/** A rule in ARGV, at the end of the call, in order; the TTLs in ms are worked out once per rule and call. */
export const RULE: readonly Field<WindowRule>[] = [
  numberField('interval', (rule) => rule.intervalUs),
  numberField('max', (rule) => rule.maxInInterval),
  numberField('gap', (rule) => rule.minDifferenceUs),
  flagField('countBlocked', (rule) => rule.countBlocked),
  /** The key's TTL in ms: the interval, rounded up. */
  textField('ttl', (rule) => microsecondsToWholeMillisecondsUp(rule.intervalUs)),
  /** The companion's TTL in ms: a millisecond more, so that it never misses a record the key still holds. */
  textField('actionTtl', (rule) => microsecondsToWholeMillisecondsUp(rule.intervalUs) + 1),
];

/**
 * Decides attempts for one id each, across one or more tiers, one after the other in the order given, each
 * atomically and exactly as if it had been sent alone, and records them (docs/semantics.md: the steps, and
 * "Stacks"). One call carries one decision, or a batch of them (`batch: true`) whose keys all live in one hash
 * slot, laid out as {@link DECISION_HEADER}, {@link TIER_KEYS}, {@link TIER_ARGUMENTS} and {@link RULE} say; the
 * reply is a flat array of integers, for each decision {@link REPLY_HEADER}, then per tier {@link RECORDED_TIER} or
 * {@link DRY_RUN_TIER}: a few numbers per tier, whatever maxInInterval is.
 *
 * The one script of every script mode (the default wherever the client runs scripts): `countBlocked: false`,
 * stacked tiers, `clock: 'redis'`, action ids, and `batch: true`. The caller derives the info (steps 6 and 7) from
 * the samples it returns, with the same code as every other store, and checks that it reaches the same decision.
 *
 * Every read comes before any PEXPIRE: a key given a TTL of 1 ms may be gone at the next command of the same
 * script, so the TTLs are set once, at the end of the call (the last decision's, for a key a batch writes twice).
 * The text is put together from constants of this module and its imports when it loads, never from an input: its
 * SHA1 never changes.
 */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  `if redis.replicate_commands then redis.replicate_commands() end
local WRONG_TYPE, BAD_ARGUMENT = ${DECISION_FAILED.wrongType}, ${DECISION_FAILED.badArgument}
local call, tryCall = redis.call, redis.pcall
local reply, r = {}, 0

${luaOffsets('header', DECISION_HEADER)}
${luaOffsets('keys', TIER_KEYS)}
${luaOffsets('tier', TIER_ARGUMENTS)}
${luaOffsets('rule', RULE)}

${FLOOD_BOUND_LUA}
-- The call's rules, read once: a rule that is not numbers, or has a max below 1, stays nil, and refuses the
-- decisions that name it.
local ruleCount = tonumber(ARGV[1])
if ruleCount == nil then return redis.error_reply('decide: bad rule count') end
local rulesAt = #ARGV - rule_width * ruleCount
local rules = {}
for i = 1, ruleCount do
  local a = rulesAt + rule_width * (i - 1)
  local interval, max, gap = tonumber(ARGV[a + rule_interval]), tonumber(ARGV[a + rule_max]), tonumber(ARGV[a + rule_gap])
  if interval and max and gap and max >= 1 then
    rules[i] = {
      interval = interval, max = max, gap = gap, countBlocked = ARGV[a + rule_countBlocked] == '1',
      ttl = ARGV[a + rule_ttl], actionTtl = ARGV[a + rule_actionTtl],
    }
  end
end

-- The decisions, in order. The decision at hand's tiers: their rules, |S| before and after the drop, and max(S)
-- where it is read (overwritten by the next decision). Written out in one loop, with no function made per call.
local ruleOf, held, counts, newests = {}, {}, {}, {}
-- The TTL each written key takes at the end of the call, and the keys in the order first written.
local ttlOfKey, written = {}, {}
local function expireWritten()
  for i = 1, #written do call('PEXPIRE', written[i], ttlOfKey[written[i]]) end
end
local k0, a0 = 0, 1
while a0 < rulesAt do
  local n = tonumber(ARGV[a0 + header_tierCount])
  if n == nil or n < 1 or a0 + header_width + tier_width * n > rulesAt then
    expireWritten()
    return redis.error_reply('decide: bad tier count in the header at argument ' .. (a0 + 1))
  end
  local now, nowText = timeOf(ARGV[a0 + header_now])
  local member, actionId = ARGV[a0 + header_member], ARGV[a0 + header_actionId]
  local record = member ~= '' or actionId ~= ''
  local failure = now == nil and BAD_ARGUMENT or nil
  -- Each tier's rule, and the first command on each of its keys, which tells a key of another type before anything
  -- is written: the decision then fails alone.
  for i = 1, failure and 0 or n do
    local rule = rules[tonumber(ARGV[a0 + header_width + tier_width * (i - 1) + tier_rule]) or 0]
    if rule == nil then
      failure = BAD_ARGUMENT
      break
    end
    local k, count = k0 + keys_width * (i - 1)
    if record then
      count = tryCall('ZCARD', KEYS[k + keys_key])
      if actionId ~= '' and type(count) == 'number' and type(tryCall('ZCARD', KEYS[k + keys_actions])) ~= 'number' then count = nil end
    else
      count = tryCall('ZCOUNT', KEYS[k + keys_key], '(' .. integer(now - rule.interval), '+inf')
    end
    if type(count) ~= 'number' then
      failure = WRONG_TYPE
      break
    end
    ruleOf[i], held[i], counts[i] = rule, count, count
  end
  if failure then
    local allowed, alreadyAdmitted = failure, 0
    now = now or 0
${luaAppend(REPLY_HEADER, REPLY_HEADER.length, '    ')}
    for j = 1, ${REPLY_VALUES_PER_TIER} * n do reply[r + j] = -1 end
    r = r + ${REPLY_VALUES_PER_TIER} * n
  else
    -- Step 1 (record mode): drop what left the window, from the companion too, so that it never holds a record the
    -- key no longer does (whatever the clock does next); an empty key has nothing to drop.
    local replayed = false
    for i = 1, record and n or 0 do
      local k = k0 + keys_width * (i - 1)
      if counts[i] > 0 then
        local cutoff = integer(now - ruleOf[i].interval)
        local dropped = call('ZREMRANGEBYSCORE', KEYS[k + keys_key], '-inf', cutoff)
        if dropped > 0 then
          counts[i] = counts[i] - dropped
          tryCall('ZREMRANGEBYSCORE', KEYS[k + keys_actions], '-inf', cutoff)
        end
      end
      if actionId ~= '' and call('ZSCORE', KEYS[k + keys_key], '+' .. actionId) then replayed = true end
    end
    -- Each tier's |S|, and max(S) where a gap rule or a max of 1 needs it.
    local passes = true
    for i = 1, n do
      local rule, count, newest = ruleOf[i], counts[i], -1
      if count > 0 and (rule.gap > 0 or rule.max == 1) then newest = scoreAt(KEYS[k0 + keys_width * (i - 1) + keys_key], '-1') end
      newests[i] = newest
      if count >= rule.max or (rule.gap > 0 and newest >= 0 and now - newest < rule.gap) then passes = false end
    end
    local allowed, alreadyAdmitted = (passes or replayed) and 1 or 0, replayed and 1 or 0
${luaAppend(REPLY_HEADER, REPLY_HEADER.length, '    ')}
    if actionId ~= '' then member = (passes and '+' or '-') .. actionId end
    for i = 1, n do
      local rule, count, newest = ruleOf[i], counts[i], newests[i]
      local max = rule.max
      local key, actions = KEYS[k0 + keys_width * (i - 1) + keys_key], KEYS[k0 + keys_width * (i - 1) + keys_actions]
      if not record then
        -- A dry run: the (k-1)-th and k-th newest of S.
        local kMinus1thNewest, kthNewest = -1, -1
        if max == 1 then
          if count >= 1 then kthNewest = newest end
        elseif count >= max - 1 then
          local pair = call('ZRANGE', key, integer(-max), integer(1 - max), 'WITHSCORES')
          kMinus1thNewest = pair[#pair] + 0
          if count >= max then kthNewest = pair[2] + 0 end
        end
${luaAppend(DRY_RUN_TIER, REPLY_VALUES_PER_TIER, '        ')}
      elseif replayed or not (passes or rule.countBlocked) then
        -- Nothing recorded: S' = S. With max 1, the max-th newest is the newest.
        local countAfter, newestAfter, maxthAfter = count, newest, -1
        if count >= max then maxthAfter = max == 1 and newest or scoreAt(key, integer(-max)) end
${luaAppend(RECORDED_TIER, REPLY_VALUES_PER_TIER, '        ')}
      else
        local countAfter, newestAfter = count, newest
        if actionId ~= '' then
          -- The action is recorded once: an earlier blocked record is replaced.
          countAfter = countAfter - call('ZREM', key, '-' .. actionId)
          call('ZREM', actions, '-' .. actionId)
          call('ZADD', actions, nowText, member)
        end
        countAfter = countAfter + call('ZADD', key, nowText, member)
        if countAfter > max then countAfter = trim(key, actions, max, countAfter) end
        if rule.gap > 0 or max == 1 then
          if actionId ~= '' then
            newestAfter = countAfter > 0 and scoreAt(key, '-1') or -1
          elseif now > newestAfter then
            newestAfter = now
          end
        end
        local maxthAfter = -1
        if countAfter >= max then maxthAfter = max == 1 and newestAfter or scoreAt(key, integer(-max)) end
${luaAppend(RECORDED_TIER, REPLY_VALUES_PER_TIER, '        ')}
        -- The companion outlives its key: it is given its TTL wherever it may hold a record, that is, where the key
        -- held one before (a new key's companion holds nothing its key does) or this decision wrote to it.
        if ttlOfKey[key] == nil then written[#written + 1] = key end
        ttlOfKey[key] = rule.ttl
        if held[i] > 0 or actionId ~= '' then
          if ttlOfKey[actions] == nil then written[#written + 1] = actions end
          ttlOfKey[actions] = rule.actionTtl
        end
      end
    end
  end
  k0 = k0 + keys_width * n
  a0 = a0 + header_width + tier_width * n
end
expireWritten()
return reply
`,
);
