// `batch: true`: decisions asked for in the same turn of the event loop go
// to Redis as one call of the decide script, which decides them in call
// order, each as if it had been sent alone. One command then serves many
// decisions: Redis and the client pay its fixed cost once per batch.

import type { StoreDecision } from '../../core/store.js';
import type { RedisAdapter } from '../adapters/adapter.js';
import { keySlot } from '../adapters/key-slot.js';
import { callSizeOf, type ScriptDecision } from './decide-codec.js';

/** Sends decisions as one script call, resolving to each one's outcome or its own error (the script store's). */
export type SendBatch = (redis: RedisAdapter, decisions: readonly ScriptDecision[]) => Promise<(StoreDecision | Error)[]>;

/** The most decisions one script call carries. */
export const MAX_BATCH_SIZE = 256;

/**
 * The most keys and arguments one script call carries (a decision alone may
 * carry more): a stack of many tiers fills a call long before 256 decisions,
 * and a command of a hundred thousand arguments is slow to build and send,
 * and more than some clients can take at all.
 */
export const MAX_BATCH_ARGUMENTS = 8_192;

/** The most batches out at once per slot: two keep Redis and the client busy at the same time. */
const MAX_BATCHES_OUT = 2;

/**
 * How long decisions wait behind two batches out before they go as one more:
 * a slot whose batches stall (a Cluster answering CLUSTERDOWN while a master
 * is replaced, a slow node) holds its next decisions back no longer than this,
 * so that they ride out the stall as unbatched calls would, within their own
 * timeout.
 */
const STALL_MS = 50;

/**
 * When a batch goes out:
 * - `'overlap'`: up to two batches out per slot, so that Redis decides one while the client reads the other's
 *   replies and gathers the next; decisions made while two are out wait until one comes back (or {@link STALL_MS})
 *   and are then sent from the I/O that brought it back, whichever call's it was.
 * - `'each-turn'`: every batch goes in the microtask after its calls, from the context of the code that made them,
 *   and nothing waits behind batches out. For runtimes that tie I/O to the request that started it (Cloudflare's
 *   workerd, Vercel's edge runtime): there one request's I/O cannot settle another request's promises, so a batch
 *   sent when another request's batch came back would never answer its callers. Since each request runs its own
 *   turns, a batch holds the decisions one request made in one turn.
 */
export type FlushPolicy = 'overlap' | 'each-turn';

/**
 * The flush policy for this runtime: `'each-turn'` where I/O is tied to a request (workerd: `navigator.userAgent`
 * is `'Cloudflare-Workers'`; Vercel's edge runtime: the global `EdgeRuntime` is a string), else `'overlap'`.
 */
export function flushPolicyOf(global: object = globalThis): FlushPolicy {
  try {
    const { navigator, EdgeRuntime } = global as { navigator?: { userAgent?: unknown }; EdgeRuntime?: unknown };
    return navigator?.userAgent === 'Cloudflare-Workers' || typeof EdgeRuntime === 'string' ? 'each-turn' : 'overlap';
  } catch {
    return 'overlap';
  }
}

/** One hash slot's decisions not sent yet, its batches out, and its pending flushes. */
interface Slot {
  waiting: Waiting[];
  out: number;
  flushScheduled: boolean;
  stall: ReturnType<typeof setTimeout> | undefined;
}

