import { defineScript } from './redis-script.js';

/**
 * `undo`: removes an admitted action's record from every tier of one id in
 * one step, as one `MULTI` of `ZREM`s would, for the clients that run scripts.
 *
 * A script rather than a `MULTI` for the reason `CLEAR_SCRIPT` gives: on a
 * server at its `maxmemory` under `noeviction` Redis refuses every command
 * queued in a `MULTI`, but runs a script declared without flags whose writes
 * only free memory, as `ZREM` and `HDEL` do (and `HINCRBY` on a field that exists).
 */
export const UNDO_SCRIPT = defineScript(
  'undo',
  `-- rolling-window-limiter: the undo script.
--
-- KEYS, per tier (three each, all in one hash slot):
--   key        the tier's sorted set of records
--   actions    its action records (actionRecordsKey): the records that carry an action id
--   weights    its weights, on a tier that counts cost (recordWeightsKey; absent otherwise): each record's cost, and
--              running sums of them: 'total' (every record), 'past' (those stamped at or before 'pastAt'), and
--              'seal' (the total the sums were written with, moved with it); an admitted action is never among
--              'anon' (the records without an action id)
-- ARGV:
--   member     the admitted action's member: '+' and its action id
--
-- Reply: in how many tiers the key held the member (0 when there was nothing to undo).

local removed = 0
for i = 1, #KEYS, 3 do
  local stamp = redis.call('ZSCORE', KEYS[i], ARGV[1])
  redis.call('ZREM', KEYS[i + 1], ARGV[1])
  if stamp then
    redis.call('ZREM', KEYS[i], ARGV[1])
    local weights = KEYS[i + 2]
    local weight = tonumber(redis.call('HGET', weights, ARGV[1]))
    if weight then
      redis.call('HDEL', weights, ARGV[1])
      if weight ~= 0 then
        local minus = string.format('%d', -weight)
        redis.call('HINCRBY', weights, 'total', minus)
        if redis.call('HEXISTS', weights, 'seal') == 1 then redis.call('HINCRBY', weights, 'seal', minus) end
        local pastAt = tonumber(redis.call('HGET', weights, 'pastAt'))
        if pastAt and stamp + 0 <= pastAt then redis.call('HINCRBY', weights, 'past', minus) end
      end
    end
    removed = removed + 1
  end
end
return removed
`,
);
