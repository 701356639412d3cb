import { defineScript } from './redis-script.js';

/**
 * `undo`: removes an admitted action's record from every tier of one id in
 * one step, as one `MULTI` of `ZREM`s would, for the clients that run scripts.
 *
 * A script rather than a `MULTI` for the reason `CLEAR_SCRIPT` gives: on a
 * server at its `maxmemory` under `noeviction` Redis refuses every command
 * queued in a `MULTI`, but runs a script declared without flags whose writes
 * only free memory, as `ZREM` does.
 *
 * KEYS, per tier (a pair each, all in one hash slot):
 *   1  the tier's key: a sorted set of the id's records
 *   2  its action-records key (`actionRecordsKey`): the records that carry an action id
 *
 * ARGV:
 *   1  the member of the admitted action (`admittedMember`: '+' and its action id)
 *
 * Returns in how many tiers the tier's key held the member (0 when there was
 * nothing to undo).
 */
export const UNDO_SCRIPT = defineScript(
  'undo',
  `local removed = 0
for i = 1, #KEYS, 2 do
  removed = removed + redis.call('ZREM', KEYS[i], ARGV[1])
  redis.call('ZREM', KEYS[i + 1], ARGV[1])
end
return removed
`,
);
