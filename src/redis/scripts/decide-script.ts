import { defineScript } from './redis-script.js';

/**
 * Decides one attempt for one id across one or more tiers, atomically, and
 * records it (SPEC "Exact semantics" steps 1 to 5; "Stacking").
 *
 * Used where a decision must come before the write: `countBlocked: false`,
 * stacked tiers, and `clock: 'redis'`. The caller derives the info (steps 6
 * and 7) from the samples it returns, with the same code as every other store,
 * and checks that it reaches the same allowed/blocked decision.
 *
 * KEYS[i]      the sorted set of tier i; every key of one call shares a hash tag (the id)
 * ARGV[1]      now, integer microseconds since the epoch; '' to read Redis TIME
 * ARGV[2]      the member recorded for this attempt (unique per attempt)
 * ARGV[3]      '1' to decide and record; '0' for a dry run that writes nothing
 * ARGV[4i..]   for tier i (i = 0, 1, ...), at ARGV[4 + 4i] to ARGV[7 + 4i]:
 *              interval (µs), maxInInterval, minDifference (µs), countBlocked ('1' or '0')
 *
 * Returns a flat array of integers: now, allowed (1 or 0), then for each tier
 * the sample of its recorded set S after dropping what left the window:
 * |S| (at most maxInInterval), max(S), the (k-1)-th and the k-th newest
 * (k = maxInInterval), with -1 for a value that does not exist. A few
 * numbers per tier, whatever maxInInterval is.
 *
 * Scores are written with string.format('%.0f'): Lua's own number-to-string
 * conversion keeps 14 digits, and microsecond timestamps have 16.
 */
export const DECIDE_SCRIPT = defineScript(
  'decide',
  `if redis.replicate_commands then redis.replicate_commands() end
local now
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
else
  now = tonumber(ARGV[1])
end
local record = ARGV[3] == '1'
local allowed = true
local reply = {now, 1}
for i = 1, #KEYS do
  local key = KEYS[i]
  local at = 4 * i
  local max = tonumber(ARGV[at + 1])
  local gap = tonumber(ARGV[at + 2])
  local oldest = string.format('%.0f', now - tonumber(ARGV[at]))
  local count
  if record then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', oldest)
    count = redis.call('ZCARD', key)
  else
    count = redis.call('ZCOUNT', key, '(' .. oldest, '+inf')
  end
  local newest, kMinus1th, kth = -1, -1, -1
  if count > 0 then
    newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
  end
  if max == 1 then
    if count >= 1 then kth = newest end
  elseif count >= max - 1 then
    local pair = redis.call('ZRANGE', key, -max, 1 - max, 'WITHSCORES')
    kMinus1th = tonumber(pair[#pair])
    if count >= max then kth = tonumber(pair[2]) end
  end
  if count >= max or (gap > 0 and newest >= 0 and now - newest < gap) then
    allowed = false
  end
  reply[#reply + 1] = count
  reply[#reply + 1] = newest
  reply[#reply + 1] = kMinus1th
  reply[#reply + 1] = kth
end
if not allowed then reply[2] = 0 end
if record then
  local score = string.format('%.0f', now)
  for i = 1, #KEYS do
    local at = 4 * i
    if allowed or ARGV[at + 3] == '1' then
      local key = KEYS[i]
      redis.call('ZADD', key, score, ARGV[2])
      redis.call('ZREMRANGEBYRANK', key, 0, -1 - tonumber(ARGV[at + 1]))
      redis.call('PEXPIRE', key, math.ceil(tonumber(ARGV[at]) / 1000))
    end
  end
end
return reply
`,
);
