// The composition root: normalized options in, a tiered core out. The one
// place that decides which path serves a face's calls, builds its store,
// guards it when it is remote, checks that a stack's tiers can be decided
// together, and raises every UnsupportedError, when the limiter or stack is built.

import { localMicroseconds, millisecondsToMicroseconds, type MicrosecondClock } from '../core/clock.js';
import { publishCircuit } from '../core/diagnostics.js';
import { inFlightUsOf } from '../core/decision-model.js';
import { KeyBuilder } from '../core/identity.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import type { Store } from '../core/store.js';
import { TieredCore, type TierSpec } from '../core/tiered-core.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import { UnsupportedError } from '../errors/unsupported-error.js';
import type { RedisAdapter } from '../redis/adapters/adapter.js';
import { adapterFor } from '../redis/adapters/create-adapter.js';
import { MultiStore } from '../redis/multi-store.js';
import { RedisStore } from '../redis/redis-store.js';
import { ScriptStore } from '../redis/script-store.js';
import type { NormalizedCircuitBreakerOptions } from '../resilience/circuit-breaker.js';
import { GuardedStore } from '../resilience/guarded-store.js';
import { MemoryStore } from '../stores/memory/memory-store.js';
import type { NormalizedOptions, NormalizedStackOptions } from './limiter-options.js';

/** Which way a face's decisions go: the in-process store, or Redis by plain commands, by the decide script, or in batches of script calls. */
type Path = 'memory' | 'multi' | 'script' | 'batch';

/** The path for a limiter's options on `redis` (undefined: no client), or an `UnsupportedError` saying why they cannot be served. */
function limiterPath({ clock, useScript, countBlocked, countsCost, batch }: NormalizedOptions, redis: RedisAdapter | undefined): Path {
  if (redis === undefined) {
    if (batch) throw new UnsupportedError(BATCH_IN_MEMORY);
    if (clock === 'redis')
      throw new UnsupportedError("`clock: 'redis'` reads Redis TIME, so it needs a Redis `client`; the in-memory store uses 'local' or a function");
    if (useScript !== undefined)
      throw new UnsupportedError('`useScript` chooses how Redis decides, so it needs a Redis `client`; leave it out for the in-memory store');
    return 'memory';
  }
  if (batch) return batchPath(redis, useScript);
  if (useScript === true && !redis.supportsScripts) throw new UnsupportedError(`\`useScript: true\` runs a Lua script, and ${redis.kind} cannot run scripts`);
  if (useScript !== false && redis.supportsScripts) return 'script';
  // A budget of cost weighs every record by its cost, which plain commands cannot sum in one atomic step.
  const needsScript = countsCost ? '`maxCostInInterval`' : !countBlocked ? '`countBlocked: false`' : clock === 'redis' ? "`clock: 'redis'`" : undefined;
  if (needsScript !== undefined) {
    throw new UnsupportedError(
      useScript === false
        ? `${needsScript} must decide before it writes, which on Redis takes the Lua script; \`useScript: false\` cannot serve it`
        : `${needsScript} must decide before it writes, which on Redis takes a Lua script, and ${redis.kind} cannot run scripts; ` +
            'use `countBlocked: true` with a local clock on it, or a real Redis client',
    );
  }
  return 'multi';
}

/** The store of a stack over `first` (its first tier's store): the same Redis, by the script or in batches; or `first` in memory. */
function stackStore(first: Store, batch: boolean): Store {
  if (first instanceof RedisStore) {
    if (batch) batchPath(first.adapter, undefined);
    return first instanceof ScriptStore && first.batched === batch ? first : new ScriptStore(first.adapter, batch);
  }
  if (batch) throw new UnsupportedError(BATCH_IN_MEMORY);
  return first;
}

const BATCH_IN_MEMORY = '`batch: true` saves Redis round trips, so it needs a Redis `client`; the in-memory store decides at once';

function batchPath(redis: RedisAdapter, useScript: boolean | undefined): 'batch' {
  if (!redis.supportsScripts)
    throw new UnsupportedError(`\`batch: true\` sends batches of decisions as one Lua script call, and ${redis.kind} cannot run scripts`);
  if (useScript === false) throw new UnsupportedError('`batch: true` decides with the Lua script, and `useScript: false` asks for plain commands');
  return 'batch';
}

/** The core of one limiter with these (normalized) options. */
export function assembleLimiter(options: NormalizedOptions): TieredCore<RateLimitInfo> {
  const redis = options.client === undefined ? undefined : adapterFor(options.client);
  const path = limiterPath(options, redis);
  const store = redis === undefined ? new MemoryStore() : path === 'multi' ? new MultiStore(redis) : new ScriptStore(redis, path === 'batch');
  const { interval, maxInInterval, countsCost, minDifference, countBlocked, namespace, clock, timeout } = options;
  const tier: TierSpec = {
    rule: {
      intervalUs: millisecondsToMicroseconds(interval),
      maxInInterval,
      countsCost,
      minDifferenceUs: millisecondsToMicroseconds(minDifference),
      countBlocked,
      // A call may reach the store up to `timeout` after its stamp: its records are kept that much longer (2 s at
      // least, so that limiters with other timeouts on one namespace keep one horizon).
      inFlightUs: inFlightUsOf(timeout),
    },
    keys: new KeyBuilder(namespace),
    store,
    namespace,
    defaultCost: options.defaultCost,
  };
  return new TieredCore([tier], {
    clock,
    readClock: clock === 'redis' ? undefined : clock === 'local' ? localMicroseconds : checkedClock(clock),
    store: guarded(store, [namespace], options.timeout, options.circuitBreaker),
    timeoutMs: options.timeout,
    onStoreError: options.onStoreError,
    // A single limiter's info is its one tier's numbers.
    present: ([info]) => info as RateLimitInfo,
  });
}

