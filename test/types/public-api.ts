// Compile-time checks of the public API's types, never run. `npm run typecheck`
// checks them against src/; test/package/packed-package.test.ts checks the very
// same file against the built .d.ts of the packed package, installed in
// throwaway TypeScript projects (its two imports below are rewritten to
// `rolling-window-limiter` and `rolling-window-limiter/express` there, so keep
// them exactly as they are). Every `@ts-expect-error` must stay an error: tsc
// fails on one that is not.

import type { RequestHandler } from 'express';
import {
  InvalidOptionRangeError,
  InvalidOptionTypeError,
  RateLimitedError,
  RateLimiterError,
  RateLimiterStack,
  RollingRateLimiter,
  StoreError,
  TimeoutError,
  UnsupportedError,
  isRateLimiterError,
  type LimiterId,
  type RateLimitInfo,
  type RateLimiterErrorCode,
  type RollingRateLimiterOptions,
  type StackRateLimitInfo,
  type StoreFailure,
  type TierRateLimitInfo,
} from '../../src/index.js';
import { createRateLimitHeaders, rateLimit, retryAfterSeconds, type InfoOf, type RateLimitOptions } from '../../src/http/express/express-middleware.js';

/** True when `A` and `B` are the same type (not merely assignable). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when its argument is `true`. */
function assertType<T extends true>(): T | undefined {
  return undefined;
}

export function limiterMethods(limiter: RollingRateLimiter): void {
  assertType<Equal<ReturnType<RollingRateLimiter['limit']>, Promise<boolean>>>();
  assertType<Equal<ReturnType<RollingRateLimiter['limitWithInfo']>, Promise<RateLimitInfo>>>();
  assertType<Equal<ReturnType<RollingRateLimiter['wouldLimit']>, Promise<boolean>>>();
  assertType<Equal<ReturnType<RollingRateLimiter['wouldLimitWithInfo']>, Promise<RateLimitInfo>>>();
  assertType<Equal<ReturnType<RollingRateLimiter['clear']>, Promise<void>>>();
  assertType<Equal<ReturnType<RollingRateLimiter['undo']>, Promise<boolean>>>();
  assertType<Equal<ReturnType<RollingRateLimiter['settle']>, Promise<boolean>>>();
  assertType<Equal<ReturnType<RollingRateLimiter['waitUntilAllowed']>, Promise<RateLimitInfo>>>();
  assertType<Equal<LimiterId, string | number>>();

  // The rules, read back.
  assertType<Equal<typeof limiter.interval, number>>();
  assertType<Equal<typeof limiter.maxInInterval, number | undefined>>();
  assertType<Equal<typeof limiter.maxCostInInterval, number | undefined>>();
  assertType<Equal<typeof limiter.countBlocked, boolean>>();
  assertType<Equal<typeof limiter.namespace, string>>();

  void limiter.limit('user:1');
  void limiter.limit(42, { actionId: 'job-1' });
  // @ts-expect-error: an id is a string or a number
  void limiter.limit({ id: 1 });
  // @ts-expect-error: an action id is a string
  void limiter.limit('user:1', { actionId: 1 });
  void limiter.limit('user:1', { actionId: 'call-1', cost: 1_500 });
  void limiter.wouldLimit('user:1', { cost: 1_500 });
  // @ts-expect-error: a cost is a number
  void limiter.limit('user:1', { cost: '1500' });
  // @ts-expect-error: dry runs take no action id
  void limiter.wouldLimit('user:1', { actionId: 'job-1' });
  // @ts-expect-error: the rules are read-only
  limiter.maxInInterval = 5;
}

export function info(result: RateLimitInfo): void {
  assertType<Equal<typeof result.blocked, boolean>>();
  assertType<Equal<typeof result.blockedDueToCount, boolean>>();
  assertType<Equal<typeof result.blockedDueToMinDifference, boolean>>();
  assertType<Equal<typeof result.actionsRemaining, number>>();
  assertType<Equal<typeof result.millisecondsUntilAllowed, number>>();
  assertType<Equal<typeof result.storeFailure, StoreFailure | undefined>>();
  assertType<Equal<typeof result.costRemaining, number | undefined>>();
  assertType<Equal<StoreFailure['policy'], 'allow' | 'block' | 'fallback'>>();
  // @ts-expect-error: only a stack's info has tiers
  void result.tiers;
  // @ts-expect-error: the info is read-only
  result.blocked = false;
}

export function options(): RollingRateLimiterOptions[] {
  return [
    { interval: 1_000, maxInInterval: 5 },
    { interval: 60_000, maxInInterval: 10, minDifference: 3_000, countBlocked: false, clock: 'local', timeout: 250, onStoreError: 'allow' },
    { interval: 1_000, maxInInterval: 5, clock: () => 0, onStoreError: new RollingRateLimiter({ interval: 1_000, maxInInterval: 5 }) },
    { interval: '1m', maxInInterval: 10, minDifference: '3s', timeout: '250ms' },
    { interval: '1.5h', maxInInterval: 10, minDifference: '500ms' },
    // @ts-expect-error: interval is a number of milliseconds, or a duration string with its unit
    { interval: '1000', maxInInterval: 5 },
    // @ts-expect-error: a unit is one of the short forms, not a word
    { interval: '1 minute', maxInInterval: 5 },
    // @ts-expect-error: the units are ms, s, m, h and d
    { interval: '10sec', maxInInterval: 5 },
    // A budget of cost instead of a limit of actions (exactly one of the two, checked when the limiter is made).
    { interval: '1m', maxCostInInterval: 200_000 },
    // @ts-expect-error: countBlocked is a boolean
    { interval: 1_000, maxInInterval: 5, countBlocked: 'yes' },
    // @ts-expect-error: clock is 'local', 'redis' or a function
    { interval: 1_000, maxInInterval: 5, clock: 'utc' },
    // @ts-expect-error: onStoreError is 'throw', 'allow', 'block' or a fallback limiter
    { interval: 1_000, maxInInterval: 5, onStoreError: 'ignore' },
    // @ts-expect-error: a client is a Redis client, not a URL
    { interval: 1_000, maxInInterval: 5, namespace: 'n', client: 'redis://localhost:6379' },
    // @ts-expect-error: unknown options are refused
    { interval: 1_000, maxInInterval: 5, minDiference: 3_000 },
  ];
}

