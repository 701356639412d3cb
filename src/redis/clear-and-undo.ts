// `clear`, `undo` and `settle` on Redis, each one atomic step over an id's keys
// (one hash slot): a script where the client runs scripts, which Redis also
// runs at its `maxmemory` (src/redis/scripts/clear-script.ts says why), and,
// for `clear` and `undo`, a MULTI of the same commands where it does not
// (redis-mock, `useScript: false`, which never count cost).

import { actionRecordsKey, admittedMember, recordWeightsKey } from '../core/identity.js';
import type { RedisAdapter } from './adapters/adapter.js';
import { settlementTooHeavy } from '../core/bounds.js';
import { readInteger } from './replies.js';
import { CLEAR_SCRIPT } from './scripts/clear-script.js';
import { runScript } from './adapters/run-script.js';
import { UNDO_SCRIPT } from './scripts/undo-script.js';
import { SETTLE_SCRIPT } from './scripts/settle-script.js';
import type { Tier } from '../core/store.js';

/** Each key followed by its action-records key: what `clear` deletes and `undo` removes from on the MULTI path. */
function withActionRecords(keys: readonly string[]): string[] {
  return keys.flatMap((key) => [key, actionRecordsKey(key)]);
}

/** Each key followed by its action-records key and its weights (held only by a tier that counts cost): what the scripts take. */
function withActionRecordsAndWeights(keys: readonly string[]): string[] {
  return keys.flatMap((key) => [key, actionRecordsKey(key), recordWeightsKey(key)]);
}

/** Deletes the keys (and their action records and weights) in one call of {@link CLEAR_SCRIPT}. */
export function clearWithScript(redis: RedisAdapter, keys: readonly string[]): Promise<void> {
  return runScript(redis, CLEAR_SCRIPT, withActionRecordsAndWeights(keys), [], () => undefined);
}

/** Deletes the keys (and their action records) in one MULTI of `DEL`s. */
export async function clearWithMulti(redis: RedisAdapter, keys: readonly string[]): Promise<void> {
  await redis.transaction(withActionRecords(keys).map((key) => ['del', key]));
}

/** Removes the admitted action from the keys in one call of {@link UNDO_SCRIPT}; true when a key held it. */
export function undoWithScript(redis: RedisAdapter, keys: readonly string[], actionId: string): Promise<boolean> {
  return runScript(
    redis,
    UNDO_SCRIPT,
    withActionRecordsAndWeights(keys),
    [admittedMember(actionId)],
    (reply) => readInteger(reply, `the ${UNDO_SCRIPT.name} script`) > 0,
  );
}

/** Removes the admitted action from the keys in one MULTI of `ZREM`s; true when a key held it. */
export async function undoWithMulti(redis: RedisAdapter, keys: readonly string[], actionId: string): Promise<boolean> {
  const member = admittedMember(actionId);
  const replies = await redis.transaction(withActionRecords(keys).map((key) => ['zrem', key, member]));
  // Every other reply is the key's own; the others are its action records'.
  return replies.some((reply, i) => i % 2 === 0 && readInteger(reply, 'ZREM') > 0);
}

/**
 * Sets the admitted action's cost in every tier (each one that counts cost) whose window at `now` holds it, in one
 * call of {@link SETTLE_SCRIPT}; true when one did.
 */
export function settleWithScript(redis: RedisAdapter, tiers: readonly Tier[], now: number | undefined, actionId: string, cost: number): Promise<boolean> {
  return runScript(
    redis,
    SETTLE_SCRIPT,
    tiers.flatMap((tier) => [tier.key, recordWeightsKey(tier.key)]),
    [admittedMember(actionId), cost, now ?? '', ...tiers.map((tier) => tier.rule.intervalUs)],
    (reply) => {
      const settled = readInteger(reply, `the ${SETTLE_SCRIPT.name} script`);
      if (settled < 0) {
        throw settlementTooHeavy(
          tiers.map((tier) => tier.key),
          actionId,
          cost,
        );
      }
      return settled > 0;
    },
  );
}
