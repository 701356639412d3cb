import { defineScript } from './redis-script.js';

/**
 * Decides one attempt for one id across one or more tiers, atomically, and
 * records it (SPEC "Exact semantics" steps 1 to 5; "Stacking"), answering
 * only whether it was blocked: what `limit()` needs, and nothing more. It
 * serves `limit()` wherever a script decides (`countBlocked: false`,
 * `useScript: true`, `clock: 'redis'`, stacks), when there is no action id;
 * `limitWithInfo()`, dry runs and action ids use the decide script, which
 * also returns the numbers behind the decision.
 *
 * It does per tier what the least script must: drop what left the window,
 * count, read the newest timestamp only when a gap rule needs it; then, when
 * the attempt is recorded, add it, trim to the newest `maxInInterval` (only
 * when the set is full) and push back the expiry. A blocked attempt in a tier
 * that does not count blocked attempts writes nothing.
 *
 * KEYS[i]      the sorted set of tier i; every key of one call shares a hash tag (the id)
 * ARGV[1]      now, integer microseconds since the epoch; '' to read Redis TIME
 * ARGV[2]      the member recorded for this attempt, unique to it
 * ARGV[3 + 6i] to ARGV[8 + 6i], for tier i (i = 0, 1, ...):
 *              interval (µs), maxInInterval, minDifference (µs), countBlocked ('1' or '0'),
 *              the TTL to set (ms), and the window's cut-off now - interval (µs), or '' with the Redis
 *              clock (then computed here)
 *
 * Returns 1 when the attempt is blocked, 0 when it is allowed.
 *
 * Numbers the caller can compute travel as the strings Redis wants: turning
 * Lua numbers into strings (`string.format`, and `redis.call` with a number)
 * made up a third of this script's time in Redis. A computed score is written
 * with string.format('%.0f'), because Lua's own conversion keeps 14 digits
 * and microsecond timestamps have 16.
 */
export const LIMIT_SCRIPT = defineScript(
  'limit',
  `local now, score
if ARGV[1] == '' then
  if redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
  score = string.format('%.0f', now)
else
  score = ARGV[1]
  now = tonumber(score)
end
local blocked = false
local counts = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local at = 6 * i - 3
  local cutoff = ARGV[at + 5]
  if cutoff == '' then cutoff = string.format('%.0f', now - tonumber(ARGV[at])) end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', cutoff)
  local count = redis.call('ZCARD', key)
  counts[i] = count
  if count >= tonumber(ARGV[at + 1]) then
    blocked = true
  elseif count > 0 and ARGV[at + 2] ~= '0' then
    if now - tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]) < tonumber(ARGV[at + 2]) then blocked = true end
  end
end
for i = 1, #KEYS do
  local at = 6 * i - 3
  if not blocked or ARGV[at + 3] == '1' then
    local key = KEYS[i]
    local max = tonumber(ARGV[at + 1])
    redis.call('ZADD', key, score, ARGV[2])
    if counts[i] >= max then redis.call('ZREMRANGEBYRANK', key, 0, -1 - max) end
    redis.call('PEXPIRE', key, ARGV[at + 4])
  end
end
return blocked and 1 or 0
`,
);
