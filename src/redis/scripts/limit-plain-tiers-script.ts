import { defineScript } from './redis-script.js';

/**
 * Decides one attempt for one id across several tiers on the caller's clock,
 * atomically, and records it (SPEC "Exact semantics" steps 1 to 5;
 * "Stacking"), answering only whether it was blocked. It is the limit script
 * (./limit-script.ts) for the stack users build most: tiers with no gap rule
 * that do not count blocked attempts (per second, per minute, per day). With
 * neither rule there is nothing to read but the count and nothing to trim, so
 * each tier needs three arguments where the general script takes six: Redis
 * reads every argument of every call, and on a 3-tier stack the shorter
 * request costs Redis and the client measurably less (docs/benchmarks.md).
 *
 * Per tier: drop what left the window and count. The first full tier blocks,
 * and a blocked attempt writes nothing, so the rest are not read. When every
 * tier has room, record the attempt in each and push back its expiry; a tier
 * that had room holds at most `maxInInterval` afterwards, so nothing needs
 * trimming.
 *
 * KEYS[i]      the sorted set of tier i; every key of one call shares a hash tag (the id)
 * ARGV[1]      now, integer microseconds since the epoch (the score recorded)
 * ARGV[2]      the member recorded for this attempt, unique to it
 * ARGV[3i] to ARGV[3i + 2], for tier i (i = 1, 2, ...):
 *              the window's cut-off now - interval (µs), maxInInterval, the TTL to set (ms)
 *
 * Returns 1 when the attempt is blocked, 0 when it is allowed.
 *
 * With one key this is the one-tier script's default call, argument for
 * argument; the one-tier script stays, because it also serves a gap rule and
 * counted blocked attempts.
 */
export const LIMIT_PLAIN_TIERS_SCRIPT = defineScript(
  'limit (plain tiers)',
  `for i = 1, #KEYS do
  local key = KEYS[i]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[3 * i])
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 * i + 1]) then return 1 end
end
for i = 1, #KEYS do
  local key = KEYS[i]
  redis.call('ZADD', key, ARGV[1], ARGV[2])
  redis.call('PEXPIRE', key, ARGV[3 * i + 2])
end
return 0
`,
);
