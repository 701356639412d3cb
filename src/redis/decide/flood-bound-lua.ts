/**
 * The Lua functions of the decide script that hold no decision: a rank's
 * score, and the flood bound of a key after a write (docs/semantics.md, "Memory per key"), which keeps what a later
 * decision could still tell apart, whatever is undone or cleared later:
 * every admitted action ('+'), the newest maxInInterval records without an
 * action id, and the blocked actions ('-') newer than the maxInInterval-th
 * newest of those. A key without action ids keeps its newest maxInInterval
 * records, by rank, as the MULTI path does.
 *
 * Only strings go to redis.call (Redis would print a Lua number with
 * '%.17g'). A score, a count or a rank the script computes is written with
 * `string.format('%d', …)` (64-bit: Lua's own number-to-string conversion
 * keeps 14 digits, and microsecond timestamps have 16); a score the caller
 * sent is passed on as sent. A score read back is turned into a number with
 * `+ 0` (one conversion, where `tonumber` makes two).
 */
export const FLOOD_BOUND_LUA = `-- The score at one rank, given as text (negative: from the newest), or -1 when there is none.
local function scoreAt(key, rank)
  local pair = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
  return pair[2] and pair[2] + 0 or -1
end

-- The flood bound of one key after a write, with count records in the window (the key may hold more, older ones
-- kept for calls in flight: trimming by a count too small only keeps more); returns how many it holds afterwards.
local function trim(key, actions, max, count)
  if count <= max then return count end
  local actionCount = redis.pcall('ZCARD', actions)
  if type(actionCount) ~= 'number' then return count end
  if actionCount == 0 then
    redis.call('ZREMRANGEBYRANK', key, '0', string.format('%d', -1 - max))
    return max
  end
  -- At least this many records carry no action id (the companion holds a copy of every one that does, and
  -- nothing the key has dropped).
  local excess = count - actionCount - max
  if excess < 0 then return count end
  -- Made here, where a key with action ids is trimmed, rather than on every call of the script. True for a
  -- member that carries an action id: '+' (43) admitted, '-' (45) blocked.
  local function isAction(member)
    local first = string.byte(member)
    return first == 43 or first == 45
  end
  local function removeAll(key, members)
    for j = 1, #members, 500 do
      redis.call('ZREM', key, unpack(members, j, math.min(j + 499, #members)))
    end
  end
  -- From the oldest: the first excess records without an action id go; the next is the max-th newest of them.
  local doomed, floor, start = {}, nil, 0
  while floor == nil do
    local chunk = redis.call('ZRANGE', key, string.format('%d', start), string.format('%d', start + excess + 15), 'WITHSCORES')
    if #chunk == 0 then break end
    for j = 1, #chunk, 2 do
      if not isAction(chunk[j]) then
        if #doomed < excess then doomed[#doomed + 1] = chunk[j] else floor = chunk[j + 1] break end
      end
    end
    start = start + #chunk / 2
  end
  if floor == nil then return count end
  removeAll(key, doomed)
  count = count - #doomed
  local blocked = {}
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', actions, '-inf', floor)) do
    if string.byte(member) == 45 then blocked[#blocked + 1] = member end
  end
  if #blocked > 0 then
    removeAll(key, blocked)
    removeAll(actions, blocked)
  end
  return count - #blocked
end
`;
