// The bare Lua floor: the least a script needs to make this decision, with no
// library around it. Prune what left the window, count, compare with the
// maximum, and only when allowed add the attempt and push the expiry back
// (the same writes the library's script makes with countBlocked false).
//
// KEYS[1] the id's sorted set
// ARGV[1] now (µs, decimal string)      ARGV[2] now - interval (µs, decimal string)
// ARGV[3] maxInInterval                 ARGV[4] a member unique to the attempt
// ARGV[5] interval (ms)
// Returns 1 when allowed, 0 when blocked.
//
// The cut-off is computed by the caller: a Lua number turned back into a
// string keeps 14 digits, and microsecond timestamps have 16.

export const FLOOR_LUA = `redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

// The bare Lua floor of a stack: the least a script needs to decide several
// tiers of one id at once, all countBlocked false, no gap rule. For each tier,
// prune what left its window and count; the first full tier blocks, and
// nothing is added anywhere. Only when every tier allows, add the attempt to
// each tier and push each expiry back (the writes the library's stack makes
// with countBlocked false on every tier). The keys share the `{<id>}` hash
// tag, so one call may touch them all (as the library's stack does).
//
// KEYS[i] tier i's sorted set (i = 1 … #KEYS)
// ARGV[1] now (µs, decimal string)      ARGV[2] a member unique to the attempt
// then for tier i, from ARGV[3i]:
// ARGV[3i] now - interval_i (µs, decimal string)   ARGV[3i+1] maxInInterval_i   ARGV[3i+2] interval_i (ms)
// Returns 1 when allowed, 0 when blocked.
//
// The cut-offs are computed by the caller, for the same reason as above.

export const FLOOR_LUA_STACK = `for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[3 * i])
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[3 * i + 1]) then return 0 end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], ARGV[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[i], ARGV[3 * i + 2])
end
return 1
`;
