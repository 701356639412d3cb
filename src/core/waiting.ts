// Waiting instead of failing, and wrapping a function, for a RollingRateLimiter
// and a RateLimiterStack alike.

import { RateLimitedError } from '../errors/rate-limited-error.js';
import { InvalidOptionTypeError } from '../errors/invalid-option-error.js';
import type { AttemptOptions, LimiterId } from './identity.js';
import {
  duration,
  either,
  func,
  normalize,
  numberIn,
  object,
  oneOf,
  optional,
  renamed,
  string,
  MAX_INTEGER,
  MAX_MILLISECONDS,
  type Check,
  type Duration,
  type Normalized,
} from './check.js';
import type { RateLimitInfo } from './rate-limit-info.js';
import type { FallbackLimiter } from './store-error-policy.js';

/** Options of `waitUntilAllowed`. */
export interface WaitOptions {
  /**
   * Give up, rejecting with a {@link RateLimitedError}, when being admitted
   * would take longer than this from the call (checked before each sleep, so
   * the call never sleeps past it): milliseconds, or a {@link Duration}
   * string such as `'30s'` or `'10m'`.
   * @default Infinity
   */
  readonly maxWait?: Duration;
  /**
   * The former name of `maxWait`, still accepted.
   * @deprecated Use `maxWait`.
   */
  readonly maxWaitMs?: Duration;
  /** Aborts the wait: the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** The action's id (see {@link AttemptOptions}): a retried wait is then never counted twice. */
  readonly actionId?: string;
  /** What the action costs (see {@link AttemptOptions}; required on a budget without `defaultCost`): the wait lasts until this much fits. */
  readonly cost?: number;
  /**
   * Up to this fraction of each wait is added at random, so that many workers
   * told the same wait do not all wake at the same moment.
   * @default 0.2
   */
  readonly jitter?: number;
}

/** What waiting needs of a limiter: the two decisions a fallback limiter makes too. */
export type WaitableLimiter<Info extends RateLimitInfo> = Pick<FallbackLimiter<Info>, 'limitWithInfo' | 'wouldLimitWithInfo'>;

/** A small constant added to every sleep, so that a 0 ms wait on a busy id does not spin. */
const MIN_SLEEP_MS = 1;

/** Milliseconds to wait at most: a number from 0 (Infinity for no limit), or a {@link Duration} string. */
const maxWaitCheck: Check<number | undefined> = optional(
  either(numberIn(0, Infinity), duration(0, MAX_MILLISECONDS), (value) => typeof value === 'number'),
  undefined,
);

/** A cost as given: the limiter checks it against its tiers when it decides. */
const costAsGiven: Check<unknown> = (value) => value;

const WAIT_SCHEMA = {
  maxWait: maxWaitCheck,
  maxWaitMs: maxWaitCheck,
  signal: optional(object<AbortSignal>('an AbortSignal'), undefined),
  actionId: optional(string, undefined),
  cost: costAsGiven,
  jitter: optional(numberIn(0, 1), 0.2),
};

