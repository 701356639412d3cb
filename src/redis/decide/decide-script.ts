import { forgetUpTo, retentionUs, type WindowRule } from '../../core/decision-model.js';
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
// header, then per tier its keys in KEYS and in ARGV its rule's place and its window's cutoff; then the rules, each once however many
// decisions of the call use it. The Lua names each field's offset after these lists (luaOffsets), and the codec
// (decide-codec.ts) encodes by the same lists: a field is added here, and used in the Lua.

/**
 * Whether the script can decide `decision` on its short path: one tier, an attempt without an action id on the
 * caller's clock, under a rule with no gap and a max above 1. Such a decision never reads max(S), the time as a
 * number, a second key before it writes, or Redis TIME, and most decisions are of this kind: the script then runs
 * only the steps it takes (docs/semantics.md). It takes it where no later decision of its call uses its key, so that
 * it gives the key its TTL at once (a key written again later in the call gets its TTL once, at the end); the
 * short-path and model tests hold it to the same decisions, info, stored members and TTLs as the general path.
 */
export function takesShortPath(decision: ScriptDecision): boolean {
  if (decision.dryRun || decision.actionId !== undefined || decision.now === undefined || decision.tiers.length !== 1) return false;
  const { rule } = decision.tiers[0] as Tier;
  return rule.minDifferenceUs === 0 && rule.maxInInterval > 1;
}

/** A decision as its call places it: the decision, and whether the script decides it on its short path. */
export interface PlacedDecision {
  readonly decision: ScriptDecision;
  /** {@link takesShortPath}, and no later decision of the call uses its key. */
  readonly shortPath: boolean;
}

