// Options are the caller's own properties: what an object inherits, here from a
// polluted Object.prototype (as a careless deep merge of request JSON leaves
// it), must change nothing. Each case pollutes, runs the library, and removes
// the pollution before it asserts.

import { expect } from 'chai';
import { RateLimitedError, RateLimiterStack, RollingRateLimiter } from '../../src/index.js';
import { normalizeRateLimitOptions } from '../../src/http/express/rate-limit-options.js';
import { normalizeHonoOptions } from '../../src/http/hono/hono-options.js';
import { normalizeGuardOptions } from '../../src/integrations/nestjs/guard-options.js';
import { RollingWindowStore } from '../../src/http/stores/express-rate-limit-store.js';
import { circuitBreakerOption } from '../../src/options/circuit-breaker-options.js';
import { normalizeLimiterOptions, normalizeStackOptions } from '../../src/options/limiter-options.js';

const prototype = Object.prototype as unknown as Record<string, unknown>;
const pollutedKeys = new Set<string>();

/** Sets `properties` on Object.prototype (enumerable, as an assignment leaves them) until {@link cleanUp}. */
function pollute(properties: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(properties)) {
    expect(Object.hasOwn(prototype, name), `Object.prototype.${name} exists already`).to.equal(false);
    pollutedKeys.add(name);
    prototype[name] = value;
  }
}

function cleanUp(): void {
  for (const name of pollutedKeys) delete prototype[name];
  pollutedKeys.clear();
}

/** What `run` returns or throws while Object.prototype carries `properties`; the pollution is gone when it settles. */
async function whilePolluted<T>(properties: Record<string, unknown>, run: () => T | Promise<T>): Promise<{ value?: T; error?: unknown }> {
  pollute(properties);
  try {
    return { value: await run() };
  } catch (error) {
    return { error };
  } finally {
    cleanUp();
  }
}

/** A clock the test moves, in milliseconds from a fixed start. */
function testClock(): { read: () => number; at: (ms: number) => void } {
  let now = 1_700_000_000_000_000;
  const start = now;
  return { read: () => now, at: (ms) => (now = start + ms * 1000) };
}

const rules = { interval: 1000, maxInInterval: 1 } as const;