interface Waiting {
  readonly decision: ScriptDecision;
  readonly resolve: (decision: StoreDecision) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Collects the decisions of one Redis client and sends them in batches,
 * keeping up to two batches out at once so that Redis decides one while the
 * client reads the other's replies and gathers the next: a call waits only
 * for the next microtask when fewer than two batches are out (a lone call
 * does not wait for company), and otherwise until a batch comes back, or
 * {@link STALL_MS} when none does. Where the runtime ties I/O to a request,
 * every batch goes in the next microtask instead ({@link FlushPolicy}). On a
 * Cluster a batch holds the keys of one hash slot (one id's, by its hash tag),
 * so calls are grouped per slot, each slot with its own two.
 */
export class DecisionBatcher {
  readonly #redis: RedisAdapter;
  /** Per hash slot (one slot, 0, when the client is not a Cluster): the decisions not sent yet, and the batches out. */
  readonly #slots = new Map<number, Slot>();

  readonly #sendBatch: SendBatch;
  /** Whether every batch goes in the microtask after its calls ({@link FlushPolicy} `'each-turn'`). */
  readonly #eachTurn: boolean;

  /**
   * @param sendBatch How a batch goes to Redis, fixed for the batcher's life.
   * @param flushPolicy When batches go out; by default what the runtime needs ({@link flushPolicyOf}).
   */
  constructor(redis: RedisAdapter, sendBatch: SendBatch, flushPolicy: FlushPolicy = flushPolicyOf()) {
    this.#redis = redis;
    this.#sendBatch = sendBatch;
    this.#eachTurn = flushPolicy === 'each-turn';
  }

  /** Decides `decision` in the next batch of its slot. */
  decide(decision: ScriptDecision): Promise<StoreDecision> {
    return new Promise((resolve, reject) => {
      const slotNumber = this.#redis.isCluster ? keySlot((decision.tiers[0] as { key: string }).key) : 0;
      let slot = this.#slots.get(slotNumber);
      if (slot === undefined) {
        slot = { waiting: [], out: 0, flushScheduled: false, stall: undefined };
        this.#slots.set(slotNumber, slot);
      }
      slot.waiting.push({ decision, resolve, reject });
      const scheduled = slot;
      if (this.#eachTurn || slot.out < MAX_BATCHES_OUT) {
        if (!slot.flushScheduled) {
          slot.flushScheduled = true;
          queueMicrotask(() => this.#flush(slotNumber, scheduled));
        }
      } else if (slot.stall === undefined) {
        slot.stall = setTimeout(() => this.#flush(slotNumber, scheduled), STALL_MS);
        (slot.stall as { unref?: () => void }).unref?.();
      }
    });
  }

  /**
   * Sends what waits in `slot`: split in two when no batch is out, so that
   * two are (not with `'each-turn'`, where batches do not overlap by design);
   * at most {@link MAX_BATCH_SIZE} decisions and {@link MAX_BATCH_ARGUMENTS}
   * arguments per batch.
   */
  #flush(slotNumber: number, slot: Slot): void {
    slot.flushScheduled = false;
    if (slot.stall !== undefined) {
      clearTimeout(slot.stall);
      slot.stall = undefined;
    }
    const waiting = slot.waiting;
    if (waiting.length === 0) return;
    slot.waiting = [];
    const sizes = waiting.map(({ decision }) => callSizeOf(decision));
    let totalArguments = 0;
    let largest = 0;
    for (const size of sizes) {
      totalArguments += size;
      if (size <= MAX_BATCH_ARGUMENTS) largest = Math.max(largest, size);
    }
    // A batch is cut before the decision that would take it past the bound: counting batches with room for the
    // largest decision to spare, and sharing what is left among the batches left, spreads the decisions evenly.
    let batchesLeft = Math.max(
      Math.ceil(waiting.length / MAX_BATCH_SIZE),
      Math.ceil(totalArguments / (MAX_BATCH_ARGUMENTS - largest + 1)),
      this.#eachTurn ? 1 : Math.min(MAX_BATCHES_OUT - slot.out, waiting.length),
    );
    let left = waiting.length;
    let batch: Waiting[] = [];
    let batchArguments = 0;
    for (let i = 0; i < waiting.length; i += 1) {
      const next = waiting[i] as Waiting;
      const nextArguments = sizes[i] as number;
      if (batch.length > 0 && (batch.length >= Math.ceil(left / batchesLeft) || batchArguments + nextArguments > MAX_BATCH_ARGUMENTS)) {
        this.#send(slotNumber, slot, batch);
        left -= batch.length;
        batchesLeft = Math.max(1, batchesLeft - 1);
        batch = [];
        batchArguments = 0;
      }
      batch.push(next);
      batchArguments += nextArguments;
    }
    this.#send(slotNumber, slot, batch);
  }

  /**
   * Sends one batch and answers each of its callers. Whatever goes wrong while
   * sending, even a synchronous throw in the client, fails this batch's
   * callers alone and leaves the slot free for the next batch.
   */
  #send(slotNumber: number, slot: Slot, batch: readonly Waiting[]): void {
    slot.out += 1;
    const settled = (): void => {
      slot.out -= 1;
      // With 'each-turn', what waits has its own flush scheduled, from its callers' context: never send it from here.
      if (slot.waiting.length > 0) {
        if (!this.#eachTurn) this.#flush(slotNumber, slot);
      } else if (slot.out === 0) this.#slots.delete(slotNumber);
    };
    let sent: Promise<(StoreDecision | Error)[]>;
    try {
      sent = this.#sendBatch(
        this.#redis,
        batch.map((waiting) => waiting.decision),
      );
    } catch (error) {
      sent = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    sent.then(
      (outcomes) => {
        settled();
        outcomes.forEach((outcome, i) => {
          const waiting = batch[i] as Waiting;
          if (outcome instanceof Error) waiting.reject(outcome);
          else waiting.resolve(outcome);
        });
      },
      (error: unknown) => {
        settled();
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }
}
