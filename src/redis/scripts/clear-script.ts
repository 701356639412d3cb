import { defineScript } from './redis-script.js';

/**
 * `clear`: deletes every key of one id in one step, as one `MULTI` of `DEL`s
 * would, for the clients that run scripts.
 *
 * A script rather than a `MULTI` because of a server at its `maxmemory` under
 * `noeviction`: Redis then refuses every command queued in a `MULTI` (and the
 * `EXEC` answers `EXECABORT`), while it runs a script declared without flags
 * (no `#!lua` line) and refuses only a first write that may grow memory. `DEL`
 * only frees memory, so this runs on a full server: the one way to make room
 * for an id is not refused for want of room.
 *
 * KEYS:
 *   1…n  the keys to delete: per tier, its key, its action-records key
 *        (`actionRecordsKey`) and its weights (`recordWeightsKey`, held by a
 *        tier that counts cost), all in one hash slot (one id's keys share a hash tag)
 *
 * ARGV: none.
 *
 * Returns how many of the keys existed.
 */
export const CLEAR_SCRIPT = defineScript(
  'clear',
  `return redis.call('DEL', unpack(KEYS))
`,
  '8a13a18bd8eb95c5330493f0d2085aa9bc84a32d',
);
