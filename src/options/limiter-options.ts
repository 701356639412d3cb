import {
  boolean,
  choice,
  duration,
  integer,
  nonEmptyString,
  normalize,
  object,
  optional,
  MAX_INTEGER,
  MAX_MILLISECONDS,
  describeValue,
} from '../core/check.js';
import type { Duration, Normalized } from '../core/check.js';
import type { MicrosecondClock } from '../core/clock.js';
import type { RateLimitInfo } from '../core/rate-limit-info.js';
import { isStoreErrorPolicy, type StoreErrorPolicy } from '../core/store-error-policy.js';
import { MAX_COST_BUDGET } from '../core/bounds.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import type { RedisClient } from '../redis/adapters/client-types.js';
import { circuitBreakerOption, type CircuitBreakerOptions } from './circuit-breaker-options.js';
import { durationWarnings, validateOption, type OptionWarning } from './option-warnings.js';
import { ownOptions } from './own-options.js';

/**
 * Options of {@link RollingRateLimiter}: `interval`, and exactly one of `maxInInterval` (a limit of actions) and
 * `maxCostInInterval` (a budget of cost); every other option is optional.
 */
export interface RollingRateLimiterOptions {
  /**
   * Length of the rolling window: milliseconds (an integer from 1 to 10^12),
   * or a {@link Duration} string with its unit (`'10s'`, `'1m'`, `'1d'`).
   * An action stops counting exactly `interval` after it happened.
   */
  readonly interval: Duration;

  /**
   * At most this many actions in any rolling window of `interval` ms (an integer from 1 to 2^31 - 1): each attempt
   * weighs 1. Give this or `maxCostInInterval`, not both (a `TypeError`).
   */
  readonly maxInInterval?: number;

  /**
   * At most this much cost (tokens, bytes, credits) in any rolling window of `interval` ms (an integer from 1 to
   * 2^48, about 2.8 * 10^14): each attempt weighs its `cost`, which every attempt must give unless the limiter
   * declares `defaultCost` (an attempt without either is a `TypeError`), and `settle` sets an admitted action's cost
   * to what it used (docs/semantics.md, "Costs"). Give this or `maxInInterval`, not both (a `TypeError`). Needs the
   * decide script on Redis: `useScript: false` and redis-mock refuse it with an `UnsupportedError`.
   */
  readonly maxCostInInterval?: number;

  /**
   * What an attempt that gives no `cost` weighs on a budget of cost (a positive safe integer, at most
   * `maxCostInInterval`): declared, `limit(id)` weighs this much; left out, an attempt without `cost` is a
   * `TypeError`, so that a budget of tokens is never spent one unit per call by an attempt that forgot its cost.
   * Only with `maxCostInInterval` (on a limit of actions every attempt weighs 1: a `TypeError`). A stack weighs an
   * attempt without `cost` by the `defaultCost` its budgets declare (they must agree).
   * @default undefined (every attempt on a budget gives its `cost`)
   */
  readonly defaultCost?: number;

  /**
   * At least this long between consecutive actions: milliseconds (an integer
   * from 0 to `interval`) or a {@link Duration} string (`'500ms'`, `'3s'`); a
   * gap of exactly `minDifference` is allowed. 0 turns the rule off. A gap
   * longer than the window is refused with a `RangeError`: "at most 5 per
   * minute, at least 2 minutes apart" is really "1 per 2 minutes"
   * (`interval: '2m', maxInInterval: 1`).
   * @default 0
   */
  readonly minDifference?: Duration;

  /**
   * Prefix of every Redis key of this limiter. Required when `client` is given.
   * Limiters on one client and namespace share their keys and count each
   * other's actions: that is how several parts of an app share one limit, and
   * it takes one rule. A limiter whose rule (`interval`, `maxInInterval`,
   * `minDifference`, `countBlocked`) differs from that of a limiter this
   * process already made on the same client and namespace is refused with a
   * `TypeError`; processes cannot check each other, so give each rule its own
   * namespace. Any non-empty string (`''` is a `RangeError`), escaped in the key.
   * @default 'rolling-window-limiter' (only without a client)
   */
  readonly namespace?: string;

