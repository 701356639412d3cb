import { defineScript } from '../scripts/redis-script.js';

/**
 * The decide script: every decision of every script mode (`countBlocked` either way, stacked tiers, the Redis
 * clock, action ids, dry runs), one or many per call (`batch: true`), each decided atomically and exactly as if it
 * had been sent alone, in the order given (docs/semantics.md: the steps, "Time in flight", "Action ids, undo,
 * clear", "Memory per key" and "Stacks"). Plain Lua, read top to bottom: its KEYS, ARGV and reply are named in its
 * header, and decide-codec.ts writes and reads them by the same names, in the same order (a test holds the two
 * lists equal). Inputs travel only in KEYS and ARGV, so its SHA1 never changes (a test pins it).
 *
 * The caller derives the info (steps 6 and 7) from the numbers it returns, with the same code as every other
 * store, and checks that its model reaches the script's verdict.
 */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  `-- rolling-window-limiter: the decide script.
--
-- KEYS, per tier of each decision, in order (a tier whose rule counts actions sends the first two only):
--   key        the tier's sorted set of records (score: stamp in microseconds; member: a unique token,
--              '+<action id>' admitted, '-<action id>' recorded blocked, '=<stamp>+<action id>' an admitted record
--              whose action id was admitted again after it left the window), and its horizon mark: the member
--              '#count' (a rule that counts actions) or '#cost' (one that counts cost), scored with the longest
--              ttl in milliseconds any writer of the key has given it (below every stamp, so always at rank 0)
--   actions    the key's companion: a copy of its records that carry an action id ('+' and '-')
--   weights    a tier that counts cost: a hash of each record's cost by its member, and running sums of them
--              ('total', 'anon', 'past' and 'pastAt': see the cost helpers below)
-- ARGV[1]: how many rules the call carries (the rules come last).
-- Then each decision: its header, then per tier its fields (a tier whose rule counts actions sends the first three):
--   header:
--     tiers      how many tiers the decision has
--     now        the stamp, integer microseconds; '' to read Redis TIME (once per call)
--     member     the attempt's member; '' for a dry run, or for an attempt with an action id a retry may repeat;
--                with a single-use action id (never retried), the member it is recorded under if blocked
--     actionId   the attempt's action id; '' for none
--   per tier:
--     rule       where the tier's rule starts among the call's rules: 0, 6, 12...
--     cutoff     '(' and now - interval: the window's exclusive lower bound, as ZCOUNT reads it ('' on Redis's clock)
--     cost       a tier that counts cost: what the attempt weighs in it
-- Then the rules, each once however many decisions use it:
--     interval   microseconds
--     max        maxInInterval, or maxCostInInterval when the rule counts cost
--     gap        minDifference, microseconds
--     countBlocked  '1' or '0'
--     ttl        the writer's horizon in milliseconds: interval + inFlight, rounded up. The key's horizon is the
--                longest of its writers' (its mark): records stamped at or before now - horizon are forgotten, on
--                either clock, and the key (and its weights) live that long after a write
--     countsCost  '1' when records weigh their cost, '0' when each weighs 1
--
-- Reply: integers, for each decision in order:
--   verdict      0 blocked, 1 allowed, 2 already admitted (a retry: nothing recorded); or the decision failed
--                alone, recording nothing: -1 a key holds another type, -2 the key holds the records of a rule of the
--                other kind (its mark: actions against cost), -3 recording the attempt would make the key's records
--                weigh more than SUM_LIMIT
--   now          the stamp, only when the decision read Redis TIME
-- then, unless it failed, per tier:
--   an attempt:  count (|S|), countAfter (|S'|), newest and newestAfter (max(S), max(S'), only where the rule has a
--                gap or a max of 1), fitsAfter (the max-th newest of S', only when countAfter >= max)
--   a dry run:   count, newest (as above), kMinus1thNewest (only with max > 1 and count >= max - 1), kthNewest
--                (only when count >= max)
--   a tier that counts cost, attempt or dry run: count (W(S), the weight of S), countAfter (W(S'), S' with the
--                attempt when it is, or would be, recorded), newest and newestAfter (only where the rule has a gap),
--                fitsAfter (only when countAfter > max - cost: the stamp of S' whose leaving lets an attempt of the
--                same cost fit, walking S' from its oldest)
-- A value that does not exist reads -1.
--
-- S is every record stamped after the cutoff, those stamped after now included: a call may reach Redis late, or
-- after a call stamped later, and the records around it share windows with it. Records stay until now less the
-- key's horizon, and keys live as long, so that a call in flight for up to any writer's inFlight still finds them,
-- whichever clock and timeout each writer has. On a tier that counts cost, W(S) comes from the weights' running
-- sums, reading only the records between the cutoff and the latest cutoff weighed before it.
--
-- Numbers go to redis.call as text: Redis would print a Lua number with '%.17g', and Lua's own conversion keeps
-- 14 digits where a stamp has 16. A score read back becomes a number with + 0.

local BLOCKED, ALLOWED, ALREADY_ADMITTED, WRONG_TYPE, OTHER_KIND, TOO_HEAVY = 0, 1, 2, -1, -2, -3
local header_tiers, header_now, header_member, header_actionId, header_width = 1, 2, 3, 4, 4
local keys_key, keys_actions, keys_weights, keys_width = 1, 2, 3, 3
local tier_rule, tier_cutoff, tier_cost, tier_width = 1, 2, 3, 3
-- No stamp is earlier than STAMPS_FROM (10^15 microseconds, in 2001): what is below it is the horizon mark, which
-- forgetting leaves alone. SUM_LIMIT (2^52) is the most a cost tier's records may weigh together: every sum stays an
-- exact integer in Lua's numbers, with room to spare.
local STAMPS_FROM, SUM_LIMIT = '1000000000000000', 4503599627370496
local MARK_OF_ACTIONS, MARK_OF_COST = '#count', '#cost'
local rule_interval, rule_max, rule_gap, rule_countBlocked, rule_ttl, rule_countsCost, rule_width = 1, 2, 3, 4, 5, 6, 6

local ARGV, KEYS, type, format, call, tryCall = ARGV, KEYS, type, string.format, redis.call, redis.pcall

-- The score at a rank given as text (negative: from the newest), or -1 when there is none.
local function scoreAt(key, rank)
  local pair = call('ZRANGE', key, rank, rank, 'WITHSCORES')
  return pair[2] and pair[2] + 0 or -1
end

-- Removes members from a key (a sorted set, or a hash with command 'HDEL'), 500 at a time.
local function removeAll(command, from, members)
  for j = 1, #members, 500 do call(command, from, unpack(members, j, math.min(j + 499, #members))) end
end

-- The horizon a key's mark holds, in milliseconds, for a tier whose mark is mark (0 where the key has none yet);
-- false when the key holds another type, nil when it holds the other kind's mark, otherMark. The other mark is
-- looked for only on a key without this one (a new key, most often).
local function markedHorizon(key, mark, otherMark)
  local ttl = tryCall('ZSCORE', key, mark)
  if type(ttl) == 'table' then return false end
  if ttl then return ttl + 0 end
  if call('ZSCORE', key, otherMark) then return nil end
  return 0
end

-- Whether a member is an action's record: '+' (admitted) or '-' (blocked). Any other ('=' and the members of
-- attempts without an action id, or with a single-use one that was blocked) never changes but by clear.
local function isAction(member)
  local first = string.byte(member)
  return first == 43 or first == 45
end

-- The flood bound (docs/semantics.md, "Memory per key"), after a write that left count records in the window
-- (more than max): keep what a later decision could still tell apart, whatever is undone or cleared later: every
-- admitted action, the newest max records without an action id, and the blocked actions newer than the max-th
-- newest of those. The key may hold more records than count (older ones, kept for calls in flight): a count too
-- small only keeps more. Rank 0 is the key's mark, which stays.
local function floodBound(key, actions, max, count)
  local actionCount = tryCall('ZCARD', actions)
  if type(actionCount) ~= 'number' then return end
  if actionCount == 0 then
    call('ZREMRANGEBYRANK', key, '1', format('%d', -1 - max))
    return
  end
  -- At least this many records carry no action id (the companion holds a copy of every one that does).
  local excess = count - actionCount - max
  if excess < 0 then return end
  -- From the oldest: the first excess records without an action id go; the next one is the floor.
  local doomed, floor, start = {}, nil, 1
  while floor == nil do
    local chunk = call('ZRANGE', key, format('%d', start), format('%d', start + excess + 15), 'WITHSCORES')
    if #chunk == 0 then break end
    for j = 1, #chunk, 2 do
      if not isAction(chunk[j]) and string.byte(chunk[j]) ~= 35 then -- nor the mark, '#'
        if #doomed < excess then doomed[#doomed + 1] = chunk[j] else floor = chunk[j + 1] break end
      end
    end
    start = start + #chunk / 2
  end
  if floor == nil then return end
  removeAll('ZREM', key, doomed)
  local blocked = {}
  for _, member in ipairs(call('ZRANGEBYSCORE', actions, '-inf', floor)) do
    if string.byte(member) == 45 then blocked[#blocked + 1] = member end
  end
  if #blocked > 0 then
    removeAll('ZREM', key, blocked)
    removeAll('ZREM', actions, blocked)
  end
end

-- The call's rules, read once: the rule at offset o has its max at rules[o + rule_max]. The codec sends numbers
-- where numbers are read: a call with anything else fails as a whole. The first rule makes the table at its size.
local rulesAt = #ARGV - rule_width * ARGV[1]
local rules = {
  ARGV[rulesAt + rule_interval] + 0, ARGV[rulesAt + rule_max] + 0, ARGV[rulesAt + rule_gap] + 0,
  ARGV[rulesAt + rule_countBlocked] == '1', ARGV[rulesAt + rule_ttl],
  ARGV[rulesAt + rule_countsCost] == '1',
}
local anyCostTier = rules[rule_countsCost]
for o = rule_width, #ARGV - rulesAt - 1, rule_width do
  local a = rulesAt + o
  -- One field at a time, in order (Lua assigns a multiple assignment from its last target): the table grows as an
  -- array, never through its hash part.
  rules[o + rule_interval] = ARGV[a + rule_interval] + 0
  rules[o + rule_max] = ARGV[a + rule_max] + 0
  rules[o + rule_gap] = ARGV[a + rule_gap] + 0
  rules[o + rule_countBlocked] = ARGV[a + rule_countBlocked] == '1'
  rules[o + rule_ttl] = ARGV[a + rule_ttl]
  rules[o + rule_countsCost] = ARGV[a + rule_countsCost] == '1'
  anyCostTier = anyCostTier or rules[o + rule_countsCost]
end

-- The helpers of tiers that count cost, made only for a call whose rules have one. A tier's weights hold, beside
-- each record's cost by its member, four running sums that spare a decision walking its records:
--   total    the weight of every record of the key
--   anon     the weight of its records without an action id (a member that starts with neither '+' nor '-')
--   past     the weight of its records stamped at or before pastAt
--   pastAt   the latest cutoff an attempt has weighed, integer microseconds
-- and seal, the total they were last written with (every script that moves total moves seal alike).
-- W(S) is total less past, less or plus the records between pastAt and the cutoff; the flood bound trims from the
-- oldest while anon stays at least max. A decision reads the sums once (with the tier's first commands), checks
-- them (trusted), counts them again from the records where they cannot be trusted (recount), and keeps them in a
-- ledger (a table of the four, and of them as read) that it moves with every record it writes or removes; the
-- changed ones go back in one command (closeLedger).
local weightsOf, unweigh, trusted, recount, openLedger, closeLedger, weighedFloodBound, fitsAfterWeighed
if anyCostTier then
  -- The weights of members, in order, as numbers (0 where one has none), from a cost tier's weights.
  weightsOf = function(weights, members)
    local values = {}
    for j = 1, #members, 500 do
      local chunk = call('HMGET', weights, unpack(members, j, math.min(j + 499, #members)))
      for m = 1, #chunk do values[j + m - 1] = tonumber(chunk[m]) or 0 end
    end
    return values
  end

  -- The weight of the records of a key with a score in a range, its bounds as ZRANGEBYSCORE reads them, and how many.
  local function weightBetween(weights, key, from, to)
    local members, sum = call('ZRANGEBYSCORE', key, from, to), 0
    if #members > 0 then
      for _, w in ipairs(weightsOf(weights, members)) do sum = sum + w end
    end
    return sum, #members
  end

  -- Forgets the weights of records that leave a cost tier's key (members, with their stamps), in its ledger's sums
  -- too; returns the weights.
  unweigh = function(weights, ledger, members, stamps)
    if #members == 0 then return {} end
    local values, pastAt = weightsOf(weights, members), ledger.pastAt
    for j = 1, #members do
      local w = values[j]
      ledger.total = ledger.total - w
      if not isAction(members[j]) then ledger.anon = ledger.anon - w end
      if pastAt and stamps[j] <= pastAt then ledger.past = ledger.past - w end
    end
    removeAll('HDEL', weights, members)
    return values
  end

  -- A whole number from 0 to SUM_LIMIT, or nil.
  local function sumOf(text)
    local value = tonumber(text)
    if value and value >= 0 and value <= SUM_LIMIT and value == math.floor(value) then return value end
    return nil
  end

  -- Whether a cost tier's sums as read (HMGET of the four and seal) can be trusted: none on a key that holds no
  -- records (but its mark, where marked), or all of them whole numbers that agree with each other (seal equal to
  -- total, anon and past at most total, pastAt no later than now plus the key's horizon, in microseconds: a call
  -- in flight may be stamped before a cutoff already weighed, never by more). A hash lost (deleted, evicted, expired
  -- apart from its key) beside records, or written by another hand, fails one of these.
  trusted = function(sums, now, horizonUs, key, marked)
    if not (sums[1] or sums[2] or sums[3] or sums[4] or sums[5]) then return call('ZCARD', key) == (marked and 1 or 0) end
    local total, anon, past = sumOf(sums[1]), sumOf(sums[2]), sumOf(sums[3])
    if not (total and anon and past and sums[5] == sums[1] and anon <= total and past <= total) then return false end
    return not sums[4] or (tonumber(sums[4]) or math.huge) <= now + horizonUs
  end

  -- Counts a cost tier's sums again from its records (pastAt at the cutoff, given as text), as trusted would find
  -- them: a record without a readable weight weighs max, the most one action may (never less than it may have).
  -- An attempt writes the weights anew, with the sums, and their TTL (ttl, milliseconds as text); a dry run only
  -- reads. Returns the sums as HMGET reads them.
  recount = function(key, weights, max, cutoffText, record, ttl)
    local all = call('ZRANGE', key, '0', '-1', 'WITHSCORES')
    local at, members, values, total, anon, past = cutoffText + 0, {}, {}, 0, 0, 0
    for j = 1, #all, 2 do
      if string.byte(all[j]) ~= 35 then
        members[#members + 1] = all[j]
        local stamp = all[j + 1] + 0
        local w = sumOf(call('HGET', weights, all[j]))
        if w == nil or w > max then w = max end
        values[#values + 1] = w
        total = total + w
        if not isAction(all[j]) then anon = anon + w end
        if stamp <= at then past = past + w end
      end
    end
    local sums = { format('%d', total), format('%d', anon), format('%d', past), cutoffText, format('%d', total) }
    if record then
      call('DEL', weights)
      for j = 1, #members, 250 do
        local fields = {}
        for m = j, math.min(j + 249, #members) do fields[#fields + 1], fields[#fields + 2] = members[m], format('%d', values[m]) end
        call('HSET', weights, unpack(fields))
      end
      call('HSET', weights, 'total', sums[1], 'anon', sums[2], 'past', sums[3], 'pastAt', sums[4], 'seal', sums[5])
      call('PEXPIRE', weights, ttl)
    end
    return sums
  end

  -- Opens a cost tier's weights for a decision, from its sums as read (trusted, or counted again): forgets what an
  -- attempt forgets (step 1: the records stamped at or before upTo), and returns W(S) (the records after the cutoff),
  -- how many it forgot, and the ledger. An attempt moves pastAt up to its cutoff when records lie between the two (or
  -- there was none), adding them; a dry run's ledger is only read.
  openLedger = function(key, weights, sums, cutoff, upTo, record)
    local total, anon, past, pastAt = tonumber(sums[1]), tonumber(sums[2]), tonumber(sums[3]), tonumber(sums[4])
    -- As the decision leaves them, and as read (nil: missing).
    local ledger = {
      total = total or 0, anon = anon or 0, past = past or 0, pastAt = pastAt,
      readTotal = total, readAnon = anon, readPast = past, readPastAt = pastAt, existed = total ~= nil,
    }
    local dropped = 0
    if record then
      local forgotten = call('ZRANGEBYSCORE', key, STAMPS_FROM, upTo, 'WITHSCORES')
      if #forgotten > 0 then
        local members, stamps = {}, {}
        for j = 1, #forgotten, 2 do members[#members + 1], stamps[#stamps + 1] = forgotten[j], forgotten[j + 1] + 0 end
        unweigh(weights, ledger, members, stamps)
        call('ZREMRANGEBYSCORE', key, STAMPS_FROM, upTo)
        dropped = #members
      end
    end
    local atText = cutoff:sub(2)
    local at = atText + 0
    if pastAt == nil or at > pastAt then
      local crossed, count = weightBetween(weights, key, pastAt and '(' .. sums[4] or STAMPS_FROM, atText)
      local inWindow = ledger.total - ledger.past - crossed
      if record and (count > 0 or pastAt == nil) then ledger.past, ledger.pastAt = ledger.past + crossed, at end
      return inWindow, dropped, ledger
    end
    -- A cutoff before pastAt (a call stamped earlier than one already weighed): the records in between count.
    return ledger.total - ledger.past + weightBetween(weights, key, cutoff, sums[4]), dropped, ledger
  end

  -- Writes the sums an attempt changed back to its tier's weights, in one command: all four when past moved (most
  -- attempts move total and anon only).
  closeLedger = function(weights, ledger)
    local total, anon = format('%d', ledger.total), format('%d', ledger.anon)
    if ledger.past ~= ledger.readPast or ledger.pastAt ~= ledger.readPastAt then
      call('HSET', weights, 'total', total, 'anon', anon, 'past', format('%d', ledger.past), 'pastAt', format('%d', ledger.pastAt), 'seal', total)
    elseif ledger.total ~= ledger.readTotal or ledger.anon ~= ledger.readAnon then
      call('HSET', weights, 'total', total, 'anon', anon, 'seal', total)
    end
  end

  -- The flood bound of a tier that counts cost: the same rule with weights. The floor is the newest record without
  -- an action id at which those records, from the newest, weigh max; the records without an action id older than it
  -- go, and the blocked actions at or before its stamp. Those records are never undone or settled, so every window
  -- that held what went holds them too, and blocks. Found from the oldest with anon: a record goes while the rest of
  -- them still weigh max, so a run reads what it removes, the floor, and the actions older than the floor (whose
  -- weights it does not read: a flood of blocked requests leaves the admitted ones at the oldest ranks, bench case
  -- 'flood-single-use'). Returns the weight it removed from the window after the cutoff (a wait then walks what is
  -- left: the same stamp).
  weighedFloodBound = function(key, actions, weights, ledger, max, cutoff)
    local anon = ledger.anon
    if anon <= max then return 0 end
    local doomed, stamps, floor, rank, size = {}, {}, nil, 1, 4 -- rank 0: the mark
    while floor == nil do
      local chunk = call('ZRANGE', key, format('%d', rank), format('%d', rank + size - 1), 'WITHSCORES')
      if #chunk == 0 then break end
      -- The records without an action id in the chunk (nor the mark, '#'), and their stamps and weights.
      local members, at = {}, {}
      for j = 1, #chunk, 2 do
        if not isAction(chunk[j]) and string.byte(chunk[j]) ~= 35 then members[#members + 1], at[#at + 1] = chunk[j], chunk[j + 1] end
      end
      local values = #members > 0 and weightsOf(weights, members) or members
      for j = 1, #members do
        if anon - values[j] < max then
          floor = at[j]
          break
        end
        anon = anon - values[j]
        doomed[#doomed + 1], stamps[#stamps + 1] = members[j], at[j] + 0
      end
      rank, size = rank + #chunk / 2, math.min(2 * size, 64)
    end
    -- No floor: anon disagrees with the records (it never should); keeping everything is always safe.
    if floor == nil then return 0 end
    local recorded = tryCall('ZRANGEBYSCORE', actions, '-inf', floor, 'WITHSCORES')
    if type(recorded) == 'table' then
      local blocked = {}
      for j = 1, #recorded, 2 do
        if string.byte(recorded[j]) == 45 then
          blocked[#blocked + 1] = recorded[j]
          doomed[#doomed + 1], stamps[#stamps + 1] = recorded[j], recorded[j + 1] + 0
        end
      end
      removeAll('ZREM', actions, blocked)
    end
    local values, after, removed = unweigh(weights, ledger, doomed, stamps), cutoff:sub(2) + 0, 0
    removeAll('ZREM', key, doomed)
    for j = 1, #doomed do
      if stamps[j] > after then removed = removed + values[j] end
    end
    return removed
  end

  -- fitsAfter of a cost tier: walking S' (weight in all) from its oldest, the stamp at which the rest weighs at most
  -- target; pending is the weight of an attempt not stored (a dry run's), at its stamp at, after records of that
  -- stamp. By rank, from the first record in the window, in chunks of 4 that double up to 64: most walks stop at
  -- the first record or two.
  fitsAfterWeighed = function(key, weights, cutoff, weight, target, pending, at)
    local rank, size = call('ZCOUNT', key, '-inf', cutoff:sub(2)), 4 -- the mark's rank too
    while true do
      local chunk = call('ZRANGE', key, format('%d', rank), format('%d', rank + size - 1), 'WITHSCORES')
      if #chunk == 0 then break end
      local members = {}
      for j = 1, #chunk, 2 do members[#members + 1] = chunk[j] end
      local values = weightsOf(weights, members)
      for j = 1, #members do
        local stamp = chunk[2 * j] + 0
        if pending and at < stamp then
          weight, pending = weight - pending, nil
          if weight <= target then return at end
        end
        weight = weight - values[j]
        if weight <= target then return stamp end
      end
      rank, size = rank + #members, math.min(2 * size, 64)
    end
    if pending then return at end
    return -1
  end
end

local reply, r = {}, 0
-- Redis TIME, as a number and as text, read by the first decision that asks for it.
local redisNow, redisNowText
-- A key's TTL is set after the call's last command on it: Redis deletes a key at once when a PEXPIRE inside a script
-- names a moment the script has already run past, so a TTL of a few milliseconds could be gone by the next decision
-- on the key. A tier whose interval is ten seconds or more takes its TTL at once (no script runs that long: Redis
-- answers BUSY to every other client after five); a shorter one, unless its decision is the call's last, takes it
-- here, at the end of the call.
local LONG_INTERVAL = 10000000
local ttlAtEnd
-- What the general path holds of each tier of the decision at hand, by tier, in arrays made once per call, by the
-- first decision that takes it (reading one at a tier is one instruction of Lua). Read first, for every tier: its
-- first key, its rule's offset, the cutoff and forget stamps, the key's horizon and the one its mark held, |S|, and a
-- cost tier's sums as read or counted again (false on a tier that counts actions), which become its ledger; then whether the key held records, and max(S). Only a tier that
-- counts cost has a cost and W(S), in arrays made only for a call that has one (every attempt weighs 1 on a tier
-- that counts actions, and |S| is its weight).
local keyOf, ruleOf, cutoffOf, forgetOf, horizonOf, markedOf, countOf, heldOf, newestOf, ledgerOf, costOf, weightOf

local k0, a0 = 0, 1
while a0 < rulesAt do
  local tiers, nowText, member, actionId = ARGV[a0 + header_tiers], ARGV[a0 + header_now], ARGV[a0 + header_member], ARGV[a0 + header_actionId]
  local n = tiers == '1' and 1 or tiers + 0
  local t0 = a0 + header_width
  local o = ARGV[t0 + tier_rule] + 0
  local max = rules[o + rule_max] -- the first tier's

  if n == 1 and member ~= '' and actionId == '' and nowText ~= '' and rules[o + rule_gap] == 0 and max > 1 and not (anyCostTier and rules[o + rule_countsCost]) then
    ---------------------------------------------------------------------------------------------------------------
    -- The short path: one tier, an attempt without an action id, on the caller's clock, under a rule that counts
    -- actions with no gap and a max above 1, which never reads max(S). The steps of the general path below, less
    -- what such a decision never takes; most decisions are of this kind.
    local last = t0 + tier_width - 1 >= rulesAt -- the call's last decision: nothing after it uses its keys
    local key, actions, countBlocked = KEYS[k0 + keys_key], KEYS[k0 + keys_actions], rules[o + rule_countBlocked]
    -- The key's mark, which tells its type too, and its horizon: the longest of its writers' and this one's.
    local markedTtl = markedHorizon(key, MARK_OF_ACTIONS, MARK_OF_COST)
    local ttl = rules[o + rule_ttl]
    if markedTtl == false then
      reply[r + 1], r = WRONG_TYPE, r + 1
    elseif markedTtl == nil then
      reply[r + 1], r = OTHER_KIND, r + 1
    else
      local horizon = math.max(markedTtl, ttl + 0)
      -- |S|: the records stamped after the cutoff, those stamped after now included (they arrived first).
      local count = call('ZCOUNT', key, ARGV[t0 + tier_cutoff], '+inf')
      -- Step 1: forget the records stamped at or before now less the horizon, from the companion too, so that it
      -- never holds a record the key no longer does.
      local upTo = format('%d', nowText - 1000 * horizon)
      local dropped = call('ZREMRANGEBYSCORE', key, STAMPS_FROM, upTo)
      if dropped > 0 then tryCall('ZREMRANGEBYSCORE', actions, '-inf', upTo) end
      local held = dropped > 0 or count > 0
      local passes = count < max
      local countAfter = count
      if passes or countBlocked then
        if markedTtl < ttl + 0 then call('ZADD', key, ttl, MARK_OF_ACTIONS) end
        countAfter = count + call('ZADD', key, nowText, member)
        if countAfter > max then floodBound(key, actions, max, countAfter) end
        -- The companion outlives its key wherever the flood bound may read it: a rule that counts blocked attempts,
        -- on a key that held records (a new key's companion holds nothing the key does; one that held only records
        -- between the two cutoffs keeps them out of every window the flood bound can act on).
        local companion = countBlocked and held
        local keyTtl, actionTtl = format('%d', horizon), format('%d', horizon + 1)
        if last or rules[o + rule_interval] >= LONG_INTERVAL then
          call('PEXPIRE', key, keyTtl)
          if companion then call('PEXPIRE', actions, actionTtl) end
        else
          ttlAtEnd = ttlAtEnd or {}
          ttlAtEnd[key] = keyTtl
          if companion then ttlAtEnd[actions] = actionTtl end
        end
      end
      reply[r + 1], reply[r + 2], reply[r + 3], r = passes and ALLOWED or BLOCKED, count, countAfter, r + 3
      if countAfter >= max then reply[r + 1], r = scoreAt(key, format('%d', -max)), r + 1 end
    end
    k0, a0 = k0 + keys_width - 1, t0 + tier_width - 1
  else
    ---------------------------------------------------------------------------------------------------------------
    -- The general path.
    if keyOf == nil then
      -- Each made at the size of a stack of three tiers (per second, minute and day): filling them grows none.
      keyOf, ruleOf, cutoffOf, forgetOf = { false, false, false }, { false, false, false }, { false, false, false }, { false, false, false }
      horizonOf, markedOf = { false, false, false }, { false, false, false }
      countOf, heldOf, newestOf = { false, false, false }, { false, false, false }, { false, false, false }
      if anyCostTier then ledgerOf, costOf, weightOf = { false, false, false }, { false, false, false }, { false, false, false } end
    end
    local record = member ~= '' or actionId ~= ''
    local redisClock = nowText == ''
    local now -- the stamp as a number, read where a decision needs one
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

    -- Each tier's rule, cost, horizon and |S|, and where its keys and fields are (a tier that counts cost has one
    -- more of each). The first commands on each key tell a key of another type, or of a rule of the other kind,
    -- before anything is written: the decision then fails alone (the places of the rest are still read, for the
    -- next decision). A tier that counts cost checks its sums, and counts them again where they cannot be trusted.
    now = now or nowText + 0
    local failed, k, t = false, k0, t0
    for i = 1, n do
      local ro = ARGV[t + tier_rule] + 0
      local weighed = anyCostTier and rules[ro + rule_countsCost]
      if not failed then
        local key, weights, ttl = KEYS[k + keys_key], KEYS[k + keys_weights], rules[ro + rule_ttl]
        local markedTtl = markedHorizon(key, weighed and MARK_OF_COST or MARK_OF_ACTIONS, weighed and MARK_OF_ACTIONS or MARK_OF_COST)
        -- On Redis's clock the call is stamped as it runs; either way it keeps what a call in flight may count, for
        -- the key's horizon.
        local cutoff = redisClock and '(' .. format('%d', now - rules[ro + rule_interval]) or ARGV[t + tier_cutoff]
        local horizon = math.max(markedTtl or 0, ttl + 0)
        local count, sums
        if markedTtl == false or (actionId ~= '' and type(tryCall('ZCARD', KEYS[k + keys_actions])) ~= 'number') then
          failed = WRONG_TYPE
        elseif markedTtl == nil then
          failed = OTHER_KIND
        else
          count = call('ZCOUNT', key, cutoff, '+inf')
          -- A tier that counts cost reads its weights' sums here, which tells their type too.
          sums = weighed and tryCall('HMGET', weights, 'total', 'anon', 'past', 'pastAt', 'seal')
          if weighed and sums.err then
            failed = WRONG_TYPE
          elseif weighed and not trusted(sums, now, 1000 * horizon, key, markedTtl > 0) then
            sums = recount(key, weights, rules[ro + rule_max], cutoff:sub(2), record, format('%d', horizon))
          end
        end
        keyOf[i], ruleOf[i], cutoffOf[i], forgetOf[i], countOf[i] = k, ro, cutoff, format('%d', now - 1000 * horizon), count
        horizonOf[i], markedOf[i] = horizon, markedTtl
        if anyCostTier then
          ledgerOf[i] = sums
          if weighed then costOf[i] = ARGV[t + tier_cost] + 0 end
        end
      end
      if weighed then
        k, t = k + keys_width, t + tier_width
      else
        k, t = k + keys_width - 1, t + tier_width - 1
      end
    end
    local last = t >= rulesAt -- the call's last decision: nothing after it uses its keys

    if failed then
      reply[r + 1], r = failed, r + 1
      if redisClock then reply[r + 1], r = now, r + 1 end
    else
      -- Steps 1 to 4 per tier: forget what no call in flight can count (an attempt only), weigh S on a tier that
      -- counts cost, read max(S) where a gap rule or a max of 1 needs it, and judge. A retry is an action whose
      -- admitted record is in a tier's window.
      local replayed, passes, tooHeavy = false, true, false
      for i = 1, n do
        local k, ro, count, sums = keyOf[i], ruleOf[i], countOf[i], anyCostTier and ledgerOf[i]
        local key, max, gap = KEYS[k + keys_key], rules[ro + rule_max], rules[ro + rule_gap]
        -- What S weighs with the attempt: |S| and 1, or W(S) and its cost on a tier that counts cost.
        local weighedWith, dropped = count + 1, 0
        if sums then
          local weight, ledger
          weight, dropped, ledger = openLedger(key, KEYS[k + keys_weights], sums, cutoffOf[i], forgetOf[i], record)
          ledgerOf[i], weightOf[i] = ledger, weight
          weighedWith = weight + costOf[i]
          if dropped > 0 then tryCall('ZREMRANGEBYSCORE', KEYS[k + keys_actions], '-inf', forgetOf[i]) end
          if record and ledger.total + costOf[i] > SUM_LIMIT then tooHeavy = true end
        elseif record then
          -- As on the short path (a tier that counts cost forgets in openLedger).
          dropped = call('ZREMRANGEBYSCORE', key, STAMPS_FROM, forgetOf[i])
          if dropped > 0 then tryCall('ZREMRANGEBYSCORE', KEYS[k + keys_actions], '-inf', forgetOf[i]) end
        end
        heldOf[i] = dropped > 0 or count > 0
        if actionId ~= '' then
          local admittedAt = call('ZSCORE', key, '+' .. actionId)
          if admittedAt and admittedAt + 0 > cutoffOf[i]:sub(2) + 0 then replayed = true end
        end
        local newest = -1
        if count > 0 and (gap > 0 or (max == 1 and not sums)) then
          newest, now = scoreAt(key, '-1'), now or nowText + 0
        end
        newestOf[i] = newest
        if weighedWith > max or (gap > 0 and newest >= 0 and now - newest < gap) then passes = false end
      end
      if tooHeavy then
        -- Recording would make a key's records weigh more than their sums count exactly (SUM_LIMIT): the decision
        -- fails alone, keeping only what it forgot (the sums written back as forgetting left them).
        reply[r + 1], r = TOO_HEAVY, r + 1
        if redisClock then reply[r + 1], r = now, r + 1 end
        for i = 1, n do
          local ledger = anyCostTier and ledgerOf[i]
          if ledger and ledger.existed then closeLedger(KEYS[keyOf[i] + keys_weights], ledger) end
        end
      else
        reply[r + 1], r = replayed and ALREADY_ADMITTED or passes and ALLOWED or BLOCKED, r + 1
        if redisClock then reply[r + 1], r = now, r + 1 end
        -- An action's record is named by its action id: '+' admitted, '-' blocked; a blocked attempt whose action id
        -- is single-use is recorded as one without an action id (no retry will look for it, and the flood bound may
        -- trim it).
        if actionId ~= '' and (passes or member == '') then member = (passes and '+' or '-') .. actionId end

        -- Step 5 per tier, and what steps 6 and 7 need of S'.
        for i = 1, n do
          local k, ro, count, newest, ledger = keyOf[i], ruleOf[i], countOf[i], newestOf[i], anyCostTier and ledgerOf[i]
          local key, actions, max = KEYS[k + keys_key], KEYS[k + keys_actions], rules[ro + rule_max]
          -- A tier that counts cost: its weights, W(S), the attempt's cost and the cutoff.
          local weights, weight, cost, cutoff
          if ledger then
            weights, weight, cost, cutoff = KEYS[k + keys_weights], weightOf[i], costOf[i], cutoffOf[i]
          end
          local readsNewest = rules[ro + rule_gap] > 0 or (max == 1 and not ledger)
          if not record and not ledger then
            -- A dry run: the (k-1)-th and k-th newest of S.
            local nearlyFull, full, kMinus1thNewest, kthNewest = max > 1 and count >= max - 1, count >= max, -1, -1
            if max == 1 then
              kthNewest = newest
            elseif nearlyFull then
              local pair = call('ZRANGE', key, format('%d', -max), format('%d', 1 - max), 'WITHSCORES')
              kMinus1thNewest, kthNewest = pair[#pair] + 0, pair[2] + 0
            end
            reply[r + 1], r = count, r + 1
            if readsNewest then reply[r + 1], r = newest, r + 1 end
            if nearlyFull then reply[r + 1], r = kMinus1thNewest, r + 1 end
            if full then reply[r + 1], r = kthNewest, r + 1 end
          elseif not record then
            -- A dry run on a tier that counts cost: S' as the attempt would leave it, weighed.
            local weightAfter, newestAfter, pending = weight, newest, nil
            if passes or rules[ro + rule_countBlocked] then
              now = now or nowText + 0
              weightAfter, pending = weight + cost, cost
              if now > newestAfter then newestAfter = now end
            end
            reply[r + 1], reply[r + 2], r = weight, weightAfter, r + 2
            if readsNewest then reply[r + 1], reply[r + 2], r = newest, newestAfter, r + 2 end
            if weightAfter > max - cost then
              reply[r + 1], r = fitsAfterWeighed(key, weights, cutoff, weightAfter, max - cost, pending, now), r + 1
            end
          else
            local countAfter, newestAfter = count, newest
            -- On a tier that counts cost, what S' weighs, and what a wait walks: W(S') less what the flood bound
            -- removed of it.
            local weightAfter, walked = weight, nil
            if not replayed and (passes or rules[ro + rule_countBlocked]) then
              if isAction(member) then
                -- The action is recorded once: its earlier blocked record is replaced (it counted if in the window).
                local blocked = '-' .. actionId
                local blockedAt = call('ZSCORE', key, blocked)
                if blockedAt then
                  local inWindow = blockedAt + 0 > cutoffOf[i]:sub(2) + 0
                  if inWindow then countAfter = countAfter - 1 end
                  if weights then
                    local blockedWeight = unweigh(weights, ledger, { blocked }, { blockedAt + 0 })[1]
                    if inWindow then weightAfter = weightAfter - blockedWeight end
                  end
                  call('ZREM', key, blocked)
                end
                call('ZREM', actions, blocked)
                -- An earlier admitted record of the action has left the window (or this would be a retry): it keeps
                -- counting for the calls still in flight, without its action id (and with its weight).
                local admittedAt = passes and call('ZSCORE', key, member)
                if admittedAt then
                  local renamed = '=' .. admittedAt .. member
                  call('ZREM', key, member)
                  call('ZREM', actions, member)
                  call('ZADD', key, admittedAt, renamed)
                  if weights then
                    local admittedWeight = call('HGET', weights, member)
                    if admittedWeight then
                      call('HDEL', weights, member)
                      call('HSET', weights, renamed, admittedWeight)
                      -- Without its action id the record is one of anon's.
                      ledger.anon = ledger.anon + admittedWeight
                    end
                  end
                end
                call('ZADD', actions, nowText, member)
              end
              -- The key's mark keeps the longest horizon of its writers.
              if markedOf[i] < rules[ro + rule_ttl] + 0 then call('ZADD', key, rules[ro + rule_ttl], weights and MARK_OF_COST or MARK_OF_ACTIONS) end
              local added = call('ZADD', key, nowText, member)
              countAfter = countAfter + added
              if weights then
                if added == 1 then
                  now = now or nowText + 0
                  -- The record's weight, in its ledger's sums too.
                  call('HSET', weights, member, format('%d', cost))
                  ledger.total = ledger.total + cost
                  if not isAction(member) then ledger.anon = ledger.anon + cost end
                  if ledger.pastAt and now <= ledger.pastAt then ledger.past = ledger.past + cost end
                  weightAfter = weightAfter + cost
                end
                if not passes and weightAfter > max then
                  walked = weightAfter - weighedFloodBound(key, actions, weights, ledger, max, cutoff)
                end
              elseif countAfter > max then
                -- The flood bound keeps the newest max records of the window, and more: |S'| stays at least max.
                floodBound(key, actions, max, countAfter)
              end
              if readsNewest then
                if actionId ~= '' then
                  newestAfter = countAfter > 0 and scoreAt(key, '-1') or -1
                else
                  now = now or nowText + 0
                  if now > newestAfter then newestAfter = now end
                end
              end
              -- The companion outlives its key wherever the flood bound may read it (a rule that counts blocked
              -- attempts, on a key that held records) or this decision wrote to it. The weights live as the key does.
              local ttl = format('%d', horizonOf[i])
              local actionTtl = (actionId ~= '' or rules[ro + rule_countBlocked] and heldOf[i]) and format('%d', horizonOf[i] + 1)
              if (last and n == 1) or rules[ro + rule_interval] >= LONG_INTERVAL then
                call('PEXPIRE', key, ttl)
                if actionTtl then call('PEXPIRE', actions, actionTtl) end
                if weights then call('PEXPIRE', weights, ttl) end
              else
                ttlAtEnd = ttlAtEnd or {}
                ttlAtEnd[key] = ttl
                if actionTtl then ttlAtEnd[actions] = actionTtl end
                if weights then ttlAtEnd[weights] = ttl end
              end
            end
            if weights then
              -- The sums, once: on weights that exist, or that this attempt made.
              if ledger.existed or weightAfter ~= weight then closeLedger(weights, ledger) end
              reply[r + 1], reply[r + 2], r = weight, weightAfter, r + 2
              if readsNewest then reply[r + 1], reply[r + 2], r = newest, newestAfter, r + 2 end
              if weightAfter > max - cost then
                reply[r + 1], r = fitsAfterWeighed(key, weights, cutoff, walked or weightAfter, max - cost, nil, 0), r + 1
              end
            else
              reply[r + 1], reply[r + 2], r = count, countAfter, r + 2
              if readsNewest then reply[r + 1], reply[r + 2], r = newest, newestAfter, r + 2 end
              if countAfter >= max then
                reply[r + 1], r = max == 1 and newestAfter or scoreAt(key, format('%d', -max)), r + 1
              end
            end
          end
        end
      end
    end
    k0, a0 = k, t
  end
end

if ttlAtEnd then
  for key, ttl in pairs(ttlAtEnd) do call('PEXPIRE', key, ttl) end
end

return reply
`,
);
