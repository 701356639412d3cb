import type { StoreDecision, Tier } from '../core/store.js';
import type { StoreError } from '../errors/store-error.js';
import type { RedisAdapter } from './adapters/adapter.js';
import { clearWithScript, settleWithScript, undoWithScript } from './clear-and-undo.js';
import { encodeCall, readOutcomes, type ScriptDecision } from './decide/decide-codec.js';
import { DECIDE_SCRIPT } from './decide/decide-script.js';
import { DecisionBatcher } from './decide/decision-batcher.js';
import { RedisStore } from './redis-store.js';
import { runScript } from './adapters/run-script.js';

/**
 * The Redis store that decides with the decide script, the default wherever the client runs scripts: every attempt
 * and dry run is one EVALSHA (every mode alike: `countBlocked` either way, stacked tiers, the Redis clock, action
 * ids), or, with `batch: true`, rides in the next batch of its client's decisions; `clear` and `undo` are one
 * EVALSHA each of their own scripts. The scripts also run where a MULTI cannot: on a server at its `maxmemory`
 * under `noeviction`, Redis refuses whatever is queued in a MULTI but runs scripts whose writes only free memory,
 * so `clear`, `undo` and dry runs still work there.
 */
export class ScriptStore extends RedisStore {
  /** Whether decisions ride in batches (`batch: true`). */
  readonly batched: boolean;
  readonly #decide: (decision: ScriptDecision) => Promise<StoreDecision>;

  constructor(adapter: RedisAdapter, batched: boolean) {
    super(adapter);
    this.batched = batched;
    if (batched) {
      const batcher = batcherFor(adapter);
      this.#decide = (decision) => batcher.decide(decision);
    } else {
      this.#decide = (decision) => decideWithScript(adapter, decision);
    }
  }

  async attempt(tiers: readonly Tier[], now: number | undefined, actionId?: string, cost?: number, singleUse?: boolean): Promise<StoreDecision> {
    return this.checked(this.#decide({ tiers, now, dryRun: false, actionId, cost, singleUse }));
  }

  async peek(tiers: readonly Tier[], now: number | undefined, cost?: number): Promise<StoreDecision> {
    return this.checked(this.#decide({ tiers, now, dryRun: true, cost }));
  }

  async settle(tiers: readonly Tier[], now: number | undefined, actionId: string, cost: number): Promise<boolean> {
    return this.checked(settleWithScript(this.adapter, tiers, now, actionId, cost));
  }

  async clear(keys: readonly string[]): Promise<void> {
    return this.checked(clearWithScript(this.adapter, keys));
  }

  async undo(keys: readonly string[], actionId: string): Promise<boolean> {
    return this.checked(undoWithScript(this.adapter, keys, actionId));
  }
}

/** Decides (and, unless `dryRun`, records) an attempt across tiers with one call of the decide script. */
export function decideWithScript(redis: RedisAdapter, decision: ScriptDecision): Promise<StoreDecision> {
  return decideBatchWithScript(redis, [decision]).then(([outcome]) => {
    if (outcome instanceof Error) throw outcome;
    return outcome as StoreDecision;
  });
}

/**
 * Decides a batch of decisions, in order, with one call of the decide script; all their keys must live in one
 * hash slot. Resolves to each decision's outcome, or the error that decision alone failed with; rejects when the
 * call fails.
 */
export function decideBatchWithScript(redis: RedisAdapter, decisions: readonly ScriptDecision[]): Promise<(StoreDecision | StoreError)[]> {
  const { keys, args } = encodeCall(decisions);
  return runScript(redis, DECIDE_SCRIPT, keys, args, (reply) => readOutcomes(decisions, reply));
}

/** The batcher of each client, by its object: every `batch: true` limiter and stack on one client shares it. */
const batchers = new WeakMap<object, DecisionBatcher>();

/** The batcher of the client behind `redis`, made at its first batched store. */
export function batcherFor(redis: RedisAdapter): DecisionBatcher {
  let batcher = batchers.get(redis.client);
  if (batcher === undefined) {
    batcher = new DecisionBatcher(redis, decideBatchWithScript);
    batchers.set(redis.client, batcher);
  }
  return batcher;
}
