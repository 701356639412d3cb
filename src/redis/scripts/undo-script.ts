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
--              'live', the weight of the records stamped after 'pastAt' (or of every record, without a pastAt),
--              which an undo moves for such a record only; an admitted action is never among 'anon' (the records
--              without an action id)
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
    local held = redis.call('HMGET', weights, ARGV[1], 'pastAt')
    local weight, pastAt = tonumber(held[1]), tonumber(held[2])
    if weight then
      redis.call('HDEL', weights, ARGV[1])
      if weight ~= 0 and (not pastAt or stamp + 0 > pastAt) then
        redis.call('HINCRBY', weights, 'live', string.format('%d', -weight))
      end
    end
    removed = removed + 1
  end
end
return removed
`,
  '988bb1fbada27529a1387139def46f3359c8fb94',
);
