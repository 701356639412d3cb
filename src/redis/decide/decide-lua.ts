/**
 * The decide script as the repository keeps it: every decision of every script mode (`countBlocked` either way,
 * stacked tiers, the Redis clock, action ids, dry runs), one or many per call (`batch: true`), each decided atomically
 * and exactly as if it had been sent alone, in the order given (docs/semantics.md: the steps, "Time in flight",
 * "Action ids, undo, clear", "Memory per key" and "Stacks"). Plain Lua, read top to bottom, in sections: helpers,
 * one per tier kind (tiers that count actions, tiers that count cost), action ids, the short path, and the decision
 * loop that dispatches to them. Its KEYS, ARGV and reply are named in its header, and decide-codec.ts writes and reads
 * them by the same names, in the same order (test/architecture/decide-contract.test.ts holds the lists equal).
 *
 * What Redis runs is this text without its comment lines and indentation (`leanLua`): decide-script.ts, written from
 * this file by `npm run build:lua` and pinned by its SHA1. No runtime code imports this module.
 */
export const DECIDE_LUA = `-- rolling-window-limiter: the decide script.
--
-- KEYS, per tier of each decision, in order (a tier whose rule counts actions sends the first two only):
--   key        the tier's sorted set of records (score: stamp in microseconds; member: a unique token,
--              '+<action id>' admitted, '-<action id>' recorded blocked, '=<stamp>+<action id>' an admitted record
--              whose action id was admitted again after it left the window), and its horizon mark: the member
--              '#count' (a rule that counts actions) or '#cost' (one that counts cost), scored with the longest
--              ttl in milliseconds any writer of the key has given it (below every stamp, so always at rank 0)
--   actions    the key's companion: a copy of its records that carry an action id ('+' and '-')
--   weights    a tier that counts cost: a hash of each record's cost by its member, and three sums ('live', 'anon'
--              and 'pastAt': see "Tiers that count cost" below)
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
--     forget     now - 1000 * ttl: the latest stamp this writer's horizon forgets ('' on Redis's clock)
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
-- then, unless it failed, per tier, by its kind (a value left out where its condition does not hold):
--   actions, an attempt:
--     count        |S|
--     countAfter   |S'|
--     newest       max(S), only where the rule has a gap or a max of 1
--     newestAfter  max(S'), as newest
--     fitsAfter    the max-th newest of S', only when countAfter >= max
--   actions, a dry run:
--     count        |S|
--     newest       as above
--     kMinus1thNewest  the (max-1)-th newest of S, only with max > 1 and count >= max - 1
--     kthNewest    the max-th newest of S, only when count >= max
--   cost, an attempt or a dry run:
--     count        W(S), the weight of S
--     countAfter   W(S'), S' with the attempt when it is, or would be, recorded
--     newest       max(S), only where the rule has a gap
--     newestAfter  max(S'), as newest
--     fitsAfter    only when countAfter > max - cost: the stamp of S' whose leaving lets an attempt of the same
--                  cost fit, walking S' from its oldest
-- A value that does not exist reads -1.
--
-- S is every record stamped after the cutoff, those stamped after now included: a call may reach Redis late, or
-- after a call stamped later, and the records around it share windows with it. Records stay until now less the
-- key's horizon, and keys live as long, so that a call in flight for up to any writer's inFlight still finds them,
-- whichever clock and timeout each writer has.
--
-- Numbers go to redis.call as text: Redis would print a Lua number with '%.17g', and Lua's own conversion keeps
-- 14 digits where a stamp has 16. A score read back becomes a number with + 0.
--
-- Where a shape is kept for what it saves, a comment names the case of bench/redis-cost.ts whose instruction count
-- (npm run bench:instructions) moves with it: the next change there is measured against it.

local BLOCKED, ALLOWED, ALREADY_ADMITTED, WRONG_TYPE, OTHER_KIND, TOO_HEAVY = 0, 1, 2, -1, -2, -3
local header_tiers, header_now, header_member, header_actionId, header_width = 1, 2, 3, 4, 4
local keys_key, keys_actions, keys_weights, keys_width = 1, 2, 3, 3
local tier_rule, tier_cutoff, tier_forget, tier_cost, tier_width = 1, 2, 3, 4, 4
local rule_interval, rule_max, rule_gap, rule_countBlocked, rule_ttl, rule_countsCost, rule_width = 1, 2, 3, 4, 5, 6, 6
-- No stamp is earlier than STAMPS_FROM (10^15 microseconds, in 2001): what is below it is the horizon mark, which
-- forgetting leaves alone. SUM_LIMIT (2^52) is the most a cost tier's sums may reach: every sum stays an exact
-- integer in Lua's numbers, with room to spare.
local STAMPS_FROM, SUM_LIMIT = '1000000000000000', 4503599627370496
local MARK_OF_ACTIONS, MARK_OF_COST = '#count', '#cost'
local ARGV, KEYS, type, format, call, tryCall = ARGV, KEYS, type, string.format, redis.call, redis.pcall

---------------------------------------------------------------------------------------------------------------------
-- The call. Every function and table the script makes is made anew by each call (a function costs about a
-- thousand instructions, more with each name it reads from outside: bench cases 'default path' and 'cost tier'):
-- the short path makes none; the sections after it are made only for a call that leaves it, a kind's steps only for
-- a call with a tier of that kind.

-- The call's rules, read once: the rule at offset o has its max at rules[o + rule_max], its ttl as a number at
-- rules[o + rule_ttl] (as text: ARGV[rulesAt + o + rule_ttl]). The codec sends numbers where numbers are read: a call
-- with anything else fails as a whole. The first rule makes the table at its size.
local rulesAt = #ARGV - rule_width * ARGV[1]
local rules = {
  ARGV[rulesAt + rule_interval] + 0, ARGV[rulesAt + rule_max] + 0, ARGV[rulesAt + rule_gap] + 0,
  ARGV[rulesAt + rule_countBlocked] == '1', ARGV[rulesAt + rule_ttl] + 0,
  ARGV[rulesAt + rule_countsCost] == '1',
}
local anyCostTier = rules[rule_countsCost]
local anyActionTier = not anyCostTier
for o = rule_width, #ARGV - rulesAt - 1, rule_width do
  local a = rulesAt + o
  -- One field at a time, in order (Lua assigns a multiple assignment from its last target): the table grows as an
  -- array, never through its hash part.
  rules[o + rule_interval] = ARGV[a + rule_interval] + 0
  rules[o + rule_max] = ARGV[a + rule_max] + 0
  rules[o + rule_gap] = ARGV[a + rule_gap] + 0
  rules[o + rule_countBlocked] = ARGV[a + rule_countBlocked] == '1'
  rules[o + rule_ttl] = ARGV[a + rule_ttl] + 0
  rules[o + rule_countsCost] = ARGV[a + rule_countsCost] == '1'
  anyCostTier = anyCostTier or rules[o + rule_countsCost]
  anyActionTier = anyActionTier or not rules[o + rule_countsCost]
end

local reply, r = {}, 0
-- The decision at hand: its stamp (as text, and as a number once one was needed), its member and action id, whether
-- it records (an attempt) and whether it is the call's last (nothing after it uses its keys); then its verdict so
-- far: every tier passes, the action was already admitted.
local nowText, now, member, actionId, record, last, passes, replayed
-- Redis TIME, as a number and as text, read by the first decision that asks for it.
local redisNow, redisNowText
-- A key's TTL is set after the call's last command on it: Redis deletes a key at once when a PEXPIRE inside a script
-- names a moment the script has already run past, so a TTL of a few milliseconds could be gone by the next decision
-- on the key. A tier whose interval is ten seconds or more takes its TTL at once (no script runs that long: Redis
-- answers BUSY to every other client after five); a shorter one, unless its decision is the call's last, takes it
-- at the end of the call.
local LONG_INTERVAL = 10000000
local ttlAtEnd

---------------------------------------------------------------------------------------------------------------------
-- The short path: one tier, an attempt without an action id, on the caller's clock, under a rule that counts actions
-- with no gap and a max above 1, which never reads max(S): most decisions. The call's decisions take it in order
-- until one does not, or would need the flood bound's walk (a key whose companion holds records); the decision loop
-- at the end decides the rest. It takes the steps of the general path less what such a decision never takes, and
-- needs nothing made for it: no function, no table (bench case 'default path').
local k0, a0 = 0, 1
while a0 < rulesAt do
  local tiers, nowText, member, actionId = ARGV[a0 + header_tiers], ARGV[a0 + header_now], ARGV[a0 + header_member], ARGV[a0 + header_actionId]
  local n = tiers == '1' and 1 or tiers + 0
  local t0 = a0 + header_width
  local o = ARGV[t0 + tier_rule] + 0
  local max = rules[o + rule_max] -- the first tier's
  if n == 1 and member ~= '' and actionId == '' and nowText ~= '' and rules[o + rule_gap] == 0 and max > 1 and not (anyCostTier and rules[o + rule_countsCost]) then
    local key, actions, countBlocked, ttl = KEYS[k0 + keys_key], KEYS[k0 + keys_actions], rules[o + rule_countBlocked], rules[o + rule_ttl]
    local ttlText, last = ARGV[rulesAt + o + rule_ttl], t0 + tier_width - 1 >= rulesAt
    -- The key's rank 0: its mark (which tells its type and kind too) and the horizon it holds, the longest of its
    -- writers' (as openTier reads it, below); nothing on a new key, which has nothing to count or forget.
    local first, marked = tryCall('ZRANGE', key, '0', '0', 'WITHSCORES'), 0
    if first[1] == MARK_OF_ACTIONS then marked = first[2] == ttlText and ttl or first[2] + 0 end
    local failed = first.err and WRONG_TYPE or first[1] == MARK_OF_COST and OTHER_KIND
    local horizon, count, dropped, companion = marked > ttl and marked or ttl, 0, 0, 0
    if first[1] and not failed then
      -- |S|: the records stamped after the cutoff, those stamped after now included (they arrived first); step 1:
      -- forget the records stamped at or before now less the horizon, from the companion too.
      count = call('ZCOUNT', key, ARGV[t0 + tier_cutoff], '+inf')
      local upTo = horizon == ttl and ARGV[t0 + tier_forget] or format('%d', nowText - 1000 * horizon)
      dropped = call('ZREMRANGEBYSCORE', key, STAMPS_FROM, upTo)
      if dropped > 0 then tryCall('ZREMRANGEBYSCORE', actions, '-inf', upTo) end
    end
    local passes = count < max
    -- A record past max calls for the flood bound: one ZREMRANGEBYRANK where the key's companion is empty, the
    -- general path's walk where it holds records (the decision loop then decides this decision).
    if not failed and (passes or countBlocked) and count >= max then companion = tryCall('ZCARD', actions) end
    if companion ~= 0 and type(companion) == 'number' then break end
    if failed then
      reply[r + 1], r = failed, r + 1
    else
      local countAfter = count
      if passes or countBlocked then
        if marked >= ttl then
          countAfter = count + call('ZADD', key, nowText, member)
        else
          countAfter = count + call('ZADD', key, ttlText, MARK_OF_ACTIONS, nowText, member) - (marked == 0 and 1 or 0)
        end
        if countAfter > max and companion == 0 then call('ZREMRANGEBYRANK', key, '1', format('%d', -1 - max)) end
        -- The companion outlives its key wherever the flood bound may read it: a rule that counts blocked attempts,
        -- on a key that held records (a new key's companion holds nothing the key does; one that held only records
        -- between the two cutoffs keeps them out of every window the flood bound can act on).
        local keyTtl = horizon == ttl and ttlText or format('%d', horizon)
        local actionTtl = countBlocked and (dropped > 0 or count > 0) and format('%d', horizon + 1)
        if last or rules[o + rule_interval] >= LONG_INTERVAL then
          call('PEXPIRE', key, keyTtl)
          if actionTtl then call('PEXPIRE', actions, actionTtl) end
        else
          ttlAtEnd = ttlAtEnd or {}
          ttlAtEnd[key] = keyTtl
          if actionTtl then ttlAtEnd[actions] = actionTtl end
        end
      end
      reply[r + 1], reply[r + 2], reply[r + 3], r = passes and ALLOWED or BLOCKED, count, countAfter, r + 3
      if countAfter >= max then
        local pair = call('ZRANGE', key, format('%d', -max), format('%d', -max), 'WITHSCORES')
        reply[r + 1], r = pair[2] and pair[2] + 0 or -1, r + 1
      end
    end
    k0, a0 = k0 + keys_width - 1, t0 + tier_width - 1
  else
    break
  end
end

---------------------------------------------------------------------------------------------------------------------
-- Helpers (made, as everything below but the decision loop, only for a call with a decision off the short path).
local general = a0 < rulesAt
local scoreAt, removeAll, isAction, walk, blockedUpTo

if general then
  -- The score at a rank given as text (negative: from the newest), or -1 when there is none.
  scoreAt = function(key, rank)
    local pair = call('ZRANGE', key, rank, rank, 'WITHSCORES')
    return pair[2] and pair[2] + 0 or -1
  end

  -- Removes members from a key (a sorted set, or a hash with command 'HDEL'), 500 at a time.
  removeAll = function(command, from, members)
    for j = 1, #members, 500 do call(command, from, unpack(members, j, math.min(j + 499, #members))) end
  end

  -- Whether a member is an action's record: '+' (admitted) or '-' (blocked). Any other ('=' and the members of
  -- attempts without an action id, or with a single-use one that was blocked) never changes but by clear.
  isAction = function(member)
    local first = string.byte(member)
    return first == 43 or first == 45
  end

  -- The one walk over a key's records, from rank (a number) towards the newest, in chunks of size records that double
  -- up to 64 (most walks stop in the first): visit(member, stamp, weight) for each record, or for each one without an
  -- action id when anonOnly, until it answers true (the stamp as text; with weights, a cost tier's, the weight as the
  -- hash holds it, read once per chunk). Returns whether a visit answered true.
  walk = function(key, rank, size, weights, anonOnly, visit)
    while true do
      local chunk = call('ZRANGE', key, format('%d', rank), format('%d', rank + size - 1), 'WITHSCORES')
      if #chunk == 0 then return false end
      local members, stamps = {}, {}
      for j = 1, #chunk, 2 do
        -- Nor the mark, '#'.
        if not (anonOnly and isAction(chunk[j])) and string.byte(chunk[j]) ~= 35 then
          members[#members + 1], stamps[#stamps + 1] = chunk[j], chunk[j + 1]
        end
      end
      local values = weights and #members > 0 and call('HMGET', weights, unpack(members)) or members
      for j = 1, #members do
        if visit(members[j], stamps[j], values[j]) then return true end
      end
      rank, size = rank + #chunk / 2, math.max(size, math.min(2 * size, 64))
    end
  end

  -- The records of blocked actions ('-') stamped at or before floor leave the key's companion: the flood bound's
  -- second step. Returns them, and their stamps as text.
  blockedUpTo = function(actions, floor)
    local recorded, blocked, stamps = tryCall('ZRANGEBYSCORE', actions, '-inf', floor, 'WITHSCORES'), {}, {}
    if recorded.err then return blocked, stamps end
    for j = 1, #recorded, 2 do
      if string.byte(recorded[j]) == 45 then blocked[#blocked + 1], stamps[#stamps + 1] = recorded[j], recorded[j + 1] end
    end
    removeAll('ZREM', actions, blocked)
    return blocked, stamps
  end
end

---------------------------------------------------------------------------------------------------------------------
-- Tiers that count actions: each record weighs 1, and |S| is W(S).

-- The tier kinds, by whether their rule counts cost; each has how many keys and fields a tier sends, its mark,
-- whether a max of 1 reads max(S), and its steps, each given the tier (below): open (what it reads beyond |S|, or
-- the decision's failure), weigh (step 1 on an attempt, and what S weighs with the attempt, how many records it
-- forgot, and whether recording would pass SUM_LIMIT), finish (step 5 and the reply on an attempt, the reply on a
-- dry run), abandon (a decision that failed after weigh). Each section makes its kind's table; a new kind is one
-- more section, and its place in the decision loop's dispatch (the line that picks a tier's kind by its rule).
local ACTIONS, COST, floodBound
-- Steps every kind shares (made with the general path), and the tiers of the decision at hand.
local openTier, expire, addRecord, writeActionIds, unweigh, tierOf

if general then
  tierOf = {}

  -- Opens a tier of the decision, its keys from k and its fields from t: the key's rank 0, its mark (which tells the
  -- key's type and kind too, as the short path reads it) and the horizon it holds (the longest of its writers'), the
  -- cutoff and forget stamps (on Redis's clock the call is stamped as it runs; either way it keeps what a call in
  -- flight may count, for the key's horizon), and |S|; then what its kind reads. Returns the tier (the i-th of the
  -- decision), one table of 16 fields that the steps read and fill (held, newest, and on a tier that counts cost its
  -- ledger, cost and W(S)), made once per place and filled anew by each decision (bench case 'actions stack'), or why
  -- the decision fails.
  openTier = function(i, kind, k, t)
    local o, key = ARGV[t + tier_rule] + 0, KEYS[k + keys_key]
    local ttl, first, marked = rules[o + rule_ttl], tryCall('ZRANGE', key, '0', '0', 'WITHSCORES'), 0
    if first.err or (actionId ~= '' and type(tryCall('ZCARD', KEYS[k + keys_actions])) ~= 'number') then return WRONG_TYPE end
    if first[1] == kind.other then return OTHER_KIND end
    if first[1] == kind.mark then marked = first[2] == ARGV[rulesAt + o + rule_ttl] and ttl or first[2] + 0 end
    local horizon, cutoff, forget = marked > ttl and marked or ttl, ARGV[t + tier_cutoff], ARGV[t + tier_forget]
    if cutoff == '' then cutoff = '(' .. format('%d', now - rules[o + rule_interval]) end
    if forget == '' or horizon ~= ttl then forget = format('%d', now - 1000 * horizon) end
    local weighed, tier = kind.keys == keys_width, tierOf[i]
    local actions, weights, cost = KEYS[k + keys_actions], weighed and KEYS[k + keys_weights], weighed and ARGV[t + tier_cost] + 0
    local count = first[1] and call('ZCOUNT', key, cutoff, '+inf') or 0
    if tier then
      tier.kind, tier.key, tier.actions, tier.weights, tier.o, tier.cutoff = kind, key, actions, weights, o, cutoff
      tier.forget, tier.horizon, tier.marked, tier.empty, tier.count = forget, horizon, marked, first[1] == nil, count
      tier.held, tier.newest, tier.ledger, tier.cost, tier.weight = false, -1, false, cost, 0
    else
      tier = {
        kind = kind, key = key, actions = actions, weights = weights, o = o, cutoff = cutoff, forget = forget,
        horizon = horizon, marked = marked, empty = first[1] == nil, count = count, held = false, newest = -1,
        ledger = false, cost = cost, weight = 0,
      }
      tierOf[i] = tier
    end
    return kind.open and kind.open(tier) or tier
  end

  -- Gives a tier's keys their TTL: the key and its weights (a cost tier's) the key's horizon, and its companion one
  -- more millisecond, so that it outlives the key, wherever the flood bound may read it (a rule that counts blocked
  -- attempts, on a key that held records) or the decision wrote to it.
  expire = function(tier)
    local horizon, o, key, actions, weights = tier.horizon, tier.o, tier.key, tier.actions, tier.weights
    local ttl = horizon == rules[o + rule_ttl] and ARGV[rulesAt + o + rule_ttl] or format('%d', horizon)
    local actionTtl = (actionId ~= '' or rules[tier.o + rule_countBlocked] and tier.held) and format('%d', horizon + 1)
    if last or rules[o + rule_interval] >= LONG_INTERVAL then
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

  -- Records the attempt's member on a tier's key at now, with the kind's mark where this writer's horizon is longer
  -- than the one the key holds (one ZADD: most new keys take both). Returns 1 when the member is new, 0 when the key
  -- held it.
  addRecord = function(tier)
    local marked, o = tier.marked, tier.o
    if marked >= rules[o + rule_ttl] then return call('ZADD', tier.key, nowText, member) end
    return call('ZADD', tier.key, ARGV[rulesAt + o + rule_ttl], tier.kind.mark, nowText, member) - (marked == 0 and 1 or 0)
  end

end

-- The steps of a tier that counts actions, made only for a call with one off the short path.
if general and anyActionTier then
  ACTIONS = { keys = keys_width - 1, fields = tier_width - 1, mark = MARK_OF_ACTIONS, other = MARK_OF_COST, newestOfOne = true }

  -- The flood bound (docs/semantics.md, "Memory per key"), after a write that left count records in the window
  -- (more than max): keep what a later decision could still tell apart, whatever is undone or cleared later: every
  -- admitted action, the newest max records without an action id, and the blocked actions newer than the max-th
  -- newest of those. The key may hold more records than count (older ones, kept for calls in flight): a count too
  -- small only keeps more. Rank 0 is the key's mark, which stays.
  floodBound = function(key, actions, max, count)
    local actionCount = tryCall('ZCARD', actions)
    if type(actionCount) ~= 'number' then return end
    if actionCount == 0 then
      call('ZREMRANGEBYRANK', key, '1', format('%d', -1 - max))
      return
    end
    -- At least this many records carry no action id (the companion holds a copy of every one that does): from the
    -- oldest, the first excess of them go; the next one is the floor.
    local excess = count - actionCount - max
    if excess < 0 then return end
    local doomed, floor = {}, nil
    walk(key, 1, excess + 16, nil, true, function(m, stamp)
      if #doomed < excess then
        doomed[#doomed + 1] = m
        return false
      end
      floor = stamp
      return true
    end)
    if floor == nil then return end
    removeAll('ZREM', key, doomed)
    removeAll('ZREM', key, (blockedUpTo(actions, floor)))
  end

  -- Step 1 on an attempt: forget the records stamped at or before now less the key's horizon, from the companion
  -- too, so that it never holds a record the key no longer does.
  ACTIONS.weigh = function(tier)
    local dropped = 0
    if record and not tier.empty then
      dropped = call('ZREMRANGEBYSCORE', tier.key, STAMPS_FROM, tier.forget)
      if dropped > 0 then tryCall('ZREMRANGEBYSCORE', tier.actions, '-inf', tier.forget) end
    end
    return tier.count + 1, dropped, false
  end

  ACTIONS.finish = function(tier)
    local key, actions, count, newest, o = tier.key, tier.actions, tier.count, tier.newest, tier.o
    local max = rules[o + rule_max]
    local readsNewest = rules[o + rule_gap] > 0 or max == 1
    if not record then
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
      return
    end
    local countAfter, after = count, newest
    if not replayed and (passes or rules[o + rule_countBlocked]) then
      countAfter = countAfter - writeActionIds(tier) + addRecord(tier)
      -- The flood bound keeps the newest max records of the window, and more: |S'| stays at least max.
      if countAfter > max then floodBound(key, actions, max, countAfter) end
      -- max(S'): the key's newest where an action's records were replaced, else the later of max(S) and now.
      if readsNewest then after = actionId ~= '' and (countAfter > 0 and scoreAt(key, '-1') or -1) or math.max(now, newest) end
      expire(tier)
    end
    reply[r + 1], reply[r + 2], r = count, countAfter, r + 2
    if readsNewest then reply[r + 1], reply[r + 2], r = newest, after, r + 2 end
    if countAfter >= max then reply[r + 1], r = max == 1 and after or scoreAt(key, format('%d', -max)), r + 1 end
  end
end

---------------------------------------------------------------------------------------------------------------------
-- Tiers that count cost: each record weighs its cost, kept in the tier's weights (a hash, by member) beside three
-- sums that spare a decision walking its records:
--   live     the weight of the records stamped after pastAt
--   anon     the weight of the records without an action id (a member that starts with neither '+' nor '-')
--   pastAt   the latest cutoff an attempt weighed, integer microseconds
-- W(S) is live, less the records between pastAt and the cutoff (each read once, as an attempt moves pastAt past it),
-- or plus those between an earlier cutoff and pastAt (a call stamped before one already weighed). The flood bound
-- trims from the oldest while anon stays at least max. A decision reads the sums once (open), checks them, counts
-- them again from the records where they cannot be trusted (recount), and keeps them in a ledger (the sums, and the
-- sums as read) that it moves with every record it writes or removes; what changed goes back in one command
-- (closeLedger), with the new record's weight. settle and undo move live for a record after pastAt.

if general and anyCostTier then
  COST = { keys = keys_width, fields = tier_width, mark = MARK_OF_COST, other = MARK_OF_ACTIONS, newestOfOne = false }

  -- The weights of members, in order, as numbers (0 where one has none).
  local function weightsOf(weights, members)
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

  -- A whole number from 0 to SUM_LIMIT, or nil.
  local function sumOf(text)
    local value = tonumber(text)
    if value and value >= 0 and value <= SUM_LIMIT and value == math.floor(value) then return value end
    return nil
  end

  -- Forgets the weights of records that leave a tier's key (members, with their stamps as text), in its ledger's sums
  -- too; returns the weights.
  unweigh = function(weights, ledger, members, stamps)
    if #members == 0 then return {} end
    local values, pastAt = weightsOf(weights, members), ledger.pastAt
    for j = 1, #members do
      local w = values[j]
      if not isAction(members[j]) then ledger.anon = ledger.anon - w end
      if not pastAt or stamps[j] + 0 > pastAt then ledger.live = ledger.live - w end
    end
    removeAll('HDEL', weights, members)
    return values
  end

  -- Counts a tier's sums again from its records, pastAt at the cutoff (atText): a record without a readable weight
  -- weighs max, the most one action may (never less than it may have). An attempt writes the weights anew, with the
  -- sums, and their TTL (ttl, milliseconds as text); a dry run only reads. Returns the ledger.
  local function recount(key, weights, max, atText, ttl)
    local at, members, values = atText + 0, {}, {}
    local ledger = { live = 0, anon = 0, pastAt = at, pastAtText = atText, existed = record }
    walk(key, 0, 64, weights, false, function(m, stamp, text)
      local w = sumOf(text)
      if w == nil or w > max then w = max end
      members[#members + 1], values[#values + 1] = m, w
      if stamp + 0 > at then ledger.live = ledger.live + w end
      if not isAction(m) then ledger.anon = ledger.anon + w end
    end)
    if record then
      call('DEL', weights)
      for j = 1, #members, 250 do
        local fields = {}
        for m = j, math.min(j + 249, #members) do fields[#fields + 1], fields[#fields + 2] = members[m], format('%d', values[m]) end
        call('HSET', weights, unpack(fields))
      end
      call('HSET', weights, 'live', format('%d', ledger.live), 'anon', format('%d', ledger.anon), 'pastAt', atText)
      call('PEXPIRE', weights, ttl)
    end
    ledger.readLive, ledger.readAnon, ledger.readPastAt = record and ledger.live, record and ledger.anon, record and at
    return ledger
  end

  -- Writes what the decision changed back to the tier's weights in one command: the sums that moved, and the weight of
  -- the record it added (added, with its cost).
  local function closeLedger(weights, ledger, added, cost)
    local fields = {}
    if added then fields[1], fields[2] = added, format('%d', cost) end
    if ledger.live ~= ledger.readLive then fields[#fields + 1], fields[#fields + 2] = 'live', format('%d', ledger.live) end
    if ledger.anon ~= ledger.readAnon then fields[#fields + 1], fields[#fields + 2] = 'anon', format('%d', ledger.anon) end
    if ledger.pastAt ~= ledger.readPastAt then fields[#fields + 1], fields[#fields + 2] = 'pastAt', ledger.pastAtText end
    if #fields > 0 then call('HSET', weights, unpack(fields)) end
  end

  -- The flood bound with weights. The floor is the newest record without an action id at which those records, from
  -- the newest, weigh max; the records without an action id older than it go, and the blocked actions at or before
  -- its stamp. Those records are never undone or settled, so every window that held what went holds them too, and
  -- blocks. Found from the oldest with anon: a record goes while the rest of them still weigh max, so a walk reads
  -- what it removes and the floor, never the weights of the actions between them (a flood of blocked requests leaves
  -- the admitted ones at the oldest ranks: bench case 'flood-single-use'). Returns the weight it removed from the
  -- window after the cutoff (a wait then walks what is left: the same stamp).
  local function weighedFloodBound(key, actions, weights, ledger, max, cutoff)
    local anon = ledger.anon
    if anon <= max then return 0 end
    local doomed, stamps, floor = {}, {}, nil
    walk(key, 1, 4, weights, true, function(m, stamp, w)
      w = tonumber(w) or 0
      if anon - w < max then
        floor = stamp
        return true
      end
      anon = anon - w
      doomed[#doomed + 1], stamps[#stamps + 1] = m, stamp
      return false
    end)
    -- No floor: anon disagrees with the records (it never should); keeping everything is always safe.
    if floor == nil then return 0 end
    local blocked, at = blockedUpTo(actions, floor)
    for j = 1, #blocked do doomed[#doomed + 1], stamps[#stamps + 1] = blocked[j], at[j] end
    local values, after, removed = unweigh(weights, ledger, doomed, stamps), cutoff:sub(2) + 0, 0
    removeAll('ZREM', key, doomed)
    for j = 1, #doomed do
      if stamps[j] + 0 > after then removed = removed + values[j] end
    end
    return removed
  end

  -- fitsAfter: walking S' (weight in all) from its oldest, the stamp at which the rest weighs at most target; pending
  -- is the weight of an attempt not stored (a dry run's), at its stamp at, after records of that stamp. Most walks
  -- stop at the first record or two.
  local function fitsAfterWeighed(key, weights, cutoff, weight, target, pending, at)
    local found = -1
    -- From the first record after the cutoff: the mark's rank counts too.
    local rank = call('ZCOUNT', key, '-inf', cutoff:sub(2))
    local reached = walk(key, rank, 4, weights, false, function(_, text, w)
      local stamp = text + 0
      if pending and at < stamp then
        weight, pending = weight - pending, nil
        if weight <= target then
          found = at
          return true
        end
      end
      weight = weight - (tonumber(w) or 0)
      if weight <= target then found = stamp end
      return weight <= target
    end)
    if not reached and pending then return at end
    return found
  end

  -- Reads a tier's sums (its weights' type with them), and trusts them only where they hold together: none on a key
  -- without records (its mark aside), or whole numbers, with pastAt a stamp no later than now plus the key's horizon
  -- (a call in flight may be stamped before a cutoff already weighed, never by more). A hash lost (deleted,
  -- evicted, expired apart from its key) beside records, or written by another hand, fails one of these.
  COST.open = function(tier)
    local sums = tryCall('HMGET', tier.weights, 'live', 'anon', 'pastAt')
    if sums.err then return WRONG_TYPE end
    local live, anon, pastAt = sumOf(sums[1]), sumOf(sums[2]), tonumber(sums[3])
    if not (sums[1] or sums[2] or sums[3]) and (tier.empty or call('ZCARD', tier.key) == (tier.marked > 0 and 1 or 0)) then
      -- A tier without records: the ledger starts at 0, and its sums are written only with a first record.
      tier.ledger = { live = 0, anon = 0, fresh = true }
    elseif live and anon and pastAt and pastAt >= STAMPS_FROM + 0 and pastAt <= now + 1000 * tier.horizon then
      tier.ledger = {
        live = live, anon = anon, pastAt = pastAt, pastAtText = sums[3],
        readLive = live, readAnon = anon, readPastAt = pastAt, existed = true,
      }
    else
      tier.ledger = recount(tier.key, tier.weights, rules[tier.o + rule_max], tier.cutoff:sub(2), format('%d', tier.horizon))
    end
    return false
  end

  -- Step 1 on an attempt, in the ledger too, then W(S), moving pastAt up to the cutoff where an attempt crosses
  -- records (or the tier had none).
  COST.weigh = function(tier)
    local key, weights, ledger, cost, atText = tier.key, tier.weights, tier.ledger, tier.cost, tier.cutoff:sub(2)
    local dropped, at, pastAt = 0, atText + 0, ledger.pastAt
    if record and not ledger.fresh then
      local forgotten = call('ZRANGEBYSCORE', key, STAMPS_FROM, tier.forget, 'WITHSCORES')
      if #forgotten > 0 then
        local members, stamps = {}, {}
        for j = 1, #forgotten, 2 do members[#members + 1], stamps[#stamps + 1] = forgotten[j], forgotten[j + 1] end
        unweigh(weights, ledger, members, stamps)
        call('ZREMRANGEBYSCORE', key, STAMPS_FROM, tier.forget)
        tryCall('ZREMRANGEBYSCORE', tier.actions, '-inf', tier.forget)
        dropped = #members
      end
    end
    local weight = ledger.live
    if ledger.fresh then
      if record then ledger.pastAt, ledger.pastAtText = at, atText end
    elseif at > pastAt then
      local crossed, count = weightBetween(weights, key, '(' .. ledger.pastAtText, atText)
      weight = weight - crossed
      if record and count > 0 then ledger.live, ledger.pastAt, ledger.pastAtText = weight, at, atText end
    else
      weight = weight + weightBetween(weights, key, tier.cutoff, ledger.pastAtText)
    end
    tier.weight = weight
    return weight + cost, dropped, record and (ledger.live + cost > SUM_LIMIT or ledger.anon + cost > SUM_LIMIT)
  end

  -- Only what forgetting changed goes back, to weights that exist.
  COST.abandon = function(tier)
    if tier.ledger.existed then closeLedger(tier.weights, tier.ledger) end
  end

  COST.finish = function(tier)
    local key, weights, ledger, cost, weight, newest = tier.key, tier.weights, tier.ledger, tier.cost, tier.weight, tier.newest
    local o = tier.o
    local max, readsNewest, counted = rules[o + rule_max], rules[o + rule_gap] > 0, passes or rules[o + rule_countBlocked]
    -- S' weighed (less what the flood bound removed of it: what a wait walks), max(S'), and a dry run's attempt.
    local weightAfter, walked, after, pending = weight, nil, newest, nil
    if not record then
      if counted then
        weightAfter, pending = weight + cost, cost
        if now > after then after = now end
      end
    else
      local recorded, added = not replayed and counted, nil
      if recorded then
        local replaced, replacedWeight = writeActionIds(tier)
        weightAfter = weightAfter - replacedWeight
        if addRecord(tier) == 1 then
          weightAfter, replaced = weightAfter + cost, replaced - 1
          if not ledger.pastAt or now > ledger.pastAt then ledger.live = ledger.live + cost end
          if not isAction(member) then ledger.anon = ledger.anon + cost end
          -- Its weight goes with the sums (one HSET: bench case 'cost tier'), or now where the flood bound or the
          -- wait reads it.
          if weightAfter > max - cost then call('HSET', weights, member, format('%d', cost)) else added = member end
        end
        if not passes and weightAfter > max then
          walked = weightAfter - weighedFloodBound(key, tier.actions, weights, ledger, max, tier.cutoff)
        end
        -- max(S'): the key's newest where an action's records were replaced, else the later of max(S) and now.
        if readsNewest then after = actionId ~= '' and (tier.count > replaced and scoreAt(key, '-1') or -1) or math.max(now, newest) end
      end
      -- The sums, once: on weights that exist, or that this attempt made; then the TTLs, the weights' with them.
      if ledger.existed or added or weightAfter ~= weight then closeLedger(weights, ledger, added, cost) end
      if recorded then expire(tier) end
    end
    reply[r + 1], reply[r + 2], r = weight, weightAfter, r + 2
    if readsNewest then reply[r + 1], reply[r + 2], r = newest, after, r + 2 end
    if weightAfter > max - cost then
      reply[r + 1], r = fitsAfterWeighed(key, weights, tier.cutoff, walked or weightAfter, max - cost, pending, now), r + 1
    end
  end
end

---------------------------------------------------------------------------------------------------------------------
-- Action ids: an action's record is named by its id, '+' admitted, '-' blocked, with a copy in the key's companion;
-- a blocked attempt whose action id is single-use is recorded as one without an action id (no retry will look for
-- it, and the flood bound may trim it).

if general then
  -- Before the attempt of an action is recorded on a tier under its member: its earlier blocked record goes (the
  -- action is recorded once), and, where the attempt passes, its earlier admitted record, which has left the window
  -- (or this would be a retry), keeps counting for calls still in flight without its action id ('=' and its stamp),
  -- weight and all (weights and ledger: a cost tier's, nil elsewhere). Returns 1 when the blocked record was in the
  -- window (0 otherwise), and the weight it had there; then the new record's copy goes in the companion.
  writeActionIds = function(tier)
    if not isAction(member) then return 0, 0 end
    local key, actions, weights, ledger = tier.key, tier.actions, tier.weights, tier.ledger
    local blocked, inWindow, weight = '-' .. actionId, 0, 0
    local blockedAt = call('ZSCORE', key, blocked)
    if blockedAt then
      if blockedAt + 0 > tier.cutoff:sub(2) + 0 then inWindow = 1 end
      weight = ledger and unweigh(weights, ledger, { blocked }, { blockedAt })[1] * inWindow or inWindow
      call('ZREM', key, blocked)
    end
    call('ZREM', actions, blocked)
    local admittedAt = passes and call('ZSCORE', key, member)
    if admittedAt then
      local retired = '=' .. admittedAt .. member
      call('ZREM', key, member)
      call('ZREM', actions, member)
      call('ZADD', key, admittedAt, retired)
      local admittedWeight = ledger and call('HGET', weights, member)
      if admittedWeight then
        call('HDEL', weights, member)
        call('HSET', weights, retired, admittedWeight)
        -- Without its action id the record is one of anon's.
        ledger.anon = ledger.anon + admittedWeight
      end
    end
    call('ZADD', actions, nowText, member)
    return inWindow, weight
  end
end

---------------------------------------------------------------------------------------------------------------------
-- The decisions, in order. The short path (one tier, an attempt without an action id, on the caller's clock, under a
-- rule that counts actions with no gap and a max above 1, which never reads max(S): most decisions) takes the steps
-- of the general path less what such a decision never takes, inline (bench case 'default path'). The general path
-- opens every tier (the first commands on each key tell a key of another type, or of a rule of the other kind,
-- before anything is written: the decision then fails alone), judges (steps 1 to 4: a retry is an action whose
-- admitted record is in a tier's window), and finishes each tier by its kind (step 5, and what steps 6 and 7 need).

---------------------------------------------------------------------------------------------------------------------
-- The decision loop: the call's decisions from the first that left the short path, each on the general path. It
-- opens every tier (the first commands on each key tell a key of another type, or of a rule of the other kind,
-- before anything is written: the decision then fails alone, and the places of the rest are still read), judges
-- (steps 1 to 4: a retry is an action whose admitted record is in a tier's window), and finishes each tier by its
-- kind (step 5, and what steps 6 and 7 need).
while a0 < rulesAt do
  local t0 = a0 + header_width
  nowText, member, actionId = ARGV[a0 + header_now], ARGV[a0 + header_member], ARGV[a0 + header_actionId]
  local n, redisClock = ARGV[a0 + header_tiers] + 0, nowText == ''
  record = member ~= '' or actionId ~= ''
  if redisClock and redisNow == nil then
    -- Redis 3.2 and 4.x replicate a script that reads TIME and then writes only by its effects, when asked first.
    if redis.replicate_commands then redis.replicate_commands() end
    local time = call('TIME')
    redisNow = time[1] * 1000000 + time[2]
    redisNowText = format('%d', redisNow)
  end
  if redisClock then nowText = redisNowText end
  now = nowText + 0
  local failed, k, t = false, k0, t0
  for i = 1, n do
    local kind = rules[ARGV[t + tier_rule] + rule_countsCost] and COST or ACTIONS
    if not failed then
      local tier = openTier(i, kind, k, t)
      if type(tier) ~= 'table' then failed = tier end
    end
    k, t = k + kind.keys, t + kind.fields
  end
  last = t >= rulesAt
  passes, replayed = true, false
  local tooHeavy = false
  for i = 1, n do
    if failed then break end
    local tier = tierOf[i]
    local weighedWith, dropped, heavy = tier.kind.weigh(tier)
    local key, count, o, newest = tier.key, tier.count, tier.o, -1
    local gap, max = rules[o + rule_gap], rules[o + rule_max]
    tier.held, tooHeavy = dropped > 0 or count > 0, tooHeavy or heavy
    if actionId ~= '' then
      local admittedAt = call('ZSCORE', key, '+' .. actionId)
      if admittedAt and admittedAt + 0 > tier.cutoff:sub(2) + 0 then replayed = true end
    end
    if count > 0 and (gap > 0 or (max == 1 and tier.kind.newestOfOne)) then newest = scoreAt(key, '-1') end
    tier.newest = newest
    if weighedWith > max or (gap > 0 and newest >= 0 and now - newest < gap) then passes = false end
  end
  -- Recording would make a key's sums pass what they count exactly (SUM_LIMIT): the decision fails alone, keeping
  -- only what it forgot.
  if tooHeavy then failed = TOO_HEAVY end
  reply[r + 1], r = failed or (replayed and ALREADY_ADMITTED or passes and ALLOWED or BLOCKED), r + 1
  if redisClock then reply[r + 1], r = now, r + 1 end
  if actionId ~= '' and (passes or member == '') then member = (passes and '+' or '-') .. actionId end
  for i = 1, n do
    local tier = tierOf[i]
    if failed == TOO_HEAVY and tier.kind.abandon then tier.kind.abandon(tier) end
    if not failed then tier.kind.finish(tier) end
  end
  k0, a0 = k, t
end

if ttlAtEnd then
  for key, ttl in pairs(ttlAtEnd) do call('PEXPIRE', key, ttl) end
end

return reply
`;
