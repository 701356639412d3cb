import type { WindowRule } from '../../core/decision-model.js';
import { microsecondsToWholeMillisecondsUp } from '../../core/clock.js';
import { actionRecordsKey, nextMember } from '../../core/identity.js';
import type { Tier } from '../../core/store.js';
import { defineScript } from '../scripts/redis-script.js';
import { type Field, flagField, type KeyField, keyField, luaAppend, luaFieldSlots, luaOffsets, luaReadFields, numberField, textField } from './call-layout.js';
import { DRY_RUN_TIER, PACKED_REPLY, RECORDED_TIER, REPLY_HEADER, VERDICT } from './decide-reply.js';
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

/** The header of a decision in ARGV, in order. A decision records (an attempt) when its member is not ''; it is a dry run when it is. */
export const DECISION_HEADER: readonly Field<ScriptDecision>[] = [
  /** How many tiers (and pairs of keys) the decision has; negated when its member is an action id. */
  numberField('tierCount', (decision) => (decision.dryRun || decision.actionId === undefined ? 1 : -1) * decision.tiers.length),
  /** Integer microseconds since the epoch; '' to read Redis TIME (once per call). */
  textField('now', (decision) => decision.now ?? ''),
  /**
   * The member recorded for this attempt, '' in a dry run; or its action id (tierCount negated). With an action
   * id, the member is '+<id>' when the action is admitted and '-<id>' when it is recorded blocked. An action id
   * already admitted (and still in the window) in any tier is answered as admitted again and records nothing. A
   * blocked record of the same id counts like any other; recording the action again replaces that record rather
   * than adding one.
   */
  textField('member', (decision) => (decision.dryRun ? '' : (decision.actionId ?? nextMember()))),
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

/** What each tier adds to its decision in ARGV, after the header, in order, from the place of its rule among the call's rules (from 1). */
export const TIER_ARGUMENTS: readonly Field<number>[] = [
  /** Where the tier's rule starts in the array of the call's rules, which holds each rule's fields in the order of RULE. */
  numberField('ruleAt', (place) => RULE.length * (place - 1)),
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
 * No command on a key comes after its PEXPIRE: a key given a TTL of 1 ms may be gone at the next command of the
 * same script, so each key's TTL is set once, after the call's last command on it: at the end of the call (the last
 * decision's, for a key a batch writes twice), or at once by a one-tier decision that ends the call.
 * The text is put together from constants of this module and its imports when it loads, never from an input: its
 * SHA1 never changes.
 */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  `local BLOCKED, ALLOWED, ALREADY_ADMITTED, WRONG_TYPE = ${VERDICT.blocked}, ${VERDICT.allowed}, ${VERDICT.alreadyAdmitted}, ${VERDICT.wrongType}
local ARGV, KEYS, type, format, call, tryCall = ARGV, KEYS, type, string.format, redis.call, redis.pcall
local reply, r = {}, 0

${luaOffsets('header', DECISION_HEADER)}
${luaOffsets('keys', TIER_KEYS)}
${luaOffsets('tier', TIER_ARGUMENTS)}
${luaOffsets('rule', RULE)}

${FLOOD_BOUND_LUA}
-- The call's rules, read once into one array, each rule's fields in the order of RULE: a rule at offset o has its
-- max at rules[o + rule_max]. The codec sends numbers where numbers are read: a call with anything else fails as a
-- whole, with a Lua error.
local ruleCount = ARGV[1] + 0
local rulesAt = #ARGV - rule_width * ruleCount
local rules = { ${luaReadFields('rule', RULE, 'rulesAt')} }
for o = rule_width, rule_width * (ruleCount - 1), rule_width do
  ${luaFieldSlots('rule', RULE, 'rules', 'o')} = ${luaReadFields('rule', RULE, 'rulesAt + o')}
end

-- Redis TIME in microseconds, as a number and as text, read once per call by the first decision that asks for it
-- ('' as its now).
local redisNow, redisNowText
-- The decisions, in order, in one loop with no table or function made per decision. What the script holds of the
-- decision at hand's tier i, at state[s + ...] for s = state_width * (i - 1): its rule's offset in rules, |S|
-- before the drop and after, and max(S) where it is read; and the last keys of this tier the call wrote, so that a
-- hot id's batch gives each key its TTL once.
local state_rule, state_held, state_count, state_newest, state_lastKey, state_lastActions, state_width = 1, 2, 3, 4, 5, 6, 6
local state = {0, 0, 0, 0, false, false}
-- The keys written and the TTL each takes at the end of the call, in pairs, in the order written (made by the first
-- decision that lists one).
local expiring, e = nil, 0
local k0, a0 = 0, 1
while a0 < rulesAt do
  local n, member, actionId = ARGV[a0 + header_tierCount] + 0, ARGV[a0 + header_member], ''
  if n < 0 then n, member, actionId = -n, '', member end
  local record = member ~= '' or actionId ~= ''
  -- The time as text, and as a number where the decision needs one (a key with records, a gap rule, a dry run).
  local nowText, now = ARGV[a0 + header_now], nil
  local redisClock = nowText == ''
  if redisClock then
    if redisNow == nil then
      -- Redis 3.2 and 4.x replicate a script that reads TIME and then writes only by its effects, when asked first.
      if redis.replicate_commands then redis.replicate_commands() end
      local time = call('TIME')
      redisNow = time[1] * 1000000 + time[2]
      redisNowText = format('%d', redisNow)
    end
    now, nowText = redisNow, redisNowText
  end
  -- The call's last decision, of one tier: nothing the call sends after it reads its keys.
  local alone = n == 1 and a0 + header_width + tier_width >= rulesAt
  local failure
  -- Each tier's rule, and the first command on each of its keys, which tells a key of another type before anything
  -- is written: the decision then fails alone.
  for i = 1, n do
    local s, o = state_width * (i - 1), ARGV[a0 + header_width + tier_width * (i - 1) + tier_ruleAt] + 0
    local k, count = k0 + keys_width * (i - 1)
    if record then
      count = tryCall('ZCARD', KEYS[k + keys_key])
      if actionId ~= '' and type(count) == 'number' and type(tryCall('ZCARD', KEYS[k + keys_actions])) ~= 'number' then count = nil end
    else
      now = now or nowText + 0
      count = tryCall('ZCOUNT', KEYS[k + keys_key], '(' .. format('%d', now - rules[o + rule_interval]), '+inf')
    end
    if type(count) ~= 'number' then
      failure = WRONG_TYPE
      break
    end
    state[s + state_rule], state[s + state_held], state[s + state_count] = o, count, count
  end
  if failure then
    local verdict = failure
${luaAppend(REPLY_HEADER, '    ')}
  else
    -- Each tier's |S|, and max(S) where a gap rule or a max of 1 needs it. Step 1 (record mode) first: drop what
    -- left the window, from the companion too, so that it never holds a record the key no longer does (whatever the
    -- clock does next); an empty key has nothing to drop.
    local replayed, passes = false, true
    for i = 1, n do
      local s, k = state_width * (i - 1), k0 + keys_width * (i - 1)
      local o, count, newest, key = state[s + state_rule], state[s + state_count], -1, KEYS[k + keys_key]
      if record and count > 0 then
        now = now or nowText + 0
        local cutoff = format('%d', now - rules[o + rule_interval])
        local dropped = call('ZREMRANGEBYSCORE', key, '-inf', cutoff)
        if dropped > 0 then
          count = count - dropped
          state[s + state_count] = count
          tryCall('ZREMRANGEBYSCORE', KEYS[k + keys_actions], '-inf', cutoff)
        end
      end
      if actionId ~= '' and call('ZSCORE', key, '+' .. actionId) then replayed = true end
      local max, gap = rules[o + rule_max], rules[o + rule_gap]
      if count > 0 and (gap > 0 or max == 1) then newest = scoreAt(key, '-1') end
      state[s + state_newest] = newest
      if count >= max or (gap > 0 and newest >= 0 and now - newest < gap) then passes = false end
    end
    local verdict = replayed and ALREADY_ADMITTED or passes and ALLOWED or BLOCKED
${luaAppend(REPLY_HEADER, '    ')}
    if actionId ~= '' then member = (passes and '+' or '-') .. actionId end
    for i = 1, n do
      local s, k = state_width * (i - 1), k0 + keys_width * (i - 1)
      local o, count, newest = state[s + state_rule], state[s + state_count], state[s + state_newest]
      local max = rules[o + rule_max]
      local readsNewest = rules[o + rule_gap] > 0 or max == 1
      local key, actions = KEYS[k + keys_key], KEYS[k + keys_actions]
      if not record then
        -- A dry run: the (k-1)-th and k-th newest of S.
        local nearlyFull, full, kMinus1thNewest, kthNewest = max > 1 and count >= max - 1, count >= max, -1, -1
        if max == 1 then
          kthNewest = newest
        elseif nearlyFull then
          local pair = call('ZRANGE', key, format('%d', -max), format('%d', 1 - max), 'WITHSCORES')
          kMinus1thNewest, kthNewest = pair[#pair] + 0, pair[2] + 0
        end
${luaAppend(DRY_RUN_TIER, '        ')}
      elseif replayed or not (passes or rules[o + rule_countBlocked]) then
        -- Nothing recorded: S' = S. With max 1, the max-th newest is the newest.
        local countAfter, newestAfter, maxthAfter = count, newest, -1
        local fullAfter = count >= max
        if fullAfter then maxthAfter = max == 1 and newest or scoreAt(key, format('%d', -max)) end
${luaAppend(RECORDED_TIER, '        ')}
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
        if readsNewest then
          if actionId ~= '' then
            newestAfter = countAfter > 0 and scoreAt(key, '-1') or -1
          else
            now = now or nowText + 0
            if now > newestAfter then newestAfter = now end
          end
        end
        local maxthAfter = -1
        local fullAfter = countAfter >= max
        if fullAfter then maxthAfter = max == 1 and newestAfter or scoreAt(key, format('%d', -max)) end
${luaAppend(RECORDED_TIER, '        ')}
        -- Where the flood bound may read it, the companion outlives its key: it is given its TTL wherever it may
        -- hold a record, that is, where the key held one before (a new key's companion holds nothing its key does)
        -- or this decision wrote to it. A rule that records only admitted attempts never holds more than max
        -- records after a write, so the flood bound never reads its companion, which expires as its last write said.
        -- A one-tier decision that ends the call sets its TTLs at once: no command of the call comes after it.
        local listed = state[s + state_lastKey] == key
        if not listed and alone then
          call('PEXPIRE', key, rules[o + rule_ttl])
        elseif not listed then
          expiring = expiring or {}
          state[s + state_lastKey], expiring[e + 1], expiring[e + 2] = key, key, rules[o + rule_ttl]
          e = e + 2
        end
        if (actionId ~= '' or rules[o + rule_countBlocked] and state[s + state_held] > 0) and state[s + state_lastActions] ~= actions then
          if alone then
            call('PEXPIRE', actions, rules[o + rule_actionTtl])
          else
            expiring = expiring or {}
            state[s + state_lastActions], expiring[e + 1], expiring[e + 2] = actions, actions, rules[o + rule_actionTtl]
            e = e + 2
          end
        end
      end
    end
  end
  k0 = k0 + keys_width * n
  a0 = a0 + header_width + tier_width * n
end
for i = 1, e, 2 do call('PEXPIRE', expiring[i], expiring[i + 1]) end
-- A few small values come back as one integer (PACKED_REPLY), which Redis answers for much less than an array.
if r <= ${PACKED_REPLY.maxValues} then
  local packed, shift = r, 4
  for i = 1, r do
    if reply[i] > ${PACKED_REPLY.largest} then return reply end
    packed, shift = packed + (reply[i] + 1) * shift, shift * ${2 ** PACKED_REPLY.bits}
  end
  return packed
end
return reply
`,
);
