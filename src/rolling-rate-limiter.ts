import { localMicroseconds, millisecondsToMicroseconds, type MicrosecondClock } from './core/clock.js';
import { InvalidOptionTypeError } from './errors/invalid-option-error.js';
import { UnsupportedError } from './errors/unsupported-error.js';
import type { LimiterId } from './core/ids.js';
import { ID_AS_KEY, KeyBuilder } from './core/keys.js';
import { registerInternals } from './limiter-internals.js';
import { normalizeOptions, type NormalizedOptions, type RollingRateLimiterOptions } from './core/options.js';
import type { RateLimitInfo } from './core/rate-limit-info.js';
import { createAdapter } from './redis/adapters/create-adapter.js';
import { MemoryStore } from './stores/memory/memory-store.js';
import { RedisStore } from './redis/redis-store.js';
import type { Store } from './stores/store.js';
import { waitUntilAllowed, wrapFunction, type WaitOptions, type WrapOptions } from './core/waiting.js';
import { normalizeActionId, type AttemptOptions } from './core/action-ids.js';
import { TieredCore, type TierInfo, type TierSpec } from './core/tiered-core.js';

/**
 * An exact rolling-window rate limiter with a minimum gap between actions:
 * at most `maxInInterval` actions in any window of `interval` ms, and at
 * least `minDifference` ms between consecutive actions, per id. With a Redis
 * `client`, every process that uses the same namespace shares the limit;
 * without one, the limit lives in this process's memory.
 *
 * @example
 * ```ts
 * import { RollingRateLimiter } from 'rolling-window-limiter';
 *
 * const limiter = new RollingRateLimiter({
 *   client: redis,            // an ioredis client; omit it for the in-memory store
 *   namespace: 'push',
 *   interval: 60_000,         // at most 10 per minute...
 *   maxInInterval: 10,
 *   minDifference: 3_000,     // ...and at least 3 s apart
 * });
 *
 * if (await limiter.limit(userId)) return; // blocked: don't send
 * await sendPushNotification(userId);
 * ```
 */
export class RollingRateLimiter {
  readonly #options: NormalizedOptions;
  readonly #core: TieredCore<RateLimitInfo>;

