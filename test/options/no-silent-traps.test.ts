// Traps a first-time user fell into without a word, each now said out loud:
//
// - a bare number is milliseconds, so `interval: 60` (meant as a minute) was a
//   60 ms window and `minDifference: 3` (meant as 3 s) a 3 ms gap: the
//   limiter now warns, once per process and kind, naming the duration string
//   it probably meant, unless `validate` turns the warning off (checked in
//   fresh child processes: small-durations-child.ts);
// - an attempt on a budget of cost without a `cost` weighed 1 (a budget of
//   200,000 tokens spent one token per call): it is now a `TypeError`, unless
//   the limiter declares `defaultCost`, what such an attempt weighs.

import { expect } from 'chai';
import {
  InvalidOptionRangeError,
  InvalidOptionTypeError,
  OPTION_WARNING_CODES,
  RateLimiterStack,
  RollingRateLimiter,
  type RollingRateLimiterOptions,
} from '../../src/index.js';
import { runChild } from '../support/child-process.js';
import { downRedisClient } from '../support/down-redis.js';
import { TestClock } from '../support/test-clock.js';

/** What a fresh process that made these limiters was warned about. */
interface ChildWarnings {
  readonly made: (string | true)[];
  readonly warnings: { name: string; code: string | undefined; message: string }[];
  readonly published: { code: string; message: string; store: string }[];
}

/** Makes one limiter per options object, in order, in a fresh process; what it was warned about. */
async function warnedAbout(...options: RollingRateLimiterOptions[]): Promise<ChildWarnings> {
  const run = await runChild('../options/small-durations-child.ts', [JSON.stringify(options)], 30_000);
  expect(run.code, `${run.stdout}\n${run.stderr}`).to.equal(0);
  return JSON.parse(run.stdout) as ChildWarnings;
}

describe('a bare number of milliseconds that was probably meant as seconds', function () {
  this.timeout(60_000);

  it("warns about `interval: 60` once per process, naming '60s', with its code, on process.emitWarning and the warning channel", async () => {
    const { made, warnings, published } = await warnedAbout(
      { interval: 60, maxInInterval: 5 },
      { interval: 500, maxInInterval: 5, namespace: 'second' },
      { interval: 999, maxInInterval: 5, namespace: 'third' },
    );
    expect(made).to.deep.equal([true, true, true]);
    expect(warnings.map(({ name, code }) => [name, code])).to.deep.equal([['RateLimiterWarning', OPTION_WARNING_CODES.smallInterval]]);
    const message = warnings[0]?.message ?? '';
    expect(message).to.include('`interval: 60` is 60 milliseconds').and.to.include("did you mean '60s'?");
    expect(message).to.include("`interval: '60ms'`").and.to.include('`validate: { smallInterval: false }`');
    expect(published).to.deep.equal([{ code: OPTION_WARNING_CODES.smallInterval, message, store: 'memory' }]);
  });

  it("warns about `minDifference: 3` once per process, naming '3s'", async () => {
    const { warnings } = await warnedAbout(
      { interval: '1m', maxInInterval: 5, minDifference: 3 },
      { interval: '1m', maxInInterval: 5, minDifference: 9, namespace: 'second' },
    );
    expect(warnings.map(({ code }) => code)).to.deep.equal([OPTION_WARNING_CODES.smallMinDifference]);
    expect(warnings[0]?.message).to.include('`minDifference: 3` is 3 milliseconds').and.to.include("did you mean '3s'?");
  });

  it('stays silent for plausible milliseconds, a duration with its unit, no gap, a refused limiter, and `validate: false`', async () => {
    const { made, warnings, published } = await warnedAbout(
      { interval: 1000, maxInInterval: 5, minDifference: 10 },
      { interval: 60_000, maxInInterval: 5, minDifference: 0, namespace: 'b' },
      { interval: '60ms', maxInInterval: 5, minDifference: '3ms', namespace: 'c' },
      { interval: '0.5s', maxInInterval: 5, namespace: 'd' },
      { interval: 60, maxInInterval: 5, minDifference: 3, validate: false, namespace: 'e' },
      { interval: 60, maxInInterval: 5, minDifference: 3, validate: { smallInterval: false, smallMinDifference: false }, namespace: 'f' },
      // Refused (minDifference above interval): a limiter that is never made warns about nothing.
      { interval: 60, maxInInterval: 5, minDifference: 61 },
    );
    expect(made).to.deep.equal([true, true, true, true, true, true, 'InvalidOptionRangeError']);
    expect(warnings).to.deep.equal([]);
    expect(published).to.deep.equal([]);
  });

  it('turns off one warning with `validate: { smallInterval: false }`, the other still given', async () => {
    const { warnings } = await warnedAbout({ interval: 60, maxInInterval: 5, minDifference: 3, validate: { smallInterval: false } });
    expect(warnings.map(({ code }) => code)).to.deep.equal([OPTION_WARNING_CODES.smallMinDifference]);
  });

  it('refuses a `validate` that is neither a boolean nor an object of known checks, naming it', () => {
    const made = (validate: unknown) => () => new RollingRateLimiter({ interval: 60_000, maxInInterval: 5, validate: validate as never });
    expect(made('no')).to.throw(InvalidOptionTypeError, /Expected `validate` to be a boolean or an object/);
    expect(made({ smallIntervals: false })).to.throw(InvalidOptionTypeError, /Unknown option `validate.smallIntervals`/);
    expect(made({ smallInterval: 'off' })).to.throw(InvalidOptionTypeError, /Expected `validate.smallInterval` to be a boolean/);
    expect(made({ smallInterval: false }), 'an object of known checks').to.not.throw();
  });
});