  /**
   * The Redis client that holds the limiter's state, shared by every process
   * that uses it: an ioredis or iovalkey `Redis` or `Cluster`, a node-redis
   * client, cluster or sentinel (connected by you), a Valkey GLIDE 2 client,
   * or redis-mock for unit tests (MULTI path only); see
   * docs/guides/deployment.md, "Clients". Omitted: an in-process memory store, private to this limiter.
   */
  readonly client?: RedisClient;

  /**
   * Whether blocked attempts are recorded too. `true` (the default) keeps a
   * client that hammers blocked until it slows down; `false` records only the
   * actions that were allowed (on Redis, atomically, by the decide script).
   * @default true
   */
  readonly countBlocked?: boolean;

  /**
   * Where time comes from (see docs/guides/how-it-works-on-redis.md, "Clocks"): `'local'`, this
   * process's microsecond clock; `'redis'`, Redis `TIME` read inside the
   * decide script (needs scripts and Redis 5); or a function returning
   * integer microseconds since the Unix epoch (tests inject one).
   * @default 'local'
   */
  readonly clock?: 'local' | 'redis' | MicrosecondClock;

  /**
   * Longest wait for the store: milliseconds (an integer from 1 to 2^31 - 1)
   * or a {@link Duration} string (`'250ms'`, `'2s'`); past it, the call
   * rejects with a {@link TimeoutError}. Redis only: the in-memory store
   * answers at once.
   * @default 2000
   */
  readonly timeout?: Duration;

  /**
   * What to do when the store fails or does not answer within `timeout`:
   * `'throw'` rejects with the error, `'allow'` fails open, `'block'` fails
   * closed, and a fallback limiter (for example an in-memory limiter with the
   * same rules) decides instead. Decisions made this way carry
   * `storeFailure` in their info. See {@link StoreErrorPolicy}.
   * @default 'throw'
   */
  readonly onStoreError?: StoreErrorPolicy;

  /**
   * How a Redis limiter decides: by default (and with `true`) every attempt is
   * one EVALSHA of the decide script, wherever the client can run scripts.
   * `false` asks for plain commands in a MULTI, for a Redis where scripts are
   * not allowed: `countBlocked: true` on a local clock, without action ids.
   * @default undefined (the script where the client runs scripts, else the MULTI)
   */
  readonly useScript?: boolean;

  /**
   * Batches decisions on Redis: the decisions this process asks for in the
   * same turn of the event loop (from every `batch: true` limiter or stack on
   * the same client) go to Redis as one call of the decide script, each
   * decided exactly as if sent alone. Needs a `client` that runs scripts, and
   * not `useScript: false`. See docs/guides/choosing-a-mode.md, "Batching".
   * @default false
   */
  readonly batch?: boolean;

  /**
   * Stops calling a store that keeps failing: after `failureThreshold`
   * consecutive store failures or timeouts, every call is decided by
   * `onStoreError` at once for `cooldown` (a {@link StoreError} of code
   * `CIRCUIT_OPEN`), then one call probes the store. `false` turns it off.
   * One circuit per Cluster master; Redis only.
   * @default { failureThreshold: 5, cooldown: 1000 }
   */
  readonly circuitBreaker?: CircuitBreakerOptions | false;

  /**
   * The warnings about options that are probably mistakes, each given once per process (`process.emitWarning`
   * where there is one, and the warning channel; codes in {@link OPTION_WARNING_CODES}): a bare number of
   * milliseconds under 1000 for `interval` (`interval: 60` is 60 ms, not a minute) and from 1 to 9 for
   * `minDifference` (`minDifference: 3` is 3 ms). `false` turns every one off; an object turns off those set to
   * `false`. A duration with its unit (`'60ms'`) is never warned about.
   * @default true
   */
  readonly validate?: boolean | ValidateOptions;
}

/** Which warnings of the `validate` option are on (each `true` unless set to `false`). */
export interface ValidateOptions {
  /** Warn about a bare number under 1000 for `interval` (code `RATE_LIMITER_SMALL_INTERVAL`). @default true */
  readonly smallInterval?: boolean;
  /** Warn about a bare number from 1 to 9 for `minDifference` (code `RATE_LIMITER_SMALL_MIN_DIFFERENCE`). @default true */
  readonly smallMinDifference?: boolean;
}

