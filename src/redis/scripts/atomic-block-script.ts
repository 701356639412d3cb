import { defineScript } from './redis-script.js';

/**
 * Several commands run as one atomic step, in one script call: what MULTI/EXEC
 * does, for a client that offers a transaction only through a class of its
 * own package (Valkey GLIDE's `Batch`), which the library does not import.
 * Like EXEC it answers one reply per command; unlike EXEC it stops at the
 * first command that fails, and the call fails with that command's error
 * (EXEC would run the rest, and the adapters then fail the call anyway).
 * Replies come back as Lua sees them (RESP2): `WITHSCORES` as a flat list.
 *
 * KEYS:
 *   1  the first command's first key: it routes the call on a Cluster, where
 *      every key of the commands lives in its hash slot (one id's keys share a hash tag)
 *
 * ARGV, per command in order:
 *   n            the command's length (its name and its arguments)
 *   name, args…  the command, n values
 *
 * Returns the commands' replies, in order.
 */
export const ATOMIC_BLOCK_SCRIPT = defineScript(
  'atomic block',
  `local replies = {}
local at = 1
while at <= #ARGV do
  local length = tonumber(ARGV[at])
  replies[#replies + 1] = redis.call(unpack(ARGV, at + 1, at + length))
  at = at + length + 1
end
return replies
`,
  '3a04304b843911c6b51aa6401ad361f2c909365b',
);