export function constructors(): void {
  // @ts-expect-error: the options are required
  void new RollingRateLimiter();
  // @ts-expect-error: a stack takes limiters
  void new RateLimiterStack([{ interval: 1_000, maxInInterval: 5 }]);
}

export function stacks(stack: RateLimiterStack): void {
  assertType<Equal<ReturnType<RateLimiterStack['limit']>, Promise<boolean>>>();
  assertType<Equal<ReturnType<RateLimiterStack['limitWithInfo']>, Promise<StackRateLimitInfo>>>();
  assertType<Equal<ReturnType<RateLimiterStack['wouldLimitWithInfo']>, Promise<StackRateLimitInfo>>>();
  assertType<Equal<StackRateLimitInfo['tiers'], readonly TierRateLimitInfo[]>>();
  assertType<Equal<typeof stack.limiters, readonly RollingRateLimiter[]>>();
  void stack.limitWithInfo('user').then((result) => result.tiers.map((tier) => tier.namespace));
  const tier: TierRateLimitInfo = {
    blocked: false,
    blockedDueToCount: false,
    blockedDueToMinDifference: false,
    actionsRemaining: 1,
    millisecondsUntilAllowed: 0,
    namespace: 'n',
    interval: 1,
    maxInInterval: 1,
  };
  void tier;
}

export function wrap(limiter: RollingRateLimiter): void {
  const send = limiter.wrap(async (userId: string, text: string) => text.length + userId.length, { id: (userId) => userId });
  assertType<Equal<typeof send, (userId: string, text: string) => Promise<number>>>();
  void send('user:1', 'hello');
  // @ts-expect-error: the id function takes the wrapped function's arguments
  limiter.wrap((userId: string) => userId, { id: (userId: number) => userId });
  // @ts-expect-error: whenLimited is 'reject' or 'wait'
  limiter.wrap((userId: string) => userId, { id: (userId) => userId, whenLimited: 'drop' });
}

export function errors(error: unknown): void {
  if (isRateLimiterError(error)) {
    assertType<Equal<typeof error, RateLimiterError>>();
    assertType<Equal<typeof error.code, RateLimiterErrorCode>>();
  }
  assertType<Equal<RateLimitedError<StackRateLimitInfo>['info'], StackRateLimitInfo>>();
  const typeError: TypeError = new InvalidOptionTypeError('m', 'interval', '1000');
  const rangeError: RangeError = new InvalidOptionRangeError('m', 'maxInInterval', 0);
  const failures: RateLimiterError[] = [new StoreError('m'), new TimeoutError(2_000), new UnsupportedError('m')];
  void [typeError, rangeError, failures];
  // @ts-expect-error: codes are a closed set
  const code: RateLimiterErrorCode = 'ERR_SOMETHING_ELSE';
  void code;
}

export function http(limiter: RollingRateLimiter, stack: RateLimiterStack): void {
  assertType<Equal<ReturnType<typeof rateLimit>, RequestHandler>>();
  assertType<Equal<InfoOf<RateLimiterStack>, StackRateLimitInfo>>();
  assertType<Equal<InfoOf<RollingRateLimiter>, RateLimitInfo>>();
  assertType<Equal<ReturnType<typeof retryAfterSeconds>, number>>();
  const headersFor = createRateLimitHeaders(stack, { headers: 'both', policyName: ({ index }) => `tier-${index}` });
  assertType<Equal<Parameters<typeof headersFor>[0], StackRateLimitInfo>>();
  assertType<Equal<ReturnType<typeof headersFor>, Record<string, string>>>();
  void headersFor;

  const options: RateLimitOptions<RateLimiterStack> = {
    limiter: stack,
    key: (req) => req.get('x-api-key'),
    onLimited: (_req, res, _next, decision) => {
      res.json({ blockedBy: decision.tiers.filter((tier) => tier.blocked).map((tier) => tier.namespace) });
    },
  };
  void rateLimit(options);
  void rateLimit({ limiter, headers: 'legacy', message: 'Too many requests' });
  // @ts-expect-error: headers is 'draft', 'legacy', 'both' or false
  void rateLimit({ limiter, headers: 'ietf' });
  // @ts-expect-error: the limiter is a RollingRateLimiter or a RateLimiterStack
  void rateLimit({ limiter: { interval: 1_000, maxInInterval: 5 } });
  // @ts-expect-error: a key is an id (or nothing), not an object
  void rateLimit({ limiter, key: (req) => req.headers });
}
