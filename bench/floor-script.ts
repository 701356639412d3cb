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