/** What `promise` rejects with (undefined when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('an attempt on a budget of cost without a `cost`', () => {
  let clock: TestClock;
  beforeEach(() => {
    clock = new TestClock();
  });
  const budget = (options: Partial<RollingRateLimiterOptions> = {}): RollingRateLimiter =>
    new RollingRateLimiter({ namespace: 'tokens', interval: 60_000, maxCostInInterval: 1000, countBlocked: false, clock: clock.read, ...options });

  it('is a TypeError naming the budget and `defaultCost`, by every method that decides, and records nothing', async () => {
    const limiter = budget();
    const calls: [string, () => Promise<unknown>][] = [
      ['limit', () => limiter.limit('user')],
      ['limitWithInfo', () => limiter.limitWithInfo('user', { actionId: 'a' })],
      ['wouldLimit', () => limiter.wouldLimit('user')],
      ['wouldLimitWithInfo', () => limiter.wouldLimitWithInfo('user')],
      ['waitUntilAllowed', () => limiter.waitUntilAllowed('user')],
      ['wrap', () => limiter.wrap(() => 'done', { id: () => 'user' })()],
    ];
    for (const [name, call] of calls) {
      const error = await rejectionOf(call());
      expect(error, name).to.be.instanceOf(InvalidOptionTypeError).and.to.be.instanceOf(TypeError);
      expect(error, name).to.include({ option: 'cost', received: undefined });
      expect((error as Error).message, name)
        .to.include('Expected `cost` for an attempt on a budget of cost (`maxCostInInterval`, namespace `tokens`), got none')
        .and.to.include('declare `defaultCost`');
    }
    expect(await limiter.limitWithInfo('user', { cost: 1000 }), 'the whole budget is still there').to.include({ blocked: false, costRemaining: 0 });
    expect(limiter.defaultCost).to.equal(undefined);
  });

  it('is a TypeError on a stack with a budget too, and stays 1 where nothing counts cost', async () => {
    const requests = new RollingRateLimiter({ namespace: 'requests', interval: 60_000, maxInInterval: 2, clock: clock.read });
    const stack = new RateLimiterStack([requests, budget()]);
    expect(await rejectionOf(stack.limit('user'))).to.be.instanceOf(InvalidOptionTypeError);
    expect(stack.defaultCost).to.equal(undefined);
    expect(await requests.limitWithInfo('user')).to.include({ blocked: false, actionsRemaining: 1 });
    expect(await new RateLimiterStack([requests]).limit('user')).to.equal(false);
  });

  it('weighs the limiter’s `defaultCost` when it declares one; a given cost still weighs what it says', async () => {
    const limiter = budget({ defaultCost: 100 });
    expect(limiter.defaultCost).to.equal(100);
    expect(await limiter.limitWithInfo('user')).to.include({ blocked: false, costRemaining: 900, actionsRemaining: 9 });
    expect(await limiter.wouldLimitWithInfo('user')).to.include({ blocked: false, costRemaining: 800 });
    expect(await limiter.limitWithInfo('user', { cost: 901 })).to.include({ blocked: true, costRemaining: 900 });
    expect(await limiter.limitWithInfo('user', { cost: 1 })).to.include({ blocked: false, costRemaining: 899 });
    expect(await limiter.waitUntilAllowed('user')).to.include({ blocked: false, costRemaining: 799 });
  });

  it('weighs, in a stack, the `defaultCost` its budgets declare, and refuses budgets that declare different ones', async () => {
    const requests = new RollingRateLimiter({ namespace: 'requests', interval: 60_000, maxInInterval: 5, clock: clock.read });
    const perDay = budget({ namespace: 'tokens:day', interval: 86_400_000, maxCostInInterval: 5000 });
    const stack = new RateLimiterStack([requests, budget({ defaultCost: 300 }), perDay]);
    expect(stack.defaultCost).to.equal(300);
    const info = await stack.limitWithInfo('user');
    expect(info.tiers.map((tier) => tier.costRemaining ?? tier.actionsRemaining)).to.deep.equal([4, 700, 4700]);
    expect(new RateLimiterStack([budget({ namespace: 'a', defaultCost: 300 }), budget({ namespace: 'b', defaultCost: 300 })]).defaultCost).to.equal(300);
    expect(() => new RateLimiterStack([requests, budget({ namespace: 'a', defaultCost: 300 }), budget({ namespace: 'b', defaultCost: 10 })])).to.throw(
      InvalidOptionTypeError,
      /Cannot stack limiters\[2\] \(`defaultCost: 10`\) with limiters\[1\] \(`defaultCost: 300`\)/,
    );
  });

  it('refuses a `defaultCost` on a limit of actions (TypeError), above the budget (RangeError), or not a positive safe integer', () => {
    const made = (options: Partial<RollingRateLimiterOptions>) => () => budget(options);
    expect(() => new RollingRateLimiter({ interval: 60_000, maxInInterval: 5, defaultCost: 1 })).to.throw(
      InvalidOptionTypeError,
      /Got `defaultCost` `1` \(number\) for a limiter that counts actions/,
    );
    expect(made({ defaultCost: 1001 })).to.throw(InvalidOptionRangeError, /Expected `defaultCost` to be at most `maxCostInInterval` \(1000\), got `1001`/);
    for (const bad of [0, -1, 1.5, 2 ** 53]) expect(made({ defaultCost: bad }), String(bad)).to.throw(InvalidOptionRangeError, /`defaultCost`/);
    expect(made({ defaultCost: '5' as never })).to.throw(InvalidOptionTypeError, /`defaultCost`/);
    expect(made({ defaultCost: 1000 })).to.not.throw();
  });

  it('reaches a fallback limiter as the store would have weighed it: by the `defaultCost`', async () => {
    const client = await downRedisClient();
    try {
      const fallback = budget({ namespace: 'fallback' }); // no defaultCost of its own
      const limiter = new RollingRateLimiter({
        client,
        namespace: 'tokens-on-redis',
        interval: 60_000,
        maxCostInInterval: 1000,
        defaultCost: 250,
        countBlocked: false,
        circuitBreaker: false,
        onStoreError: fallback,
      });
      const info = await limiter.limitWithInfo('user');
      expect(info).to.include({ blocked: false, costRemaining: 750 });
      expect(info.storeFailure?.policy).to.equal('fallback');
      expect(await fallback.wouldLimitWithInfo('user', { cost: 750 })).to.include({ blocked: false, costRemaining: 0 });
    } finally {
      client.disconnect();
    }
  });
});
