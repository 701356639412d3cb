import { defineScript } from '../scripts/redis-script.js';

/** What the decide script answers in a decision's `allowed` slot when that decision alone failed. */
export const DECISION_FAILED = {
  /** A key of the decision holds a value that is not a sorted set (Redis WRONGTYPE). */
  wrongType: -1,
  /** An argument of the decision is not what the script expects. */
  badArgument: -2,
} as const;

/**
 * Decides attempts for one id each, across one or more tiers, one after the
 * other in the order given, each atomically and exactly as if it had been
 * sent alone, and records them (docs/semantics.md: the steps, and "Stacks").
 * One call carries one decision, or a batch of them (`batch: true`) whose
 * keys all live in one hash slot.
 *
 * The one script of every script mode (the default wherever the client runs
 * scripts): `countBlocked: false`, stacked tiers, `clock: 'redis'`, action
 * ids, and `batch: true`. The caller derives the info (steps 6 and 7) from
 * the samples it returns, with the same code as every other store, and
 * checks that it reaches the same allowed/blocked decision.
 *
 * KEYS: two per tier, decision after decision: the tier's key, then its
 * companion (`actionRecordsKey`: the key and `:a`), a sorted set holding a
 * copy of the key's records that carry an action id, so that the flood
 * bound finds them without reading the key. The keys of one decision share
 * a hash tag (the id), so they live in one slot; the store deletes both on
 * `clear` and `undo`.
 *
 * ARGV: for each decision, a header of five values, then four per tier:
 *   n            how many tiers (and keys) the decision has
 *   now          integer microseconds since the epoch; '' to read Redis TIME (once per call)
 *   member       the member recorded for this attempt when it has no action id ('' in a dry run)
 *   record       '1' to decide and record; '0' for a dry run that writes nothing
 *   action id    or '': its member is then '+<id>' when the action is admitted and '-<id>' when it is
 *                recorded blocked. An action id already admitted (and still in the window) in any tier
 *                is answered as admitted again and records nothing. A blocked record of the same id
 *                counts like any other; recording the action again replaces that record rather than
 *                adding one. (Record mode only.)
 *   then per tier: interval (µs), maxInInterval, minDifference (µs), countBlocked ('1' or '0')
 *
 * Returns a flat array of integers, for each decision in turn: now, allowed
 * (1 or 0, or a negative DECISION_FAILED code when that decision alone
 * failed and wrote nothing), already admitted (1 or 0), then five numbers per
 * tier, with -1 for a value that does not exist. In record mode: |S| and
 * max(S) of the recorded set S after dropping what left the window (what the
 * decision is made on), then |S'|, max(S') and the k-th newest of S' (k =
 * maxInInterval) as stored afterwards. In a dry run: |S|, max(S), the
 * (k-1)-th and the k-th newest of S, and -1. A few numbers per tier,
 * whatever maxInInterval is.
 *
 * The flood bound (docs/semantics.md, "Memory per key") keeps what a later
 * decision could still tell apart, whatever is undone or cleared later:
 * every admitted action ('+'), the newest maxInInterval records without an
 * action id, and the blocked actions ('-') newer than the
 * maxInInterval-th newest of those. A key without action ids keeps its
 * newest maxInInterval records, by rank, as the MULTI path does.
 *
 * Every read comes before the key's PEXPIRE: a key given a TTL of 1 ms may
 * be gone at the next command of the same script. Scores are written with
 * string.format('%.0f'): Lua's own number-to-string conversion keeps 14
 * digits, and microsecond timestamps have 16.
 */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  `if redis.replicate_commands then redis.replicate_commands() end
local WRONG_TYPE, BAD_ARGUMENT = -1, -2
local redisNow
local reply = {}

local function failed(result)
  return type(result) == 'table' and result.err ~= nil
end

local function score(value)
  return string.format('%.0f', value)
end

-- The score at one rank (negative: from the newest), or -1 when there is none.
local function scoreAt(key, rank)
  local pair = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
  return pair[2] and tonumber(pair[2]) or -1
end

-- True for a member that carries an action id: '+' (43) admitted, '-' (45) blocked.
local function isAction(member)
  local first = string.byte(member)
  return first == 43 or first == 45
end

local function removeAll(key, members)
  for j = 1, #members, 500 do
    redis.call('ZREM', key, unpack(members, j, math.min(j + 499, #members)))
  end
end

-- The flood bound of one key holding count records after a write; returns how many it holds afterwards.
local function trim(key, actions, max, count)
  if count <= max then return count end
  local actionCount = redis.pcall('ZCARD', actions)
  if failed(actionCount) then return count end
  if actionCount == 0 then
    redis.call('ZREMRANGEBYRANK', key, 0, -1 - max)
    return max
  end
  -- At least this many records carry no action id (the companion holds a copy of every one that does, and
  -- nothing the key has dropped).
  local excess = count - actionCount - max
  if excess < 0 then return count end
  -- From the oldest: the first excess records without an action id go; the next is the max-th newest of them.
  local doomed, floor, start = {}, nil, 0
  while floor == nil do
    local chunk = redis.call('ZRANGE', key, start, start + excess + 15, 'WITHSCORES')
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

local function fail(n, now, code)
  reply[#reply + 1] = now or 0
  reply[#reply + 1] = code
  reply[#reply + 1] = 0
  for _ = 1, 5 * n do reply[#reply + 1] = -1 end
end

-- One decision: its keys follow KEYS[k0] (tier i's at k0 + 2i - 1 and its companion's at k0 + 2i), its header
-- ARGV[a0 + 1 .. a0 + 5], its tiers' values after that.
local function decide(k0, a0, n)
  local now
  if ARGV[a0 + 2] == '' then
    if not redisNow then
      local time = redis.call('TIME')
      redisNow = tonumber(time[1]) * 1000000 + tonumber(time[2])
    end
    now = redisNow
  else
    now = tonumber(ARGV[a0 + 2])
  end
  if now == nil then return fail(n, 0, BAD_ARGUMENT) end
  local record = ARGV[a0 + 4] == '1'
  local actionId = ARGV[a0 + 5]
  local rules = {}
  for i = 1, n do
    local at = a0 + 4 * i + 2
    local interval, max, gap = tonumber(ARGV[at]), tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
    if not (interval and max and gap and max >= 1) then return fail(n, now, BAD_ARGUMENT) end
    rules[i] = {interval = interval, max = max, gap = gap, countBlocked = ARGV[at + 3] == '1', cutoff = score(now - interval)}
  end
  -- The first command on each key tells a key of another type, before anything is written: the decision then fails alone.
  local counts = {}
  for i = 1, n do
    local key = KEYS[k0 + 2 * i - 1]
    local count
    if record then
      count = redis.pcall('ZCARD', key)
      if actionId ~= '' and not failed(count) and failed(redis.pcall('ZCARD', KEYS[k0 + 2 * i])) then count = WRONG_TYPE end
    else
      count = redis.pcall('ZCOUNT', key, '(' .. rules[i].cutoff, '+inf')
    end
    if count == WRONG_TYPE or failed(count) then return fail(n, now, WRONG_TYPE) end
    counts[i] = count
  end
  -- Step 1 (record mode): drop what left the window, from the companion too, so that it never holds a record
  -- the key no longer does (whatever the clock does next).
  if record then
    for i = 1, n do
      local dropped = redis.call('ZREMRANGEBYSCORE', KEYS[k0 + 2 * i - 1], '-inf', rules[i].cutoff)
      if dropped > 0 then
        counts[i] = counts[i] - dropped
        redis.pcall('ZREMRANGEBYSCORE', KEYS[k0 + 2 * i], '-inf', rules[i].cutoff)
      end
    end
  end
  local replayed = false
  if record and actionId ~= '' then
    for i = 1, n do
      if redis.call('ZSCORE', KEYS[k0 + 2 * i - 1], '+' .. actionId) then replayed = true end
    end
  end
  local allowed = true
  local samples = {}
  for i = 1, n do
    local key, rule, count = KEYS[k0 + 2 * i - 1], rules[i], counts[i]
    local max = rule.max
    local newest, kMinus1th, kth = -1, -1, -1
    if count > 0 then newest = scoreAt(key, -1) end
    if not record then
      if max == 1 then
        if count >= 1 then kth = newest end
      elseif count >= max - 1 then
        local pair = redis.call('ZRANGE', key, -max, 1 - max, 'WITHSCORES')
        kMinus1th = tonumber(pair[#pair])
        if count >= max then kth = tonumber(pair[2]) end
      end
    end
    if count >= max or (rule.gap > 0 and newest >= 0 and now - newest < rule.gap) then
      allowed = false
    end
    samples[i] = {count, newest, kMinus1th, kth}
  end
  reply[#reply + 1] = now
  reply[#reply + 1] = (allowed or replayed) and 1 or 0
  reply[#reply + 1] = replayed and 1 or 0
  local member = ARGV[a0 + 3]
  if actionId ~= '' then member = (allowed and '+' or '-') .. actionId end
  local scoreNow = score(now)
  for i = 1, n do
    local key, actions, rule, sample = KEYS[k0 + 2 * i - 1], KEYS[k0 + 2 * i], rules[i], samples[i]
    reply[#reply + 1] = sample[1]
    reply[#reply + 1] = sample[2]
    if not record then
      reply[#reply + 1] = sample[3]
      reply[#reply + 1] = sample[4]
      reply[#reply + 1] = -1
    elseif replayed or not (allowed or rule.countBlocked) then
      -- Nothing recorded: S' = S.
      reply[#reply + 1] = sample[1]
      reply[#reply + 1] = sample[2]
      reply[#reply + 1] = sample[1] >= rule.max and scoreAt(key, -rule.max) or -1
    else
      local count, newest = sample[1], sample[2]
      if actionId ~= '' then
        -- The action is recorded once: an earlier blocked record is replaced.
        count = count - redis.call('ZREM', key, '-' .. actionId)
        redis.call('ZREM', actions, '-' .. actionId)
        redis.call('ZADD', actions, scoreNow, member)
      end
      count = count + redis.call('ZADD', key, scoreNow, member)
      count = trim(key, actions, rule.max, count)
      if actionId ~= '' then
        newest = count > 0 and scoreAt(key, -1) or -1
      elseif now > newest then
        newest = now
      end
      reply[#reply + 1] = count
      reply[#reply + 1] = newest
      reply[#reply + 1] = count >= rule.max and scoreAt(key, -rule.max) or -1
      local ttl = math.ceil(rule.interval / 1000)
      redis.call('PEXPIRE', key, ttl)
      -- The companion outlives its key by a millisecond, so it never misses a record the key still holds.
      redis.call('PEXPIRE', actions, ttl + 1)
    end
  end
end

local k0, a0 = 0, 0
while a0 < #ARGV do
  local n = tonumber(ARGV[a0 + 1])
  if n == nil or n < 1 then return redis.error_reply('decide: bad tier count at argument ' .. (a0 + 1)) end
  decide(k0, a0, n)
  k0 = k0 + 2 * n
  a0 = a0 + 5 + 4 * n
end
return reply
`,
);
