import { defineScript } from './redis-script.js';

/**
 * Decides one attempt for one id under one limiter on the caller's clock,
 * atomically, and records it (SPEC "Exact semantics" steps 1 to 5), answering
 * only whether it was blocked. It is the limit script (./limit-script.ts) for
 * the case users call most (one limiter, a local clock, `countBlocked: false`
 * or `useScript: true`), with the fewest arguments that case needs: Redis
 * reads every argument of every call, and at tens of thousands of calls a
 * second a shorter request is measurably cheaper (docs/benchmarks.md). The
 * last two arguments are left out when they are the default (no gap rule,
 * blocked attempts not counted), so the default call sends five.
 *
 * Drop what left the window, count, read the newest timestamp only when there
 * is a gap rule and something to compare with; then, when the attempt is
 * recorded, add it, trim to the newest `maxInInterval` (only when the window
 * was full) and push back the expiry. A blocked attempt that does not count
 * writes nothing.
 *
 * KEYS[1]  the id's sorted set
 * ARGV[1]  now, integer microseconds since the epoch (the score recorded)
 * ARGV[2]  the member recorded for this attempt, unique to it
 * ARGV[3]  the window's cut-off, now - interval (µs): a timestamp this old no longer counts
 * ARGV[4]  maxInInterval
 * ARGV[5]  the TTL to set (ms)
 * ARGV[6]  minDifference (µs); absent or '0' for no gap rule
 * ARGV[7]  '1' when blocked attempts are recorded too (countBlocked); absent or '0' when not
 *
 * Returns 1 when the attempt is blocked, 0 when it is allowed.
 *
 * Everything the caller can compute travels as the string Redis wants (see
 * ./limit-script.ts); the only number converted here is the trim rank, and
 * only when the window was full.
 */
export const LIMIT_ONE_TIER_SCRIPT = defineScript(
  'limit (one tier)',
  `local key = KEYS[1]
redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[3])
local count = redis.call('ZCARD', key)
local max = tonumber(ARGV[4])
local blocked = count >= max
local gap = ARGV[6]
if not blocked and count > 0 and gap and gap ~= '0' then
  blocked = tonumber(ARGV[1]) - tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2]) < tonumber(gap)
end
if blocked and ARGV[7] ~= '1' then return 1 end
redis.call('ZADD', key, ARGV[1], ARGV[2])
if count >= max then redis.call('ZREMRANGEBYRANK', key, 0, count - max) end
redis.call('PEXPIRE', key, ARGV[5])
if blocked then return 1 end
return 0
`,
);
