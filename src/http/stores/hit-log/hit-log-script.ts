import { defineScript } from '../../../redis/scripts/redis-script.js';

/**
 * The hit log of the HTTP stores (src/http/stores/hit-log): every request to a key
 * is one hit, blocked ones too, and each request is judged by its own rule
 * (a window and a limit), whatever rules the other requests to the key had.
 * Records a hit (or only reads) and answers, in the same call, how many hits
 * the request's window holds and the one hit whose leaving changes that.
 *
 * What a key keeps is never cut by a smaller rule: its rules key remembers
 * the largest window and the largest limit + 1 that any rule recording on the
 * key has used (call it kept), and the log is trimmed by those: every hit of
 * that window, and of each kind at most kept of the newest. The kinds: a hit
 * is admitted when its window had room for it (fewer than its limit before
 * it), refused otherwise. A give-back (ZREM of one member, outside this
 * script) removes only its own hit, so the trim must never drop a hit that
 * still holds a slot: under one rule a window holds at most limit admitted
 * hits, fewer than kept, so no admitted hit in the window is ever dropped;
 * refused hits are bounded apart (the refused key) and the oldest goes first,
 * which frees no admitted slot. Counts are exact up to limit + 1 either way:
 * a dropped hit in a window means kept newer hits of its kind are in it too.
 *
 * One call judges one request on one or more keys (distinct ones), each with
 * its own rule: a group of KEYS and a group of ARGV per key.
 *
 * KEYS, per key (ARGV[3] of them):
 *   1  the log: a sorted set, score = the hit's microsecond timestamp, member = a unique token
 *   2  the rules key: a hash with `w` (the largest window, µs) and `k` (the largest limit + 1);
 *      the log's key plus a suffix after its hash tag, so both live in one Cluster slot
 *   3  the refused key: a sorted set of the log's refused hits again (same scores and members), to
 *      bound them apart; the log's key plus another suffix
 *   4  (with ARGV[3] = 4) the block key: a string holding the end of the key's block (µs); the log's key
 *      plus another suffix. Given, only admitted requests are recorded: the request is admitted when no
 *      key's block lasts and no key's window would go over its limit, and then recorded on every key
 *      (all are judged before any is written). Otherwise nothing is recorded: a key whose block lasts,
 *      or that admits, is only read; a key whose window would go over its limit refuses, is answered
 *      with count = limit + 1, and starts a block of its block length (when > 0)
 *
 * ARGV:
 *   1  now: integer microseconds since the epoch
 *   2  the member to record, or '' to read without writing anything (no member, no TTL change)
 *   3  how many KEYS each key has: 3, or 4 with a block key
 *   then, per key (one fewer than its KEYS): its window, in microseconds (>= 1); its limit (>= 0);
 *   with block keys, how long its block lasts, in microseconds (0: no block, the request is only refused)
 *
 * Returns {count, at, blockedUntil} per key, one after the other: count = the hits in the window
 * (now - window, now], the recorded one included, capped at limit + 1; at = the score of the k-th
 * newest of them, or -1 when there is none, where k = count capped at the limit (at least 1): the
 * oldest hit while the window has room, else the hit whose leaving would admit a request (every hit
 * counts, refused ones too), whether recording or reading. blockedUntil = the end of the block that refuses
 * this request on the key (one found, or one this request started), or -1. A key's log, rules and
 * refused keys expire after its largest window (written with every hit), the block key when the
 * block ends.
 *
 * Scores are written with string.format('%.0f'): Lua's own number-to-string
 * conversion keeps 14 digits, and microsecond timestamps have 16.
 */
