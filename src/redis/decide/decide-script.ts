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
--              whose action id was admitted again after it left the window)
--   actions    the key's companion: a copy of its records that carry an action id ('+' and '-')
--   weights    a tier that counts cost: a hash of each record's cost by its member, and their sum under 'total'
-- ARGV[1]: how many rules the call carries (the rules come last).
-- Then each decision: its header, then per tier its fields (a tier whose rule counts actions sends the first three):
--   header:
--     tiers      how many tiers the decision has
--     now        the stamp, integer microseconds; '' to read Redis TIME (once per call)
--     member     the attempt's member; '' for a dry run, or for an attempt with an action id
--     actionId   the attempt's action id; '' for none
--   per tier:
--     rule       where the tier's rule starts among the call's rules: 0, 7, 14...
--     cutoff     '(' and now - interval: the window's exclusive lower bound, as ZCOUNT reads it ('' on Redis's clock)
--     forget     now - interval - inFlight: a record at or before it is forgotten ('' on Redis's clock)
--     cost       a tier that counts cost: what the attempt weighs in it
-- Then the rules, each once however many decisions use it:
--     interval   microseconds
--     max        maxInInterval, or maxCostInInterval when the rule counts cost
--     gap        minDifference, microseconds
--     countBlocked  '1' or '0'
--     ttl        the key's TTL in milliseconds: interval + inFlight, rounded up (the weights' too)
--     actionTtl  the companion's: a millisecond more
--     countsCost  '1' when records weigh their cost, '0' when each weighs 1
--
-- Reply: integers, for each decision in order:
--   verdict      0 blocked, 1 allowed, 2 already admitted (a retry: nothing recorded), -1 a key holds another type
--                (the decision failed alone and wrote nothing)
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
-- after a call stamped later, and the records around it share windows with it. Records stay until the forget
-- stamp, and keys live ttl, so that a call in flight for up to inFlight still finds them. On a tier that counts
-- cost, W(S) is the weights' total less the records kept at or before the cutoff (few: those still in flight).
--
-- Numbers go to redis.call as text: Redis would print a Lua number with '%.17g', and Lua's own conversion keeps
-- 14 digits where a stamp has 16. A score read back becomes a number with + 0.

local BLOCKED, ALLOWED, ALREADY_ADMITTED, WRONG_TYPE = 0, 1, 2, -1
local header_tiers, header_now, header_member, header_actionId, header_width = 1, 2, 3, 4, 4
local keys_key, keys_actions, keys_weights, keys_width = 1, 2, 3, 3
local tier_rule, tier_cutoff, tier_forget, tier_cost, tier_width = 1, 2, 3, 4, 4
local rule_interval, rule_max, rule_gap, rule_countBlocked, rule_ttl, rule_actionTtl, rule_countsCost, rule_width = 1, 2, 3, 4, 5, 6, 7, 7

local ARGV, KEYS, type, format, call, tryCall = ARGV, KEYS, type, string.format, redis.call, redis.pcall

-- The score at a rank given as text (negative: from the newest), or -1 when there is none.
local function scoreAt(key, rank)
  local pair = call('ZRANGE', key, rank, rank, 'WITHSCORES')
  return pair[2] and pair[2] + 0 or -1
end