/**
 * The core of a stack of `cores` (each a limiter's, checked to be stackable):
 * their tiers decided together by the stack's own store, guarded with the
 * stack's breaker and the longest of its limiters' timeouts.
 */
export function assembleStack<Info extends RateLimitInfo>(
  cores: readonly TieredCore<RateLimitInfo>[],
  options: NormalizedStackOptions<Info>,
  present: (infos: readonly RateLimitInfo[], tiers: readonly TierSpec[]) => Info,
): TieredCore<Info> {
  const timeoutMs = Math.max(...cores.map((core) => core.options.timeoutMs));
  // A stack's call may be in flight for the stack's timeout, the longest of its limiters': each tier keeps its records that long.
  const tiers = cores.map((core): TierSpec => {
    const tier = core.tiers[0] as TierSpec;
    const inFlightUs = inFlightUsOf(timeoutMs);
    return tier.rule.inFlightUs === inFlightUs ? tier : { ...tier, rule: { ...tier.rule, inFlightUs } };
  });
  checkStackable(
    tiers,
    cores.map((core) => core.options.clock),
  );
  const store = stackStore((tiers[0] as TierSpec).store, options.batch);
  const { clock, readClock } = (cores[0] as TieredCore<RateLimitInfo>).options;
  return new TieredCore(tiers, {
    clock,
    readClock,
    store: guarded(
      store,
      tiers.map((tier) => tier.namespace),
      timeoutMs,
      options.circuitBreaker,
    ),
    timeoutMs,
    onStoreError: options.onStoreError,
    present,
  });
}

/**
 * Throws when the tiers cannot be decided together in one atomic step: a
 * `TypeError` naming `limiters[i]` for two tiers with one namespace in one
 * keyspace, tiers kept in different places, different clocks, or budgets that
 * declare different `defaultCost`s; an `UnsupportedError` for a tier that
 * decides with plain commands.
 */
function checkStackable(tiers: readonly TierSpec[], clocks: readonly ('local' | 'redis' | MicrosecondClock)[]): void {
  const first = tiers[0] as TierSpec;
  tiers.forEach((tier, i) => {
    // Two tiers clash when their keys are one: the same namespace in one keyspace (in-memory limiters each have their own).
    const clash = tiers.findIndex((other) => other.namespace === tier.namespace && other.store.sharesKeysWith(tier.store));
    if (clash < i) {
      throw new InvalidOptionTypeError(
        `Cannot stack two limiters with the namespace \`${tier.namespace}\` (limiters[${i}]): give each tier its own namespace`,
        'limiters',
        tier.namespace,
      );
    }
    if (!first.store.canDecideWith(tier.store)) {
      throw new InvalidOptionTypeError(
        `Cannot stack limiters[${i}] with limiters[0]: stacked limiters must keep their state in the same place ` +
          '(all in memory, or all on the same Redis client) so that one atomic step decides every tier',
        'limiters',
        tier.namespace,
      );
    }
    if (tier.store instanceof MultiStore) {
      throw new UnsupportedError(
        tier.store.adapter.supportsScripts
          ? `Cannot stack limiters[${i}]: a stack decides every tier with the Lua script, and it has \`useScript: false\``
          : `Cannot stack limiters[${i}]: a stack must decide every tier before it writes, which on Redis takes a Lua script, and ${tier.store.name} cannot run scripts`,
      );
    }
    if (clocks[i] !== clocks[0]) {
      throw new InvalidOptionTypeError(`Cannot stack limiters[${i}] with limiters[0]: stacked limiters must use the same \`clock\``, 'limiters', clocks[i]);
    }
    // An attempt without `cost` weighs one default in every tier: the budgets that declare one must agree.
    const declared = tiers.findIndex((other) => other.defaultCost !== undefined);
    if (tier.defaultCost !== undefined && declared < i && tiers[declared]?.defaultCost !== tier.defaultCost) {
      throw new InvalidOptionTypeError(
        `Cannot stack limiters[${i}] (\`defaultCost: ${tier.defaultCost}\`) with limiters[${declared}] (\`defaultCost: ${tiers[declared]?.defaultCost}\`): ` +
          'an attempt without `cost` weighs the same in every budget of a stack; declare one `defaultCost`, or give each attempt its `cost`',
        'limiters',
        tier.defaultCost,
      );
    }
  });
}

/** A Redis store behind its timeout and breakers; the in-memory store as it is (it can neither hang nor fail). */
function guarded(store: Store, namespaces: readonly string[], timeoutMs: number, circuitBreaker: NormalizedCircuitBreakerOptions | false): Store {
  if (store instanceof MemoryStore) return store;
  const names = Object.freeze([...namespaces]);
  return new GuardedStore(store, {
    timeoutMs,
    circuitBreaker,
    onCircuitChange: (node, change) => publishCircuit(names, node, change.to, change.from, change.consecutiveFailures),
  });
}

/**
 * Wraps a user's clock so that a value that is not an integer number of
 * microseconds is a clear error, and so is a reading before 10^15 µs
 * (2001-09-09): the time now in milliseconds (`Date.now()`, about 1.8e12) or
 * seconds is far below it, and would make every window 1000 times too long.
 */
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
    if (now < 1e15) {
      throw new InvalidOptionTypeError(
        `Expected \`clock\` to return microseconds since the epoch, got \`${now}\`, which is before 2001 in microseconds: ` +
          (now >= 1e12
            ? 'it looks like milliseconds; multiply by 1000 (`clock: () => Date.now() * 1000`)'
            : 'it looks like seconds, or a clock that counts from 0; return microseconds since the epoch (seconds times 1,000,000, or `Date.now() * 1000`)'),
        'clock',
        now,
      );
    }
    return now;
  };
}