export const HIT_LOG_SCRIPT = defineScript(
  'hit-log',
  `local now = tonumber(ARGV[1])
local member = ARGV[2]
local size = tonumber(ARGV[3])
local judged = {}
local refusedAny = false
for first = 1, #KEYS, size do
  local arg = 4 + (first - 1) / size * (size - 1)
  local s = { log = KEYS[first], rules = KEYS[first + 1], refusedLog = KEYS[first + 2], window = tonumber(ARGV[arg]),
    limit = tonumber(ARGV[arg + 1]), blockFor = 0, recording = member ~= '', blockedUntil = -1 }
  if size == 4 then
    s.block = KEYS[first + 3]
    s.blockFor = tonumber(ARGV[arg + 2])
  end
  s.from = '(' .. string.format('%.0f', now - s.window)
  if s.block then
    local ends = tonumber(redis.call('GET', s.block))
    if ends and ends > now then
      s.blockedUntil = ends
      s.recording = false
      refusedAny = true
    end
  end
  if s.recording then
    local kept = redis.call('HMGET', s.rules, 'w', 'k')
    local keptWindow = math.max(tonumber(kept[1]) or 0, s.window)
    s.keptCount = math.max(tonumber(kept[2]) or 0, s.limit + 1)
    s.ttl = math.ceil(keptWindow / 1000)
    redis.call('HSET', s.rules, 'w', string.format('%.0f', keptWindow), 'k', s.keptCount)
    local gone = string.format('%.0f', now - keptWindow)
    redis.call('ZREMRANGEBYSCORE', s.log, '-inf', gone)
    redis.call('ZREMRANGEBYSCORE', s.refusedLog, '-inf', gone)
    s.full = redis.call('ZCOUNT', s.log, s.from, '+inf') >= s.limit
    if s.block and s.full then
      s.refused = true
      refusedAny = true
    end
  end
  judged[#judged + 1] = s
end
local reply = {}
for _, s in ipairs(judged) do
  if s.recording then
    if not refusedAny then
      local score = string.format('%.0f', now)
      redis.call('ZADD', s.log, score, member)
      if s.full then
        -- A refused hit (never under a block key, which records admitted hits only): bounded apart, oldest first.
        redis.call('ZADD', s.refusedLog, score, member)
        local over = redis.call('ZCARD', s.refusedLog) - s.keptCount
        if over > 0 then
          redis.call('ZREM', s.log, unpack(redis.call('ZRANGE', s.refusedLog, 0, over - 1)))
          redis.call('ZREMRANGEBYRANK', s.refusedLog, 0, over - 1)
        end
      else
        -- An admitted hit: more than kept admitted hits only where rules of different windows share the key.
        local over = redis.call('ZCARD', s.log) - redis.call('ZCARD', s.refusedLog) - s.keptCount
        local rank = 0
        while over > 0 do
          local oldest = redis.call('ZRANGE', s.log, rank, rank)[1]
          if not oldest then break end
          if redis.call('ZSCORE', s.refusedLog, oldest) then
            rank = rank + 1
          else
            redis.call('ZREM', s.log, oldest)
            over = over - 1
          end
        end
      end
    elseif not s.refused then
      s.recording = false
    end
    redis.call('PEXPIRE', s.log, s.ttl)
    redis.call('PEXPIRE', s.rules, s.ttl)
    redis.call('PEXPIRE', s.refusedLog, s.ttl)
  end
  local count = math.min(redis.call('ZCOUNT', s.log, s.from, '+inf'), s.limit + 1)
  if s.refused then count = s.limit + 1 end
  local k = math.max(1, math.min(count, s.limit))
  local at = -1
  if count > 0 then
    local found = redis.call('ZREVRANGEBYSCORE', s.log, '+inf', s.from, 'WITHSCORES', 'LIMIT', k - 1, 1)
    if found[2] then at = tonumber(found[2]) end
  end
  if s.refused and s.blockFor > 0 then
    s.blockedUntil = now + s.blockFor
    redis.call('SET', s.block, string.format('%.0f', s.blockedUntil), 'PX', math.ceil(s.blockFor / 1000))
  end
  reply[#reply + 1] = count
  reply[#reply + 1] = at
  reply[#reply + 1] = s.blockedUntil
end
return reply
`,
  'bdf9e00b60d3c144e6ec938d9988c03b86b2514a',
);