-- The flood bound (docs/semantics.md, "Memory per key"), after a write that left count records in the window
-- (more than max): keep what a later decision could still tell apart, whatever is undone or cleared later: every
-- admitted action, the newest max records without an action id, and the blocked actions newer than the max-th
-- newest of those. The key may hold more records than count (older ones, kept for calls in flight): a count too
-- small only keeps more.
local function floodBound(key, actions, max, count)
  local actionCount = tryCall('ZCARD', actions)
  if type(actionCount) ~= 'number' then return end
  if actionCount == 0 then
    call('ZREMRANGEBYRANK', key, '0', format('%d', -1 - max))
    return
  end
  -- At least this many records carry no action id (the companion holds a copy of every one that does).
  local excess = count - actionCount - max
  if excess < 0 then return end
  local function isAction(member)
    local first = string.byte(member)
    return first == 43 or first == 45 -- '+' or '-'
  end
  local function removeAll(from, members)
    for j = 1, #members, 500 do call('ZREM', from, unpack(members, j, math.min(j + 499, #members))) end
  end
  -- From the oldest: the first excess records without an action id go; the next one is the floor.
  local doomed, floor, start = {}, nil, 0
  while floor == nil do
    local chunk = call('ZRANGE', key, format('%d', start), format('%d', start + excess + 15), 'WITHSCORES')
    if #chunk == 0 then break end
    for j = 1, #chunk, 2 do
      if not isAction(chunk[j]) then
        if #doomed < excess then doomed[#doomed + 1] = chunk[j] else floor = chunk[j + 1] break end
      end
    end
    start = start + #chunk / 2
  end
  if floor == nil then return end
  removeAll(key, doomed)
  local blocked = {}
  for _, member in ipairs(call('ZRANGEBYSCORE', actions, '-inf', floor)) do
    if string.byte(member) == 45 then blocked[#blocked + 1] = member end
  end
  if #blocked > 0 then
    removeAll(key, blocked)
    removeAll(actions, blocked)
  end
end

-- The call's rules, read once: the rule at offset o has its max at rules[o + rule_max]. The codec sends numbers
-- where numbers are read: a call with anything else fails as a whole. The first rule makes the table at its size.
local rulesAt = #ARGV - rule_width * ARGV[1]
local rules = {
  ARGV[rulesAt + rule_interval] + 0, ARGV[rulesAt + rule_max] + 0, ARGV[rulesAt + rule_gap] + 0,
  ARGV[rulesAt + rule_countBlocked] == '1', ARGV[rulesAt + rule_ttl], ARGV[rulesAt + rule_actionTtl],
  ARGV[rulesAt + rule_countsCost] == '1',
}
local anyCostTier = rules[rule_countsCost]
for o = rule_width, #ARGV - rulesAt - 1, rule_width do
  local a = rulesAt + o
  rules[o + rule_interval], rules[o + rule_max], rules[o + rule_gap] = ARGV[a + rule_interval] + 0, ARGV[a + rule_max] + 0, ARGV[a + rule_gap] + 0
  rules[o + rule_countBlocked], rules[o + rule_ttl], rules[o + rule_actionTtl] = ARGV[a + rule_countBlocked] == '1', ARGV[a + rule_ttl], ARGV[a + rule_actionTtl]
  rules[o + rule_countsCost] = ARGV[a + rule_countsCost] == '1'
  anyCostTier = anyCostTier or rules[o + rule_countsCost]
end

-- The helpers of tiers that count cost, made only for a call whose rules have one.
local weightsOf, unweigh, weighedFloodBound, windowWeight, fitsAfterWeighed
if anyCostTier then
  -- Whether a member is an action's record: '+' (admitted) or '-' (blocked). Any other ('=' included) never changes.
  local function isAction(member)
    local first = string.byte(member)
    return first == 43 or first == 45
  end

  -- Removes members from a key (a sorted set, or a hash with command 'HDEL'), 500 at a time.
  local function removeAll(command, from, members)
    for j = 1, #members, 500 do call(command, from, unpack(members, j, math.min(j + 499, #members))) end
  end

  -- The weights of members, in order, as numbers (0 where one has none), from a cost tier's weights.
  weightsOf = function(weights, members)
    local values = {}
    for j = 1, #members, 500 do
      local chunk = call('HMGET', weights, unpack(members, j, math.min(j + 499, #members)))
      for m = 1, #chunk do values[j + m - 1] = tonumber(chunk[m]) or 0 end
    end
    return values
  end

  -- Forgets members of a cost tier's weights: their fields, and their part of the total.
  unweigh = function(weights, members)
    if #members == 0 then return end
    local gone = 0
    for _, weight in ipairs(weightsOf(weights, members)) do gone = gone + weight end
    removeAll('HDEL', weights, members)
    if gone ~= 0 then call('HINCRBY', weights, 'total', format('%d', -gone)) end
  end

  -- The flood bound of a tier that counts cost: the same rule with weights. From the newest, the records without an
  -- action id until they weigh max: the last of them is the floor; the records without an action id older than it
  -- go, and the blocked actions at or before its stamp. Those records are never undone or settled, so every window
  -- that held what went holds them too, and blocks. It runs once the key holds twice the records the last run kept,
  -- so that each record is read a bounded number of times however long an id keeps hammering.
  weighedFloodBound = function(key, actions, weights, max)
    local card = call('ZCARD', key)
    if card <= 2 * (tonumber(call('HGET', weights, 'kept')) or 0) + 16 then return end
    local seen, floor, floorRank, offset = 0, nil, nil, 0
    while floor == nil do
      local chunk = call('ZREVRANGE', key, format('%d', offset), format('%d', offset + 63), 'WITHSCORES')
      if #chunk == 0 then break end
      local members = {}
      for j = 1, #chunk, 2 do members[#members + 1] = chunk[j] end
      local values = weightsOf(weights, members)
      for j = 1, #members do
        if not isAction(members[j]) then
          seen = seen + values[j]
          if seen >= max then
            floor, floorRank = chunk[2 * j], card - 1 - (offset + j - 1)
            break
          end
        end
      end
      offset = offset + #members
    end
    local doomed = {}
    if floor ~= nil then
      if floorRank > 0 then
        for _, member in ipairs(call('ZRANGE', key, '0', format('%d', floorRank - 1))) do
          if not isAction(member) then doomed[#doomed + 1] = member end
        end
      end
      local blocked, recorded = {}, tryCall('ZRANGEBYSCORE', actions, '-inf', floor)
      if type(recorded) == 'table' then
        for _, member in ipairs(recorded) do
          if string.byte(member) == 45 then blocked[#blocked + 1] = member end
        end
      end
      if #blocked > 0 then removeAll('ZREM', actions, blocked) end
      for _, member in ipairs(blocked) do doomed[#doomed + 1] = member end
      unweigh(weights, doomed)
      removeAll('ZREM', key, doomed)
    end
    call('HSET', weights, 'kept', format('%d', card - #doomed))
  end

  -- W(S) of a cost tier with records in its window: the total, less the records kept at or before the cutoff.
  windowWeight = function(weights, key, cutoff)
    local weight = tonumber(call('HGET', weights, 'total')) or 0
    for _, w in ipairs(weightsOf(weights, call('ZRANGEBYSCORE', key, '-inf', cutoff:sub(2)))) do weight = weight - w end
    return weight
  end

  -- fitsAfter of a cost tier: walking S' (weight in all) from its oldest, the stamp at which the rest weighs at most
  -- target; pending is the weight of an attempt not stored (a dry run's), at its stamp at, after records of that
  -- stamp. By rank, from the first record in the window, in chunks of 4 that double up to 64: most walks stop at
  -- the first record or two.
  fitsAfterWeighed = function(key, weights, cutoff, weight, target, pending, at)
    local rank, size = call('ZCOUNT', key, '-inf', cutoff:sub(2)), 4
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

-- Step 1 for an attempt: forgets the records stamped at or before forget, from the companion (and the weights) too,
-- so that neither ever holds a record the key no longer does; returns how many it forgot.
local function forget(key, actions, weights, upTo)
  local dropped
  if weights then
    local members = call('ZRANGEBYSCORE', key, '-inf', upTo)
    dropped = #members
    if dropped > 0 then
      unweigh(weights, members)
      call('ZREMRANGEBYSCORE', key, '-inf', upTo)
    end
  else
    dropped = call('ZREMRANGEBYSCORE', key, '-inf', upTo)
  end
  if dropped > 0 then tryCall('ZREMRANGEBYSCORE', actions, '-inf', upTo) end
  return dropped
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
-- What the general path holds of each tier of the decision at hand, in flat arrays indexed by tier (made by the
-- first decision that takes it): where its keys and fields start, its rule, cost, |S| and W(S), and so on.
local keyOf, argOf, ruleOf, costOf, countOf, weightOf, heldOf, newestOf, cutoffOf, forgetOf

local k0, a0 = 0, 1
while a0 < rulesAt do
  local tiers, nowText, member, actionId = ARGV[a0 + header_tiers], ARGV[a0 + header_now], ARGV[a0 + header_member], ARGV[a0 + header_actionId]
  local n = tiers == '1' and 1 or tiers + 0
  local t0 = a0 + header_width
  local o = ARGV[t0 + tier_rule] + 0

  if n == 1 and member ~= '' and nowText ~= '' and rules[o + rule_gap] == 0 and rules[o + rule_max] > 1 and not rules[o + rule_countsCost] then
    ---------------------------------------------------------------------------------------------------------------
    -- The short path: one tier, an attempt without an action id, on the caller's clock, under a rule that counts
    -- actions with no gap and a max above 1, which never reads max(S) or the time as a number. The steps of the
    -- general path below, less what such a decision never takes; most decisions are of this kind.
    local last = t0 + tier_width - 1 >= rulesAt -- the call's last decision: nothing after it uses its keys
    local key, actions, max, countBlocked = KEYS[k0 + keys_key], KEYS[k0 + keys_actions], rules[o + rule_max], rules[o + rule_countBlocked]
    -- |S|: the records stamped after the cutoff, those stamped after now included (they arrived first).
    local count = tryCall('ZCOUNT', key, ARGV[t0 + tier_cutoff], '+inf')
    if type(count) ~= 'number' then
      reply[r + 1], r = WRONG_TYPE, r + 1
    else
      local held = forget(key, actions, nil, ARGV[t0 + tier_forget]) > 0 or count > 0
      local passes = count < max
      local countAfter = count
      if passes or countBlocked then
        countAfter = count + call('ZADD', key, nowText, member)
        if countAfter > max then floodBound(key, actions, max, countAfter) end
        -- The companion outlives its key wherever the flood bound may read it: a rule that counts blocked attempts,
        -- on a key that held records (a new key's companion holds nothing the key does; one that held only records
        -- between the two cutoffs keeps them out of every window the flood bound can act on).
        local companion = countBlocked and held
        if last or rules[o + rule_interval] >= LONG_INTERVAL then
          call('PEXPIRE', key, rules[o + rule_ttl])
          if companion then call('PEXPIRE', actions, rules[o + rule_actionTtl]) end
        else
          ttlAtEnd = ttlAtEnd or {}
          ttlAtEnd[key] = rules[o + rule_ttl]
          if companion then ttlAtEnd[actions] = rules[o + rule_actionTtl] end
        end
      end
      reply[r + 1], reply[r + 2], reply[r + 3], r = passes and ALLOWED or BLOCKED, count, countAfter, r + 3
      if countAfter >= max then reply[r + 1], r = scoreAt(key, format('%d', -max)), r + 1 end
    end
    k0, a0 = k0 + keys_width - 1, t0 + tier_width - 1
  else
    ---------------------------------------------------------------------------------------------------------------
    -- The general path.
    if ruleOf == nil then keyOf, argOf, ruleOf, costOf, countOf, weightOf, heldOf, newestOf, cutoffOf, forgetOf = {}, {}, {}, {}, {}, {}, {}, {}, {}, {} end
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

    -- Each tier's rule, cost and |S|, and where its keys and fields are (a tier that counts cost has one more of
    -- each). The first commands on each key tell a key of another type before anything is written: the decision
    -- then fails alone (the places of the rest are still read, for the next decision).
    local failed, k, t = false, k0, t0
    for i = 1, n do
      local ro = ARGV[t + tier_rule] + 0
      local weighed = rules[ro + rule_countsCost]
      if not failed then
        keyOf[i], argOf[i], ruleOf[i], costOf[i] = k, t, ro, weighed and ARGV[t + tier_cost] + 0 or 1
        local cutoff, upTo = ARGV[t + tier_cutoff], ARGV[t + tier_forget]
        -- On Redis's clock the call is stamped as it runs: never in flight, it forgets what left its window.
        if redisClock then
          upTo = format('%d', now - rules[ro + rule_interval])
          cutoff = '(' .. upTo
        end
        local count = tryCall('ZCOUNT', KEYS[k + keys_key], cutoff, '+inf')
        if
          type(count) ~= 'number'
          or (actionId ~= '' and type(tryCall('ZCARD', KEYS[k + keys_actions])) ~= 'number')
          or (weighed and type(tryCall('HLEN', KEYS[k + keys_weights])) ~= 'number')
        then
          failed = true
        end
        countOf[i], cutoffOf[i], forgetOf[i] = count, cutoff, upTo
      end
      if weighed then
        k, t = k + keys_width, t + tier_width
      else
        k, t = k + keys_width - 1, t + tier_width - 1
      end
    end
    local last = t >= rulesAt -- the call's last decision: nothing after it uses its keys

    if failed then
      reply[r + 1], r = WRONG_TYPE, r + 1
      if redisClock then reply[r + 1], r = now, r + 1 end
    else
      -- Steps 1 to 4 per tier: forget what no call in flight can count (an attempt only), weigh S on a tier that
      -- counts cost, read max(S) where a gap rule or a max of 1 needs it, and judge. A retry is an action whose
      -- admitted record is in a tier's window.
      local replayed, passes = false, true
      for i = 1, n do
        local k, ro, count = keyOf[i], ruleOf[i], countOf[i]
        local key, max, gap, countsCost = KEYS[k + keys_key], rules[ro + rule_max], rules[ro + rule_gap], rules[ro + rule_countsCost]
        local weights = countsCost and KEYS[k + keys_weights] or nil
        if record then heldOf[i] = forget(key, KEYS[k + keys_actions], weights, forgetOf[i]) > 0 or count > 0 end
        local weight = count
        if countsCost then weight = count > 0 and windowWeight(weights, key, cutoffOf[i]) or 0 end
        weightOf[i] = weight
        if actionId ~= '' then
          local admittedAt = call('ZSCORE', key, '+' .. actionId)
          if admittedAt and admittedAt + 0 > cutoffOf[i]:sub(2) + 0 then replayed = true end
        end
        local newest = -1
        if count > 0 and (gap > 0 or (max == 1 and not countsCost)) then
          newest, now = scoreAt(key, '-1'), now or nowText + 0
        end
        newestOf[i] = newest
        if weight + costOf[i] > max or (gap > 0 and newest >= 0 and now - newest < gap) then passes = false end
      end
      reply[r + 1], r = replayed and ALREADY_ADMITTED or passes and ALLOWED or BLOCKED, r + 1
      if redisClock then reply[r + 1], r = now, r + 1 end
      if actionId ~= '' then member = (passes and '+' or '-') .. actionId end

      -- Step 5 per tier, and what steps 6 and 7 need of S'.
      for i = 1, n do
        local k, ro, count, weight, newest, cost = keyOf[i], ruleOf[i], countOf[i], weightOf[i], newestOf[i], costOf[i]
        local key, actions, max, countsCost = KEYS[k + keys_key], KEYS[k + keys_actions], rules[ro + rule_max], rules[ro + rule_countsCost]
        local weights = countsCost and KEYS[k + keys_weights] or nil
        local readsNewest = rules[ro + rule_gap] > 0 or (max == 1 and not countsCost)
        if not record and not countsCost then
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
            reply[r + 1], r = fitsAfterWeighed(key, weights, cutoffOf[i], weightAfter, max - cost, pending, now), r + 1
          end
        else
          local countAfter, newestAfter = count, newest
          -- What the tier's S' weighs: |S'|, or W(S') on a tier that counts cost.
          local weightAfter = weight
          if not replayed and (passes or rules[ro + rule_countBlocked]) then
            if actionId ~= '' then
              -- The action is recorded once: its earlier blocked record is replaced (it counted if in the window).
              local blocked = '-' .. actionId
              local blockedAt = call('ZSCORE', key, blocked)
              if blockedAt then
                local blockedWeight = 1
                if weights then
                  blockedWeight = tonumber(call('HGET', weights, blocked)) or 0
                  unweigh(weights, { blocked })
                end
                call('ZREM', key, blocked)
                if blockedAt + 0 > cutoffOf[i]:sub(2) + 0 then
                  countAfter, weightAfter = countAfter - 1, weightAfter - blockedWeight
                end
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
                  end
                end
              end
              call('ZADD', actions, nowText, member)
            end
            local added = call('ZADD', key, nowText, member)
            countAfter = countAfter + added
            if weights then
              if added == 1 then
                call('HSET', weights, member, format('%d', cost))
                call('HINCRBY', weights, 'total', format('%d', cost))
                weightAfter = weightAfter + cost
              end
              if not passes and weightAfter > max then weighedFloodBound(key, actions, weights, max) end
            else
              weightAfter = countAfter
              -- The flood bound keeps the newest max records of the window, and more: |S'| stays at least max.
              if countAfter > max then floodBound(key, actions, max, countAfter) end
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
            local ttl, actionTtl = rules[ro + rule_ttl], (actionId ~= '' or rules[ro + rule_countBlocked] and heldOf[i]) and rules[ro + rule_actionTtl]
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
            reply[r + 1], reply[r + 2], r = weight, weightAfter, r + 2
            if readsNewest then reply[r + 1], reply[r + 2], r = newest, newestAfter, r + 2 end
            if weightAfter > max - cost then
              reply[r + 1], r = fitsAfterWeighed(key, weights, cutoffOf[i], weightAfter, max - cost, nil, 0), r + 1
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
    k0, a0 = k, t
  end
end

if ttlAtEnd then
  for key, ttl in pairs(ttlAtEnd) do call('PEXPIRE', key, ttl) end
end

return reply
`,
);