/** The header of a decision in ARGV, in order. A decision records (an attempt) when its member is not ''; it is a dry run when it is. */
export const DECISION_HEADER: readonly Field<PlacedDecision>[] = [
  /**
   * 0 for a decision the script decides on its short path; otherwise how many tiers (and pairs of keys) the decision
   * has, negated when its member is an action id.
   */
  numberField('shape', ({ decision, shortPath }) => (shortPath ? 0 : (decision.dryRun || decision.actionId === undefined ? 1 : -1) * decision.tiers.length)),
  /** Integer microseconds since the epoch; '' to read Redis TIME (once per call). */
  textField('now', ({ decision }) => decision.now ?? ''),
  /**
   * The member recorded for this attempt, '' in a dry run; or its action id (shape negated). With an action
   * id, the member is '+<id>' when the action is admitted and '-<id>' when it is recorded blocked. An action id
   * already admitted (and still in the window) in any tier is answered as admitted again and records nothing. A
   * blocked record of the same id counts like any other; recording the action again replaces that record rather
   * than adding one.
   */
  textField('member', ({ decision }) => (decision.dryRun ? '' : (decision.actionId ?? nextMember()))),
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

/** A tier of a decision as the call places it: the tier, its decision, and the place of its rule among the call's rules (from 1). */
export interface PlacedTier {
  readonly tier: Tier;
  readonly decision: ScriptDecision;
  readonly place: number;
}

/** What each tier adds to its decision in ARGV, after the header, in order. */
export const TIER_ARGUMENTS: readonly Field<PlacedTier>[] = [
  /** Where the tier's rule starts in the array of the call's rules, which holds each rule's fields in the order of RULE. */
  numberField('ruleAt', ({ place }) => RULE.length * (place - 1)),
  /**
   * The window's cutoff, now - interval in integer microseconds, on the caller's clock ('' on Redis's, where the
   * script works it out): a record at or before it has left the window. Worked out here, it costs Redis neither
   * parsing the time nor printing the cutoff.
   */
  textField('cutoff', ({ tier, decision }) => (decision.now === undefined ? '' : decision.now - tier.rule.intervalUs)),
  /**
   * now - interval - inFlight ('' on Redis's clock, where the script uses the cutoff: a call stamped inside Redis
   * is never in flight): the records at or before it are forgotten; those after it but at or before the cutoff are
   * kept, uncounted, for calls stamped earlier that are still on their way (docs/semantics.md, "Time in flight").
   */
  textField('forget', ({ tier, decision }) => (decision.now === undefined ? '' : forgetUpTo(tier.rule, decision.now))),
];

/** A rule in ARGV, at the end of the call, in order; the TTLs in ms are worked out once per rule and call. */
export const RULE: readonly Field<WindowRule>[] = [
  numberField('interval', (rule) => rule.intervalUs),
  numberField('max', (rule) => rule.maxInInterval),
  numberField('gap', (rule) => rule.minDifferenceUs),
  flagField('countBlocked', (rule) => rule.countBlocked),
  /** The key's TTL in ms: the interval and the time a call may be in flight, rounded up. */
  textField('ttl', (rule) => microsecondsToWholeMillisecondsUp(retentionUs(rule))),
  /** The companion's TTL in ms: a millisecond more, so that it never misses a record the key still holds. */
  textField('actionTtl', (rule) => microsecondsToWholeMillisecondsUp(retentionUs(rule)) + 1),
];

// The Lua names of the values a packed reply carries, in order.
const PACKED_NAMES = Array.from({ length: PACKED_REPLY.maxValues }, (_, i) => `packed${i + 1}`);

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
 * decision's, for a key a batch writes twice), or at once by a one-tier decision that ends the call or takes the
 * short path (the call's last use of its key).
 *
 * Most decisions take the short path ({@link takesShortPath}): a handful of bytecodes and only the commands the
 * decision sends, so that a batch costs Redis close to the least any sliding log costs (docs/benchmarks.md).
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
-- A decision on the short path has one tier.
local short_ruleAt, short_cutoff, short_forget, short_width = header_width + tier_ruleAt, header_width + tier_cutoff, header_width + tier_forget, header_width + tier_width

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
-- decision at hand's tier i, at state[s + ...] for s = state_width * (i - 1): its rule's offset in rules, |S|,
-- max(S) where it is read, its window's cutoff and the stamp up to which it forgets records, as text; and the last
-- keys of this tier the call wrote, so that a hot id's batch gives each key its TTL once.
local state_rule, state_forget, state_count, state_newest, state_lastKey, state_lastActions, state_cutoff, state_width = 1, 2, 3, 4, 5, 6, 7, 7
local state -- made by the first decision on the general path
-- The keys written and the TTL each takes at the end of the call, in pairs, in the order written (made by the first
-- decision that lists one).
local expiring, e = nil, 0
local k0, a0 = 0, 1
while a0 < rulesAt do
  local shape, nowText, member = ARGV[a0 + header_shape], ARGV[a0 + header_now], ARGV[a0 + header_member]
  if shape == '0' then
    -- The short path (takesShortPath): one tier, an attempt without an action id on the caller's clock, under a rule
    -- with no gap and a max above 1, whose key no later decision of the call uses. The steps of the general path
    -- below, less what such a decision never takes; the TTLs set at once.
    local key, o, forget = KEYS[k0 + keys_key], ARGV[a0 + short_ruleAt] + 0, ARGV[a0 + short_forget]
    -- |S|: every record stamped after the cutoff, those stamped after now included (they arrived first).
    local count = tryCall('ZCOUNT', key, '(' .. ARGV[a0 + short_cutoff], '+inf')
    if type(count) ~= 'number' then
      local verdict = WRONG_TYPE
${luaAppend(REPLY_HEADER, '      ', ['redisClock'])}
    else
      local max, countBlocked = rules[o + rule_max], rules[o + rule_countBlocked]
      -- Step 1: forget what no call still in flight can count.
      if call('ZREMRANGEBYSCORE', key, '-inf', forget) > 0 then tryCall('ZREMRANGEBYSCORE', KEYS[k0 + keys_actions], '-inf', forget) end
      local passes = count < max
      local countAfter, records = count, passes or countBlocked
      if records then
        countAfter = count + call('ZADD', key, nowText, member)
        if countAfter > max then trim(key, KEYS[k0 + keys_actions], max, countAfter) end
      end
      local verdict, fullAfter, maxthAfter = passes and ALLOWED or BLOCKED, countAfter >= max, -1
      if fullAfter then maxthAfter = scoreAt(key, format('%d', -max)) end
${luaAppend([...REPLY_HEADER, ...RECORDED_TIER], '      ', ['redisClock', 'readsNewest'])}
      if records then
        call('PEXPIRE', key, rules[o + rule_ttl])
        if countBlocked then call('PEXPIRE', KEYS[k0 + keys_actions], rules[o + rule_actionTtl]) end
      end
    end
    k0 = k0 + keys_width
    a0 = a0 + short_width
  else
    local n, actionId = shape + 0, ''
    state = state or {0, 0, 0, 0, false, false, ''}
    if n < 0 then n, member, actionId = -n, '', member end
    local record = member ~= '' or actionId ~= ''
    -- The time as a number where the decision needs one (a gap rule, a max of 1, Redis's clock).
    local now
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
      local s, t = state_width * (i - 1), a0 + header_width + tier_width * (i - 1)
      local k, o, cutoff, forget, count = k0 + keys_width * (i - 1), ARGV[t + tier_ruleAt] + 0, ARGV[t + tier_cutoff], ARGV[t + tier_forget]
      -- On Redis's clock the call is stamped as it runs: never in flight, it forgets what left its window.
      if redisClock then cutoff = format('%d', now - rules[o + rule_interval]) forget = cutoff end
      -- |S|: every record stamped after the cutoff, those stamped after now included (they arrived first).
      count = tryCall('ZCOUNT', KEYS[k + keys_key], '(' .. cutoff, '+inf')
      if record and actionId ~= '' and type(count) == 'number' and type(tryCall('ZCARD', KEYS[k + keys_actions])) ~= 'number' then count = nil end
      if type(count) ~= 'number' then
        failure = WRONG_TYPE
        break
      end
      state[s + state_rule], state[s + state_forget], state[s + state_count], state[s + state_cutoff] = o, forget, count, cutoff
    end
    if failure then
      local verdict = failure
${luaAppend(REPLY_HEADER, '      ')}
    else
      -- Each tier's |S|, and max(S) where a gap rule or a max of 1 needs it. Step 1 (record mode) first: forget what
      -- no call still in flight can count, from the companion too, so that it never holds a record the key no longer
      -- does. A retry is one whose admitted record is in the window.
      local replayed, passes = false, true
      for i = 1, n do
        local s, k = state_width * (i - 1), k0 + keys_width * (i - 1)
        local o, count, newest, key = state[s + state_rule], state[s + state_count], -1, KEYS[k + keys_key]
        if record then
          local forget = state[s + state_forget]
          if call('ZREMRANGEBYSCORE', key, '-inf', forget) > 0 then tryCall('ZREMRANGEBYSCORE', KEYS[k + keys_actions], '-inf', forget) end
        end
        if actionId ~= '' then
          local admittedAt = call('ZSCORE', key, '+' .. actionId)
          if admittedAt and admittedAt + 0 > state[s + state_cutoff] + 0 then replayed = true end
        end
        local max, gap = rules[o + rule_max], rules[o + rule_gap]
        if count > 0 and (gap > 0 or max == 1) then
          newest, now = scoreAt(key, '-1'), now or nowText + 0
        end
        state[s + state_newest] = newest
        if count >= max or (gap > 0 and newest >= 0 and now - newest < gap) then passes = false end
      end
      local verdict = replayed and ALREADY_ADMITTED or passes and ALLOWED or BLOCKED
${luaAppend(REPLY_HEADER, '      ')}
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
${luaAppend(DRY_RUN_TIER, '          ')}
        elseif replayed or not (passes or rules[o + rule_countBlocked]) then
          -- Nothing recorded: S' = S. With max 1, the max-th newest is the newest.
          local countAfter, newestAfter, maxthAfter = count, newest, -1
          local fullAfter = count >= max
          if fullAfter then maxthAfter = max == 1 and newest or scoreAt(key, format('%d', -max)) end
${luaAppend(RECORDED_TIER, '          ')}
        else
          local countAfter, newestAfter = count, newest
          if actionId ~= '' then
            -- The action is recorded once: an earlier blocked record is replaced (it counted only in the window).
            local blockedAt = call('ZSCORE', key, '-' .. actionId)
            if blockedAt then
              call('ZREM', key, '-' .. actionId)
              if blockedAt + 0 > state[s + state_cutoff] + 0 then countAfter = countAfter - 1 end
            end
            call('ZREM', actions, '-' .. actionId)
            -- An earlier admitted record of the action has left the window (or this would be a retry): it keeps
            -- counting for calls still in flight, as a record without an action id.
            local admittedAt = passes and call('ZSCORE', key, member)
            if admittedAt then
              call('ZREM', key, member)
              call('ZREM', actions, member)
              call('ZADD', key, admittedAt, '=' .. admittedAt .. member)
            end
            call('ZADD', actions, nowText, member)
          end
          countAfter = countAfter + call('ZADD', key, nowText, member)
          -- The flood bound keeps the newest max records of the window and more: |S'| stays at least max.
          if countAfter > max then trim(key, actions, max, countAfter) end
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
${luaAppend(RECORDED_TIER, '          ')}
          -- Where the flood bound may read it, the companion outlives its key: it is given its TTL with its key
          -- wherever the flood bound may read it (a rule that counts blocked attempts) or this decision wrote to it. A
          -- rule that records only admitted attempts never holds more than max records in a window after a write, so
          -- the flood bound never reads its companion, which expires as its last write said.
          -- A one-tier decision that ends the call sets its TTLs at once: no command of the call comes after it.
          local listed = state[s + state_lastKey] == key
          if not listed and alone then
            call('PEXPIRE', key, rules[o + rule_ttl])
          elseif not listed then
            expiring = expiring or {}
            state[s + state_lastKey], expiring[e + 1], expiring[e + 2] = key, key, rules[o + rule_ttl]
            e = e + 2
          end
          if (actionId ~= '' or rules[o + rule_countBlocked]) and state[s + state_lastActions] ~= actions then
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
end
for i = 1, e, 2 do call('PEXPIRE', expiring[i], expiring[i + 1]) end
-- A few small values come back as one integer (PACKED_REPLY), which Redis answers for much less than an array: a
-- value absent reads -1 and adds nothing.
if r <= ${PACKED_REPLY.maxValues} then
  local ${PACKED_NAMES.join(', ')} = ${PACKED_NAMES.map((_, i) => `reply[${i + 1}] or -1`).join(', ')}
  if ${PACKED_NAMES.map((name) => `${name} <= ${PACKED_REPLY.largest}`).join(' and ')} then
    return r + ${PACKED_NAMES.map((name, i) => `(${name} + 1) * ${4 * 2 ** (PACKED_REPLY.bits * i)}`).join(' + ')}
  end
end
return reply
`,
);