describe('options read through a polluted Object.prototype', () => {
  afterEach(cleanUp);

  it("ignores inherited limiter options: countBlocked, clock, onStoreError and the rest are the caller's own or their defaults", async () => {
    const expected = normalizeLimiterOptions({ ...rules });
    const pollution = {
      countBlocked: false,
      clock: () => 42,
      onStoreError: 'allow',
      minDifference: 500,
      namespace: 'polluted',
      timeout: 1,
      batch: true,
      useScript: true,
      circuitBreaker: false,
    };
    const { value: normalized, error } = await whilePolluted(pollution, () => normalizeLimiterOptions({ ...rules }));
    expect(error).to.equal(undefined);
    expect(normalized).to.deep.equal(expected);

    // And what the limiter does: blocked attempts still count, and the memory store is served (not refused for `batch`).
    const clock = testClock();
    const { value: outcomes, error: failure } = await whilePolluted(pollution, async () => {
      const limiter = new RollingRateLimiter({ ...rules, clock: clock.read });
      const answers = [await limiter.limit('u')];
      clock.at(600);
      answers.push(await limiter.limit('u')); // blocked, and recorded
      clock.at(1200);
      answers.push(await limiter.limit('u')); // the attempt at 600 ms is still in the window
      return { answers, countBlocked: limiter.countBlocked, minDifference: limiter.minDifference, namespace: limiter.namespace };
    });
    expect(failure).to.equal(undefined);
    expect(outcomes).to.deep.equal({ answers: [false, true, true], countBlocked: true, minDifference: 0, namespace: 'rolling-window-limiter' });
  });

  it('ignores inherited circuitBreaker fields', async () => {
    const { value, error } = await whilePolluted({ failureThreshold: 1, cooldown: 5 }, () => circuitBreakerOption({}));
    expect(error).to.equal(undefined);
    expect(value).to.deep.equal(circuitBreakerOption(undefined));
  });

  it('ignores inherited stack options', async () => {
    const limiters = [new RollingRateLimiter({ ...rules, namespace: 'a' }), new RollingRateLimiter({ ...rules, namespace: 'b' })];
    const expected = normalizeStackOptions(undefined);
    const { value, error } = await whilePolluted({ batch: true, onStoreError: 'allow', circuitBreaker: false }, () => ({
      normalized: normalizeStackOptions({}),
      stack: new RateLimiterStack(limiters, {}),
    }));
    expect(error).to.equal(undefined);
    expect(value?.normalized).to.deep.equal(expected);
    expect(value?.stack.limiters).to.have.length(2);
  });

  it('ignores an inherited actionId in the options of one attempt', async () => {
    const limiter = new RollingRateLimiter({ ...rules, interval: 60_000 });
    const { value, error } = await whilePolluted({ actionId: 'polluted' }, async () => [
      await limiter.limitWithInfo('u', {}),
      await limiter.limitWithInfo('u', {}),
    ]);
    expect(error).to.equal(undefined);
    // An inherited action id would make the second attempt a retry of the first, answered as admitted.
    expect(value?.map((info) => [info.blocked, info.alreadyAdmitted])).to.deep.equal([
      [false, undefined],
      [true, undefined],
    ]);
  });

  it('ignores inherited waitUntilAllowed options, and its attempts carry no inherited actionId', async () => {
    const limiter = new RollingRateLimiter({ ...rules, interval: 60_000 });
    const { value, error } = await whilePolluted({ jitter: 5, maxWaitMs: 10, actionId: 'polluted' }, async () => {
      const first = await limiter.waitUntilAllowed('w', { maxWait: 0 });
      const second = await limiter.waitUntilAllowed('w', { maxWait: 0 }).catch((rejection: unknown) => rejection);
      return { first, second };
    });
    expect(error).to.equal(undefined);
    expect(value?.first.blocked).to.equal(false);
    expect(value?.second).to.be.instanceOf(RateLimitedError);
  });

  it('ignores inherited wrap options', async () => {
    const limiter = new RollingRateLimiter({ ...rules, interval: 60_000 });
    const { value, error } = await whilePolluted({ whenLimited: 'wait', actionId: 'not a function', jitter: 5 }, async () => {
      const double = limiter.wrap((n: number) => n * 2, { id: () => 'wrapped' });
      return [await double(2), await double(3).catch((rejection: unknown) => rejection)];
    });
    expect(error).to.equal(undefined);
    expect(value?.[0]).to.equal(4);
    // `whenLimited` is its default, 'reject': the blocked call rejects instead of waiting for a minute.
    expect(value?.[1]).to.be.instanceOf(RateLimitedError);
  });

  it('ignores inherited Express middleware options', async () => {
    const limiter = new RollingRateLimiter({ ...rules });
    const { value, error } = await whilePolluted({ validate: 'no', key: 'not a function', headers: 'none', ipv6Subnet: 128, onLimited: () => undefined }, () =>
      normalizeRateLimitOptions({ limiter, message: 'slow down' }),
    );
    expect(error).to.equal(undefined);
    expect(value).to.include({ validate: true, key: undefined, headers: 'draft', ipv6Subnet: 56, onLimited: undefined, message: 'slow down' });
  });

  it('ignores inherited Hono middleware options', async () => {
    const limiter = new RollingRateLimiter({ ...rules });
    const key = (): string => 'k';
    const { value, error } = await whilePolluted({ connInfo: () => ({ remote: {} }), skip: 'no' }, () => normalizeHonoOptions({ limiter, key }));
    expect(error).to.equal(undefined);
    expect(value).to.include({ key, connInfo: undefined, skip: undefined });
  });

  it('ignores inherited NestJS guard options', async () => {
    const expected = normalizeGuardOptions({});
    const { value, error } = await whilePolluted({ namespace: 'polluted', clock: 'redis', onStoreError: 'allow', key: 'not a function' }, () =>
      normalizeGuardOptions({}),
    );
    expect(error).to.equal(undefined);
    expect(value).to.deep.equal(expected);
  });

  it('ignores inherited options of the express-rate-limit store, its own and those express-rate-limit hands it', async () => {
    const { value, error } = await whilePolluted({ prefix: 'polluted:', maxLimit: 1, skipFailedRequests: true }, async () => {
      const store = new RollingWindowStore({});
      store.init({ windowMs: 60_000, limit: 2 });
      await store.increment('u');
      await store.increment('u');
      const third = await store.increment('u');
      return { prefix: store.prefix, third: third.totalHits };
    });
    expect(error).to.equal(undefined);
    expect(value).to.deep.include({ prefix: 'rl:', third: 3 });
  });

  it('still reads own options that are not enumerable, and leaves the caller’s object as it was', () => {
    const options = Object.defineProperty({ interval: 1000 }, 'maxInInterval', { value: 3, enumerable: false });
    expect(normalizeLimiterOptions(options).maxInInterval).to.equal(3);
    expect(Object.getOwnPropertyNames(options)).to.deep.equal(['interval', 'maxInInterval']);
  });
});
