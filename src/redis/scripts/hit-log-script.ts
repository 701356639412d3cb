import { defineScript } from './redis-script.js';

/**
 * The hit log of the HTTP stores (src/http/stores/hit-log): every request to a key
 * is one hit, blocked ones too, and each request is judged by its own rule
 * (a window and a limit), whatever rules the other requests to the key had.
 * Records a hit (or only reads) and answers, in the same call, how many hits
 * the request's window holds and the one hit whose leaving changes that.
 *
 * What a key keeps is never cut by a smaller rule: its rules key remembers
 * the largest window and the largest limit + 1 that any rule recording on the
 * key has used, and the log is trimmed by those (every hit of that window,
 * at most that many of the newest), so a request under any rule seen so far
 * is counted exactly up to its limit + 1.
 *
 * KEYS:
 *   1  the log: a sorted set, score = the hit's microsecond timestamp, member = a unique token
 *   2  the rules key: a hash with `w` (the largest window, µs) and `k` (the largest limit + 1);
 *      the log's key plus a suffix after its hash tag, so both live in one Cluster slot
 *   3  (optional) the block key: a string holding the end of the key's block (µs); the log's key plus
 *      another suffix. Given, only admitted requests are recorded: a request while the block lasts is
 *      only read; one that would take the window over the limit is refused, not recorded, answered with
 *      count = limit + 1, and starts a block of ARGV[5] (when > 0)
 *
 * ARGV:
 *   1  now: integer microseconds since the epoch
 *   2  this request's window, in microseconds (>= 1)
 *   3  this request's limit (>= 0)
 *   4  the member to record, or '' to read without writing anything (no member, no TTL change)
 *   5  with KEYS[3]: how long a block lasts, in microseconds (0: no block, the request is only refused)
 *
 * Returns {count, at, blockedUntil}: count = the hits in the window (now - window, now], the
 * recorded one included, capped at limit + 1; at = the score of the k-th
 * newest of them, or -1 when there is none. When recording, k = count capped
 * at the limit (at least 1): the oldest hit while the window has room, else
 * the hit whose leaving would admit a request. When reading, k = count: the
 * oldest counted hit, whose leaving drops the count (and so while a block
 * lasts). blockedUntil = the end of the block that refuses this request (one
 * found, or one this request started), or -1. Both keys expire after the
 * largest window of the key (written with every hit), the block key when the
 * block ends.
 *
 * Scores are written with string.format('%.0f'): Lua's own number-to-string
 * conversion keeps 14 digits, and microsecond timestamps have 16.
 */
export const HIT_LOG_SCRIPT = defineScript(
  'hit-log',
  `local log = KEYS[1]
local rules = KEYS[2]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local member = ARGV[4]
local recording = member ~= ''
local block = KEYS[3]
local blockedUntil = -1
local refused = false
local from = '(' .. string.format('%.0f', now - window)
if block then
  local ends = tonumber(redis.call('GET', block))
  if ends and ends > now then
    blockedUntil = ends
    recording = false
  end
end
if recording then
  local kept = redis.call('HMGET', rules, 'w', 'k')
  local keptWindow = math.max(tonumber(kept[1]) or 0, window)
  local keptCount = math.max(tonumber(kept[2]) or 0, limit + 1)
  redis.call('HSET', rules, 'w', string.format('%.0f', keptWindow), 'k', keptCount)
  redis.call('ZREMRANGEBYSCORE', log, '-inf', string.format('%.0f', now - keptWindow))
  if block and redis.call('ZCOUNT', log, from, '+inf') >= limit then
    refused = true
  else
    redis.call('ZADD', log, string.format('%.0f', now), member)
    redis.call('ZREMRANGEBYRANK', log, 0, -keptCount - 1)
  end
  local ttl = math.ceil(keptWindow / 1000)
  redis.call('PEXPIRE', log, ttl)
  redis.call('PEXPIRE', rules, ttl)
end
local count = math.min(redis.call('ZCOUNT', log, from, '+inf'), limit + 1)
if refused then count = limit + 1 end
local k = count
if recording then k = math.max(1, math.min(count, limit)) end
local at = -1
if count > 0 then
  local found = redis.call('ZREVRANGEBYSCORE', log, '+inf', from, 'WITHSCORES', 'LIMIT', k - 1, 1)
  if found[2] then at = tonumber(found[2]) end
end
local blockFor = tonumber(ARGV[5]) or 0
if refused and blockFor > 0 then
  blockedUntil = now + blockFor
  redis.call('SET', block, string.format('%.0f', blockedUntil), 'PX', math.ceil(blockFor / 1000))
end
return {count, at, blockedUntil}
`,
);
