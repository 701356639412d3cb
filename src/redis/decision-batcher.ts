// `batch: true`: decisions asked for in the same turn of the event loop go
// to Redis as one call of the decide script, which decides them in call
// order, each as if it had been sent alone. One command then serves many
// decisions: Redis and the client pay its fixed cost once per batch.

import type { StoreDecision } from '../stores/store.js';
import type { RedisAdapter } from './adapters/adapter.js';
import { keySlot } from './adapters/key-slot.js';
import { decideBatchWithScript, type ScriptDecision } from './script-path.js';

/** The most decisions one script call carries. */
export const MAX_BATCH_SIZE = 256;

interface Waiting {
  readonly decision: ScriptDecision;
  readonly resolve: (decision: StoreDecision) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Collects the decisions of one Redis client and sends them in batches. When
 * no batch is out, a call goes with the next microtask (a lone call does not
 * wait for company); while batches are out, calls gather until the loop has
 * read what arrived (`setImmediate`), as the callers those replies release
 * come back together. On a Cluster a batch holds the keys of one hash slot
 * (one id's, by its hash tag), so calls are grouped per slot.
 */
export class DecisionBatcher {
  readonly #redis: RedisAdapter;
  /** Decisions not sent yet, per hash slot (one group when the client is not a Cluster). */
  readonly #waiting = new Map<number, Waiting[]>();
  #flushScheduled = false;
  #batchesOut = 0;

  constructor(redis: RedisAdapter) {
    this.#redis = redis;
  }

  /** Decides `decision` in the next batch of its slot. */
  decide(decision: ScriptDecision): Promise<StoreDecision> {
    return new Promise((resolve, reject) => {
      const slot = this.#redis.isCluster ? keySlot((decision.tiers[0] as { key: string }).key) : 0;
      let group = this.#waiting.get(slot);
      if (group === undefined) {
        group = [];
        this.#waiting.set(slot, group);
      }
      group.push({ decision, resolve, reject });
      if (group.length === MAX_BATCH_SIZE) {
        this.#waiting.delete(slot);
        this.#send(group);
      } else if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        if (this.#batchesOut === 0) queueMicrotask(this.#flush);
        else setImmediate(this.#flush);
      }
    });
  }

  readonly #flush = (): void => {
    this.#flushScheduled = false;
    const groups = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const group of groups) this.#send(group);
  };

  #send(group: readonly Waiting[]): void {
    this.#batchesOut += 1;
    decideBatchWithScript(
      this.#redis,
      group.map((waiting) => waiting.decision),
    ).then(
      (outcomes) => {
        this.#batchesOut -= 1;
        outcomes.forEach((outcome, i) => {
          const waiting = group[i] as Waiting;
          if (outcome instanceof Error) waiting.reject(outcome);
          else waiting.resolve(outcome);
        });
      },
      (error: unknown) => {
        this.#batchesOut -= 1;
        for (const waiting of group) waiting.reject(error);
      },
    );
  }
}

const batchers = new WeakMap<object, DecisionBatcher>();

/** The batcher of the client behind `redis`: every `batch: true` limiter on one client shares it. */
export function batcherFor(redis: RedisAdapter): DecisionBatcher {
  let batcher = batchers.get(redis.client);
  if (batcher === undefined) {
    batcher = new DecisionBatcher(redis);
    batchers.set(redis.client, batcher);
  }
  return batcher;
}
