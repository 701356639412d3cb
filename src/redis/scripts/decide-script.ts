import { defineScript } from './redis-script.js';

/**
 * Decides attempts for one id each, across one or more tiers, one after the
 * other in the order given, each atomically and exactly as if it had been
 * sent alone, and records them (SPEC "Exact semantics" steps 1 to 5;
 * "Stacking"). One call carries one decision, or a batch of them
 * (`batch: true`) whose keys all live in one hash slot.
 *
 * The one script of every script mode: where a decision must come before
 * the write (`countBlocked: false`, stacked tiers, `clock: 'redis'`, attempts
 * with an action id), with `useScript: true`, and with `batch: true`. The
 * caller derives the info (steps 6 and 7) from the samples it returns, with
 * the same code as every other store, and checks that it reaches the same
 * allowed/blocked decision.
 *
 * KEYS: the keys of each decision's tiers, decision after decision; the keys
 * of one decision share a hash tag (the id).
 *
 * ARGV: for each decision, a header of five values, then four per tier:
 *   n            how many tiers (and keys) the decision has
 *   now          integer microseconds since the epoch; '' to read Redis TIME (once per call)
 *   member       the member recorded for this attempt when it has no action id ('' in a dry run)
 *   record       '1' to decide and record; '0' for a dry run that writes nothing
 *   action id    or '': its member is then '+<id>' when the action is admitted and '-<id>' when it is
 *                recorded blocked. An action id already admitted (and still stored) in any tier is
 *                answered as admitted again and records nothing. A blocked record of the same id counts
 *                like any other; recording the action again moves that record rather than adding one,
 *                and admitting it replaces the record. (Record mode only.)
 *   then per tier: interval (µs), maxInInterval, minDifference (µs), countBlocked ('1' or '0')
 *
 * Returns a flat array of integers, for each decision in turn: now, allowed
 * (1 or 0), already admitted (1 or 0), then five numbers per tier, with -1
 * for a value that does not exist. In record mode: |S| and max(S) of the
 * recorded set S after dropping what left the window (what the decision is
 * made on), then |S'|, max(S') and the k-th newest of S' (k =
 * maxInInterval) as stored afterwards. In a dry run: |S|, max(S), the
 * (k-1)-th and the k-th newest of S, and -1. A few numbers per tier,
 * whatever maxInInterval is.
 *
 * Scores are written with string.format('%.0f'): Lua's own number-to-string
 * conversion keeps 14 digits, and microsecond timestamps have 16.
 */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  `if redis.replicate_commands then redis.replicate_commands() end
local redisNow
local reply = {}

-- One decision: its keys follow KEYS[k0], its header ARGV[a0 + 1 .. a0 + 5], its tiers' values after that.
local function decide(k0, a0)
  local n = tonumber(ARGV[a0 + 1])
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
  local record = ARGV[a0 + 4] == '1'
  local actionId = ARGV[a0 + 5]
  local replayed = false
  if record then
    for i = 1, n do
      local key = KEYS[k0 + i]
      redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now - tonumber(ARGV[a0 + 4 * i + 2])))
      if actionId ~= '' and redis.call('ZSCORE', key, '+' .. actionId) then replayed = true end
    end
  end
  local allowed = true
  local samples = {}
  for i = 1, n do
    local key = KEYS[k0 + i]
    local at = a0 + 4 * i + 2
    local max = tonumber(ARGV[at + 1])
    local gap = tonumber(ARGV[at + 2])
    local count
    if record then
      count = redis.call('ZCARD', key)
    else
      count = redis.call('ZCOUNT', key, '(' .. string.format('%.0f', now - tonumber(ARGV[at])), '+inf')
    end
    local newest, kMinus1th, kth = -1, -1, -1
    if count > 0 then
      newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
    end
    if not record then
      if max == 1 then
        if count >= 1 then kth = newest end
      elseif count >= max - 1 then
        local pair = redis.call('ZRANGE', key, -max, 1 - max, 'WITHSCORES')
        kMinus1th = tonumber(pair[#pair])
        if count >= max then kth = tonumber(pair[2]) end
      end
    end
    if count >= max or (gap > 0 and newest >= 0 and now - newest < gap) then
      allowed = false
    end
    samples[i] = {count, newest, kMinus1th, kth}
  end
  local countsAfter = {}
  if record and not replayed then
    local score = string.format('%.0f', now)
    local member = ARGV[a0 + 3]
    if actionId ~= '' then member = (allowed and '+' or '-') .. actionId end
    for i = 1, n do
      local at = a0 + 4 * i + 2
      if allowed or ARGV[at + 3] == '1' then
        local key = KEYS[k0 + i]
        local max = tonumber(ARGV[at + 1])
        local count = samples[i][1]
        if actionId ~= '' and allowed then count = count - redis.call('ZREM', key, '-' .. actionId) end
        count = count + redis.call('ZADD', key, score, member)
        if count > max then
          redis.call('ZREMRANGEBYRANK', key, 0, -1 - max)
          count = max
        end
        redis.call('PEXPIRE', key, math.ceil(tonumber(ARGV[at]) / 1000))
        countsAfter[i] = count
      end
    end
  end
  reply[#reply + 1] = now
  reply[#reply + 1] = (allowed or replayed) and 1 or 0
  reply[#reply + 1] = replayed and 1 or 0
  for i = 1, n do
    local sample = samples[i]
    reply[#reply + 1] = sample[1]
    reply[#reply + 1] = sample[2]
    if record then
      local key = KEYS[k0 + i]
      local max = tonumber(ARGV[a0 + 4 * i + 3])
      local count = countsAfter[i] or sample[1]
      local newest, kth = sample[2], -1
      if countsAfter[i] then
        if actionId ~= '' then
          -- A moved record may have been the newest: read it.
          newest = count > 0 and tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]) or -1
        elseif now > newest then
          newest = now
        end
      end
      if count >= max then kth = tonumber(redis.call('ZRANGE', key, -max, -max, 'WITHSCORES')[2]) end
      reply[#reply + 1] = count
      reply[#reply + 1] = newest
      reply[#reply + 1] = kth
    else
      reply[#reply + 1] = sample[3]
      reply[#reply + 1] = sample[4]
      reply[#reply + 1] = -1
    end
  end
  return n
end

local k0, a0 = 0, 0
while a0 < #ARGV do
  local n = decide(k0, a0)
  k0 = k0 + n
  a0 = a0 + 5 + 4 * n
end
return reply
`,
);