/** Options of {@link RateLimiterStack}. */
export interface RateLimiterStackOptions<Info extends RateLimitInfo = RateLimitInfo> {
  /**
   * What to do when the store fails or does not answer in time; see
   * {@link StoreErrorPolicy}. A fallback is a stack (or anything with
   * `limitWithInfo` and `wouldLimitWithInfo` returning a {@link StackRateLimitInfo}).
   * @default 'throw'
   */
  readonly onStoreError?: StoreErrorPolicy<Info>;
  /**
   * The stack's own circuit breaker around its store calls; see
   * the `circuitBreaker` option of {@link RollingRateLimiter}.
   * @default { failureThreshold: 5, cooldown: 1000 }
   */
  readonly circuitBreaker?: CircuitBreakerOptions | false;
  /**
   * Sends the stack's decisions to Redis in batches, as the `batch` option of
   * {@link RollingRateLimiter} describes: the stack's own setting, whatever
   * its limiters'. Each decision still covers every tier atomically.
   * @default false
   */
  readonly batch?: boolean;
}

/** The defaults of a limiter's optional options (`namespace` has one only without a client). */
export const LIMITER_DEFAULTS = Object.freeze({
  minDifference: 0,
  countBlocked: true,
  clock: 'local',
  timeout: 2000,
  onStoreError: 'throw',
  batch: false,
  memoryNamespace: 'rolling-window-limiter',
} as const);

/** `onStoreError` of a limiter or a stack: `'throw'`, `'allow'`, `'block'` or a fallback limiter. */
export const storeErrorPolicy = optional(
  choice(isStoreErrorPolicy, "'throw', 'allow', 'block' or a fallback limiter"),
  LIMITER_DEFAULTS.onStoreError as StoreErrorPolicy,
);

const clockOption = choice(
  (value): value is 'local' | 'redis' | MicrosecondClock => value === 'local' || value === 'redis' || typeof value === 'function',
  "'local', 'redis' or a function returning integer microseconds",
);

const LIMITER_SCHEMA = {
  interval: duration(1, MAX_MILLISECONDS),
  maxInInterval: optional(integer(1, MAX_INTEGER), undefined),
  maxCostInInterval: optional(integer(1, MAX_COST_BUDGET), undefined),
  defaultCost: optional(integer(1, MAX_COST_BUDGET), undefined),
  minDifference: optional(duration(0, MAX_MILLISECONDS), LIMITER_DEFAULTS.minDifference),
  // '' names nothing: its keys (`:{id}`) would say neither whose nor what limit they hold, to anyone reading the Redis.
  namespace: optional(nonEmptyString, undefined),
  client: optional(object<RedisClient>('a Redis client object'), undefined),
  countBlocked: optional(boolean, LIMITER_DEFAULTS.countBlocked),
  clock: optional(clockOption, LIMITER_DEFAULTS.clock),
  timeout: optional(duration(1, MAX_INTEGER), LIMITER_DEFAULTS.timeout),
  onStoreError: storeErrorPolicy,
  useScript: optional(boolean, undefined),
  batch: optional(boolean, LIMITER_DEFAULTS.batch),
  circuitBreaker: circuitBreakerOption,
  validate: validateOption,
};

/**
 * The options after validation, with every default filled in (durations in milliseconds): `maxInInterval` is the
 * limit, of actions or (when `countsCost`) of cost; `warnings`, what the options as given call for (see `validate`).
 */
export type NormalizedOptions = Omit<Normalized<typeof LIMITER_SCHEMA>, 'namespace' | 'maxInInterval' | 'maxCostInInterval'> & {
  readonly namespace: string;
  readonly maxInInterval: number;
  readonly countsCost: boolean;
  readonly warnings: readonly OptionWarning[];
};

/**
 * Validates the caller's options once, without touching them, and fills in the
 * defaults; errors as docs/guides/options-and-methods.md, "Options", says. Only the object's own
 * properties are options: an inherited one (a polluted `Object.prototype`) is ignored.
 */
