// A single limiter's core: its options turned into one tier (rules, keys,
// store) and a clock. RollingRateLimiter is a face over it; the HTTP stores
// build their counters on it too.

import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { UnsupportedError } from '../errors/unsupported-error.js';
import type { RedisAdapter } from '../redis/adapters/adapter.js';
import { createAdapter } from '../redis/adapters/create-adapter.js';
import { RedisStore } from '../redis/redis-store.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { Store } from '../stores/store.js';
import { localMicroseconds, millisecondsToMicroseconds, type MicrosecondClock } from './clock.js';
import { KeyBuilder } from './identity.js';
import type { NormalizedOptions } from './options.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import { TieredCore } from './tiered-core.js';

/** The core of one limiter with these (normalized) options. */
export function limiterCore(options: NormalizedOptions): TieredCore<RateLimitInfo> {
  const { clock } = options;
  const redis = options.client === undefined ? undefined : createAdapter(options.client);
  return new TieredCore(
    [
      {
        rule: {
          intervalUs: millisecondsToMicroseconds(options.interval),
          maxInInterval: options.maxInInterval,
          minDifferenceUs: millisecondsToMicroseconds(options.minDifference),
          countBlocked: options.countBlocked,
        },
        keys: new KeyBuilder(options.namespace),
        store: storeFor(options, redis),
        useScript: options.useScript,
        slotOwner: redis?.isCluster === true ? redis.slotOwner?.bind(redis) : undefined,
        namespace: options.namespace,
        interval: options.interval,
        maxInInterval: options.maxInInterval,
      },
    ],
    {
      clock,
      readClock: clock === 'redis' ? undefined : clock === 'local' ? localMicroseconds : checkedClock(clock),
      timeoutMs: options.timeout,
      batch: options.batch,
      onStoreError: options.onStoreError,
      // A single limiter's info is its one tier's numbers.
      present: ([info]) => info as RateLimitInfo,
      circuitBreaker: options.circuitBreaker,
    },
  );
}

/** The store the options ask for (on `redis`, the adapter of their client), or an `UnsupportedError` when it cannot serve their mode. */
function storeFor({ clock, useScript, countBlocked, batch }: NormalizedOptions, redis: RedisAdapter | undefined): Store {
  if (redis === undefined) {
    if (batch) throw new UnsupportedError(BATCH_IN_MEMORY);
    if (clock === 'redis') {
      throw new UnsupportedError("`clock: 'redis'` reads Redis TIME, so it needs a Redis `client`; the in-memory store uses 'local' or a function");
    }
    if (useScript !== undefined) {
      throw new UnsupportedError('`useScript` chooses how Redis decides, so it needs a Redis `client`; leave it out for the in-memory store');
    }
    return new MemoryStore();
  }
  const store = new RedisStore(redis);
  checkBatch(batch, store, useScript);
  const needsScript = !countBlocked ? '`countBlocked: false`' : clock === 'redis' ? "`clock: 'redis'`" : undefined;
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
  return store;
}

const BATCH_IN_MEMORY = '`batch: true` saves Redis round trips, so it needs a Redis `client`; the in-memory store decides at once';

/** An `UnsupportedError` when `batch: true` cannot be served by `store` (checked for limiters and stacks). */
export function checkBatch(batch: boolean, store: Store, useScript: boolean | undefined): void {
  if (!batch) return;
  if (store instanceof MemoryStore) throw new UnsupportedError(BATCH_IN_MEMORY);
  if (!store.canDecideBeforeWriting) {
    throw new UnsupportedError(`\`batch: true\` sends batches of decisions as one Lua script call, and ${store.name} cannot run scripts`);
  }
  if (useScript === false) {
    throw new UnsupportedError('`batch: true` decides with the Lua script, and `useScript: false` asks for plain commands');
  }
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
