import { defineScript } from './redis-script.js';

/**
 * `settle`: sets the cost of an admitted action in every tier of one id that counts cost, in one atomic step
 * (docs/semantics.md, "Costs"). A tier settles the action only when its window still holds the admitted record;
 * its weights' live sum moves by the difference (for a record after pastAt), so the next decision weighs the window as settled.
 */
export const SETTLE_SCRIPT = defineScript(
  'settle',
  `-- rolling-window-limiter: the settle script.
--
-- KEYS, per tier that counts cost (all in one hash slot):
--   key        the tier's sorted set of records
--   weights    its weights: each record's cost by its member, and 'live', the weight of the records stamped after
--              'pastAt' (or of every record, without a pastAt), which a settlement moves for such a record only;
--              an admitted action is never among 'anon'
-- ARGV:
--   member     the admitted action's member: '+' and its action id
--   cost       what the action used: an integer from 0
--   now        the stamp, integer microseconds; '' to read Redis TIME
--   then per tier, in the order of KEYS:
--     interval   microseconds: the record must be stamped after now - interval
--
-- Reply: in how many tiers the action was settled (0: none held it admitted in its window, and nothing changed), or
-- -1 when the settlement would make a tier's live records weigh more than SETTLED_LIMIT (2^51: with what attempts may
-- add, they stay below 2^52, where the decide script stops recording, far from 2^53, where sums stop counting by
-- ones), and nothing changed.

local SETTLED_LIMIT = 2251799813685248
local member, cost, nowText = ARGV[1], ARGV[2] + 0, ARGV[3]
local now
if nowText == '' then
  -- Redis 3.2 and 4.x replicate a script that reads TIME and then writes only by its effects, when asked first.
  if redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  now = time[1] * 1000000 + time[2]
else
  now = nowText + 0
end

-- First what each tier would change (nothing is written unless every tier can take it), then the changes.
local changeOf, liveOf, settled = {}, {}, 0
for i = 1, #KEYS, 2 do
  local key, weights, interval = KEYS[i], KEYS[i + 1], ARGV[3 + (i + 1) / 2] + 0
  local stamp = redis.call('ZSCORE', key, member)
  if stamp and stamp + 0 > now - interval then
    local held = redis.call('HMGET', weights, member, 'live', 'pastAt')
    local change, pastAt = cost - (tonumber(held[1]) or 0), tonumber(held[3])
    local live = not pastAt or stamp + 0 > pastAt
    if change > 0 and live and (tonumber(held[2]) or 0) + change > SETTLED_LIMIT then return -1 end
    changeOf[i], liveOf[i] = change, live
    settled = settled + 1
  end
end
for i = 1, #KEYS, 2 do
  local change, weights = changeOf[i], KEYS[i + 1]
  if change and change ~= 0 then
    redis.call('HSET', weights, member, ARGV[2])
    if liveOf[i] then redis.call('HINCRBY', weights, 'live', string.format('%d', change)) end
  end
end
return settled
`,
  '410c992e450fb0f3027333036e6c6b0c8944b55a',
);