/**
 * Sleeps `ms` with the global timers (so fake timers can drive it), in steps
 * of at most 2^31 - 1 ms (a Node timer fires a longer delay after 1 ms), or
 * rejects when `signal` aborts.
 */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      // An AbortSignal's reason is an Error (an AbortError DOMException) unless the caller chose another.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      reject(signal?.reason);
    };
    if (signal?.aborted) return onAbort();
    const sleepFor = (leftMs: number): void => {
      timer = setTimeout(
        () => {
          if (leftMs > MAX_INTEGER) return sleepFor(leftMs - MAX_INTEGER);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.min(leftMs, MAX_INTEGER),
      );
    };
    sleepFor(ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** How a wait goes, once its options are checked. */
interface WaitPlan {
  readonly maxWaitMs: number;
  readonly jitter: number;
  readonly signal: AbortSignal | undefined;
}

/** The plan of checked wait options (`maxWait` or its former name `maxWaitMs`, not both). */
function waitPlan({ maxWait, maxWaitMs, jitter, signal }: Omit<Normalized<typeof WAIT_SCHEMA>, 'actionId' | 'cost'>): WaitPlan {
  return { maxWaitMs: renamed(maxWait, maxWaitMs, 'maxWait', 'maxWaitMs') ?? Infinity, jitter, signal };
}

/**
 * Resolves with the decision once an action for `id` has been admitted. With
 * `peekFirst` (a limiter that records blocked attempts), each turn attempts
 * only when a dry run says the action fits, so that waiting workers do not
 * fill the window with their own blocked attempts. The options are read as
 * given: the caller passes only the user's own properties.
 */
export async function waitUntilAllowed<Info extends RateLimitInfo>(
  limiter: WaitableLimiter<Info>,
  id: LimiterId,
  peekFirst: boolean,
  options: WaitOptions = {},
): Promise<Info> {
  const { actionId, cost, ...checked } = normalize(options, WAIT_SCHEMA, 'the options', { allowMissing: true });
  return waitFor(limiter, id, peekFirst, waitPlan(checked), actionId, cost);
}

/** The loop of {@link waitUntilAllowed}, on checked options. */
async function waitFor<Info extends RateLimitInfo>(
  limiter: WaitableLimiter<Info>,
  id: LimiterId,
  peekFirst: boolean,
  { maxWaitMs, jitter, signal }: WaitPlan,
  actionId: string | undefined,
  cost: unknown,
): Promise<Info> {
  const attemptOptions = attemptOptionsOf(actionId, cost);
  const dryRunOptions = cost === undefined ? undefined : { cost: cost as number };
  const started = Date.now();
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    const peeked = peekFirst ? await (dryRunOptions === undefined ? limiter.wouldLimitWithInfo(id) : limiter.wouldLimitWithInfo(id, dryRunOptions)) : undefined;
    const info = peeked?.blocked ? peeked : await limiter.limitWithInfo(id, attemptOptions);
    if (!info.blocked) return info;
    const waitMs = Math.max(MIN_SLEEP_MS, info.millisecondsUntilAllowed);
    const remainingMs = maxWaitMs - (Date.now() - started);
    if (waitMs > remainingMs) {
      throw new RateLimitedError(info, `Rate limited: admission would take ${waitMs} ms, more than the ${remainingMs} ms left of maxWait`);
    }
    await sleep(Math.min(remainingMs, waitMs * (1 + Math.random() * jitter)), signal);
  }
}

/** The options of an attempt with this action id and cost (undefined: neither given). */
function attemptOptionsOf(actionId: string | undefined, cost: unknown): AttemptOptions | undefined {
  if (cost === undefined) return actionId === undefined ? undefined : { actionId };
  return actionId === undefined ? { cost: cost as number } : { actionId, cost: cost as number };
}

/** Options of `wrap`. */
export interface WrapOptions<Args extends unknown[]> extends Omit<WaitOptions, 'actionId' | 'cost'> {
  /** The id each call is limited under, from the call's arguments, e.g. `(userId, operation) => \`${userId}:${operation}\``. */
  readonly id: (...args: Args) => LimiterId;
  /**
   * What a call that is not admitted does: `'reject'` rejects with a
   * {@link RateLimitedError} carrying the decision (the function is not
   * called); `'wait'` waits until admitted (see `maxWaitMs`, `signal`).
   * @default 'reject'
   */
  readonly whenLimited?: 'reject' | 'wait';
  /** The action id of each call, from its arguments (see {@link AttemptOptions}): a retried call is never counted twice. */
  readonly actionId?: (...args: Args) => string;
  /** What each call costs (see {@link AttemptOptions}; required on a budget without `defaultCost`): a number, or a function of the call's arguments. */
  readonly cost?: number | ((...args: Args) => number);
}

const WRAP_SCHEMA = {
  ...WAIT_SCHEMA,
  actionId: optional(func<unknown>('a function from the arguments to an action id'), undefined),
  id: func<unknown>('a function from the arguments to an id'),
  whenLimited: optional(oneOf(['reject', 'wait'] as const), 'reject'),
};

/** Makes a function rate limited per id; see `RollingRateLimiter.wrap`. */
export function wrapFunction<Args extends unknown[], Result, Info extends RateLimitInfo>(
  limiter: WaitableLimiter<Info>,
  peekFirst: boolean,
  fn: (...args: Args) => Result,
  options: WrapOptions<Args>,
): (...args: Args) => Promise<Awaited<Result>> {
  func('a function to wrap')(fn, 'fn');
  if (typeof options !== 'object' || options === null || typeof options.id !== 'function') {
    throw new InvalidOptionTypeError('Expected `id` to be a function from the arguments to an id', 'id', (options as { id?: unknown } | null)?.id);
  }
  // Checked once, here: each call reads these, never the caller's object again.
  const { id, actionId: actionIdOf, whenLimited, cost, ...waitOptions } = normalize(options, WRAP_SCHEMA, 'the options');
  const plan = waitPlan(waitOptions);
  const idOf = id as (...args: Args) => LimiterId;
  const actionIdOfCall = actionIdOf as ((...args: Args) => string) | undefined;
  return async (...args: Args): Promise<Awaited<Result>> => {
    const key = idOf(...args);
    const actionId = actionIdOfCall?.(...args);
    const callCost: unknown = typeof cost === 'function' ? (cost as (...args: Args) => unknown)(...args) : cost;
    if (whenLimited === 'wait') {
      await waitFor(limiter, key, peekFirst, plan, actionId, callCost);
    } else {
      const info = await limiter.limitWithInfo(key, attemptOptionsOf(actionId, callCost));
      if (info.blocked) throw new RateLimitedError(info);
    }
    return await fn(...args);
  };
}