  /**
   * @param options See {@link RollingRateLimiterOptions}.
   * @throws TypeError when an option has the wrong type, naming it and the value received.
   * @throws RangeError when an option is out of range, naming it and the value received.
   * @throws {@link UnsupportedError} when the client or the mode is not supported.
   */
  constructor(options: RollingRateLimiterOptions) {
    const normalized = normalizeOptions(options);
    this.#options = normalized;
    const { clock, client, useScript } = normalized;
    const readClock = clock === 'redis' ? undefined : clock === 'local' ? localMicroseconds : checkedClock(clock);
    let store: Store;
    if (client === undefined) {
      if (clock === 'redis') {
        throw new UnsupportedError("`clock: 'redis'` reads Redis TIME, so it needs a Redis `client`; the in-memory store uses 'local' or a function");
      }
      if (useScript !== undefined) {
        throw new UnsupportedError('`useScript` chooses how Redis decides, so it needs a Redis `client`; leave it out for the in-memory store');
      }
      store = new MemoryStore();
    } else {
      store = new RedisStore(createAdapter(client));
      const needsScript = !normalized.countBlocked ? '`countBlocked: false`' : clock === 'redis' ? "`clock: 'redis'`" : undefined;
      if (needsScript !== undefined && useScript === false) {
        throw new UnsupportedError(`${needsScript} must decide before it writes, which on Redis takes the Lua script; \`useScript: false\` cannot serve it`);
      }
      if (useScript === true && !store.canDecideBeforeWriting) {
        throw new UnsupportedError(`\`useScript: true\` runs a Lua script, and ${store.name} cannot run scripts`);
      }
      if (needsScript !== undefined && !store.canDecideBeforeWriting) {
        throw new UnsupportedError(
          `${needsScript} must decide before it writes, which on Redis takes a Lua script, and ${store.name} cannot run scripts; ` +
            'use `countBlocked: true` with a local clock on it, or a real Redis client',
        );
      }
    }
    const tier: TierSpec = {
      rule: {
        intervalUs: millisecondsToMicroseconds(normalized.interval),
        maxInInterval: normalized.maxInInterval,
        minDifferenceUs: millisecondsToMicroseconds(normalized.minDifference),
        countBlocked: normalized.countBlocked,
      },
      keys: client === undefined ? ID_AS_KEY : new KeyBuilder(normalized.namespace),
      store,
      useScript,
      namespace: normalized.namespace,
      interval: normalized.interval,
      maxInInterval: normalized.maxInInterval,
    };
    this.#core = new TieredCore([tier], {
      readClock,
      timeoutMs: normalized.timeout,
      onStoreError: normalized.onStoreError,
      present: ownInfo,
      circuitBreaker: normalized.circuitBreaker,
    });
    registerInternals(this, { tier, clockOption: clock, readClock, timeout: normalized.timeout });
  }

  /** The window length, in milliseconds. */
  get interval(): number {
    return this.#options.interval;
  }

  /** The most actions allowed in one window. */
  get maxInInterval(): number {
    return this.#options.maxInInterval;
  }

  /** The least time between consecutive actions, in milliseconds (0: no gap rule). */
  get minDifference(): number {
    return this.#options.minDifference;
  }

  /** The prefix of this limiter's keys. */
  get namespace(): string {
    return this.#options.namespace;
  }

  /** Whether blocked attempts are recorded too. */
  get countBlocked(): boolean {
    return this.#options.countBlocked;
  }

  /** Where time comes from: `'local'`, `'redis'`, or the function that was given. */
  get clock(): 'local' | 'redis' | MicrosecondClock {
    return this.#options.clock;
  }

  /**
   * Attempts an action for `id` and records it (see `countBlocked`).
   *
   * @param id The id to limit, usually a user id.
   * @param options `actionId`: makes the attempt idempotent and undoable (see {@link AttemptOptions}).
   * @returns `true` when the action is blocked and must not happen, `false` when it may go ahead.
   * @throws TypeError (as a rejection) when `id` is not a non-empty string or a finite number.
   * @throws {@link StoreError} or {@link TimeoutError} (as a rejection) when the store fails.
   *
   * @example
   * ```ts
   * if (await limiter.limit(userId)) return; // blocked
   * ```
   */
  async limit(id: LimiterId, options?: AttemptOptions): Promise<boolean> {
    return (await this.limitWithInfo(id, options)).blocked;
  }

  /**
   * Like {@link limit}, with the numbers behind the decision.
   *
   * @example
   * ```ts
   * const info = await limiter.limitWithInfo(userId);
   * if (info.blocked) {
   *   response.setHeader('Retry-After', Math.ceil(info.millisecondsUntilAllowed / 1000));
   * }
   * ```
   */
  async limitWithInfo(id: LimiterId, options?: AttemptOptions): Promise<RateLimitInfo> {
    return this.#core.decide(id, 'attempt', normalizeActionId(options?.actionId));
  }

  /**
   * A dry run of {@link limit}: whether an attempt now would be blocked. Writes
   * nothing: no attempt is recorded, no expiry changes.
   */
  async wouldLimit(id: LimiterId): Promise<boolean> {
    return (await this.wouldLimitWithInfo(id)).blocked;
  }

  /**
   * A dry run of {@link limitWithInfo}: exactly what it would return at this
   * moment, and writes nothing.
   */
  async wouldLimitWithInfo(id: LimiterId): Promise<RateLimitInfo> {
    return this.#core.decide(id, 'peek');
  }

  /**
   * Resolves once an action for `id` has been admitted (and recorded),
   * sleeping the reported wait, with jitter, in between: for queue consumers
   * that must get the work done, never faster than the limit.
   *
   * @returns The decision that admitted the action.
   * @throws {@link RateLimitedError} (as a rejection) when admission would take longer than `maxWaitMs`.
   * @throws The signal's reason (as a rejection) when `signal` aborts.
   *
   * @example
   * ```ts
   * // 16 workers sharing an API's 100 uploads per minute
   * const uploads = new RollingRateLimiter({ client: redis, namespace: 'uploads', interval: 60_000, maxInInterval: 100, countBlocked: false });
   * for await (const job of queue) {
   *   await uploads.waitUntilAllowed(job.sellerId, { maxWaitMs: 10 * 60_000 });
   *   await uploadProduct(job);
   * }
   * ```
   */
  async waitUntilAllowed(id: LimiterId, options: WaitOptions = {}): Promise<RateLimitInfo> {
    return waitUntilAllowed(this, id, this.countBlocked, options);
  }

  /**
   * Returns a function that calls `fn` only when the limiter admits the call,
   * per id: it rejects with a {@link RateLimitedError} carrying the decision
   * (`whenLimited: 'reject'`, the default), or waits until admitted
   * (`whenLimited: 'wait'`).
   *
   * @example
   * ```ts
   * // No double submissions: at most 2 per 5 s per user and operation
   * const guard = new RollingRateLimiter({ namespace: 'submit', interval: 5_000, maxInInterval: 2 });
   * const submitOrder = guard.wrap(placeOrder, { id: (userId: string, order: Order) => `${userId}:placeOrder` });
   * await submitOrder(userId, order); // rejects with RateLimitedError on the third click within 5 s
   * ```
   */
  wrap<Args extends unknown[], Result>(fn: (...args: Args) => Result, options: WrapOptions<Args>): (...args: Args) => Promise<Awaited<Result>> {
    return wrapFunction(this, this.countBlocked, fn, options);
  }

  /**
   * Gives back an admitted action: removes the action recorded for `id`
   * under `actionId` (given to {@link limit} or {@link limitWithInfo}), for
   * example when the push notification it allowed could not be sent.
   *
   * @returns `true` when an admitted action was removed, `false` when there was none (never admitted, already
   *   undone, or out of the window).
   *
   * @example
   * ```ts
   * if (await limiter.limit(userId, { actionId: notification.id })) return;
   * try {
   *   await send(notification);
   * } catch (error) {
   *   await limiter.undo(userId, notification.id); // the user did not get it: refund the slot
   *   throw error;
   * }
   * ```
   */
  async undo(id: LimiterId, actionId: string): Promise<boolean> {
    const action = normalizeActionId(actionId);
    if (action === undefined) throw new TypeError('Expected `actionId` to be a non-empty string, got undefined');
    return this.#core.undo(id, action);
  }

  /** Forgets every action recorded for `id`, as if it had never acted. */
  async clear(id: LimiterId): Promise<void> {
    await this.#core.clear(id);
  }
}

/** A single limiter's info: its one tier's numbers, without the tier's identity. */
function ownInfo([tier]: readonly TierInfo[]): RateLimitInfo {
  const { blocked, blockedDueToCount, blockedDueToMinDifference, actionsRemaining, millisecondsUntilAllowed, storeFailure } = tier as TierInfo;
  const info = { blocked, blockedDueToCount, blockedDueToMinDifference, actionsRemaining, millisecondsUntilAllowed };
  return storeFailure === undefined ? info : { ...info, storeFailure };
}

/** Wraps a user's clock so that a value that is not an integer number of microseconds is a clear error. */
function checkedClock(clock: MicrosecondClock): MicrosecondClock {
  return () => {
    const now = clock();
    if (!Number.isSafeInteger(now) || now < 0) {
      throw new InvalidOptionTypeError(
        `Expected \`clock\` to return a non-negative integer number of microseconds since the epoch, got \`${String(now)}\` (${typeof now})`,
        'clock',
        now,
      );
    }
    return now;
  };
}