export function normalizeLimiterOptions(options: RollingRateLimiterOptions): NormalizedOptions {
  const given = ownOptions(options);
  const checked = normalize(given, LIMITER_SCHEMA, 'the options');
  const { interval, minDifference, client, maxInInterval, maxCostInInterval, defaultCost } = checked;
  if ((maxInInterval === undefined) === (maxCostInInterval === undefined)) {
    throw new InvalidOptionTypeError(
      maxInInterval === undefined
        ? 'Expected `maxInInterval` (a limit of actions) or `maxCostInInterval` (a budget of cost) to be given, got neither'
        : 'Expected one of `maxInInterval` (a limit of actions) and `maxCostInInterval` (a budget of cost), got both: a limiter counts one; stack two limiters for both',
      maxInInterval === undefined ? 'maxInInterval' : 'maxCostInInterval',
      maxInInterval === undefined ? undefined : maxCostInInterval,
    );
  }
  if (defaultCost !== undefined && maxCostInInterval === undefined) {
    throw new InvalidOptionTypeError(
      `Got \`defaultCost\` ${describeValue(defaultCost)} for a limiter that counts actions (\`maxInInterval\`): ` +
        'every attempt on a limit of actions weighs 1; `defaultCost` is what an attempt without `cost` weighs on a budget (`maxCostInInterval`)',
      'defaultCost',
      defaultCost,
    );
  }
  if (defaultCost !== undefined && maxCostInInterval !== undefined && defaultCost > maxCostInInterval) {
    throw new InvalidOptionRangeError(
      `Expected \`defaultCost\` to be at most \`maxCostInInterval\` (${maxCostInInterval}), got ${describeValue(defaultCost)}: no attempt of that cost could ever be admitted`,
      'defaultCost',
      defaultCost,
    );
  }
  if (minDifference > interval) {
    // The window's bookkeeping (trimming, expiry) keeps an action for `interval`: a longer gap could not be kept.
    throw new InvalidOptionRangeError(
      `Expected \`minDifference\` to be at most \`interval\` (${interval}), got ${describeValue(minDifference)}: ` +
        `a gap longer than the window cannot be kept; for one action per ${minDifference} ms use \`interval: ${minDifference}, maxInInterval: 1\``,
      'minDifference',
      minDifference,
    );
  }
  if (checked.namespace === undefined && client !== undefined) {
    throw new InvalidOptionTypeError(
      'Expected `namespace` to be a string when `client` is given: limiters that share a Redis client need distinct namespaces',
      'namespace',
      undefined,
    );
  }
  const { maxInInterval: _actions, maxCostInInterval: _cost, ...rest } = checked;
  return {
    ...rest,
    maxInInterval: (maxInInterval ?? maxCostInInterval) as number,
    countsCost: maxCostInInterval !== undefined,
    namespace: checked.namespace ?? LIMITER_DEFAULTS.memoryNamespace,
    // From the durations as given: a bare number is milliseconds, a string carries its unit.
    warnings: durationWarnings(given.interval, given.minDifference, checked.validate),
  };
}

const STACK_SCHEMA = { onStoreError: storeErrorPolicy, circuitBreaker: circuitBreakerOption, batch: LIMITER_SCHEMA.batch };

/** A stack's options after validation, with every default filled in. */
export type NormalizedStackOptions<Info extends RateLimitInfo> = Omit<Normalized<typeof STACK_SCHEMA>, 'onStoreError'> & {
  readonly onStoreError: StoreErrorPolicy<Info>;
};

/** Validates a stack's options (own properties only; an unknown key is refused, as for a limiter) and fills in the defaults. */
export function normalizeStackOptions<Info extends RateLimitInfo>(options: RateLimiterStackOptions<Info> | undefined): NormalizedStackOptions<Info> {
  const { onStoreError, circuitBreaker, batch } = normalize(ownOptions(options), STACK_SCHEMA, "the stack's options", { allowMissing: true });
  return { onStoreError: onStoreError as StoreErrorPolicy<Info>, circuitBreaker, batch };
}
