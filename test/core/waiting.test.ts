import { expect } from 'chai';
import sinon from 'sinon';
import { RateLimitedError, RateLimiterStack, RollingRateLimiter, isRateLimiterError } from '../../src/index.js';

describe('waitUntilAllowed (fake timers)', () => {
  let timers: sinon.SinonFakeTimers;
  beforeEach(() => {
    timers = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
  });
  afterEach(() => timers.restore());
  const clock = (): number => Date.now() * 1000;

  it('admits every waiting caller, never more than the limit in any window', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'uploads', interval: 1000, maxInInterval: 3, countBlocked: false, clock });
    const admitted: number[] = [];
    const workers = Array.from({ length: 10 }, () => limiter.waitUntilAllowed('seller').then(() => admitted.push(Date.now())));
    await timers.tickAsync(10_000);
    await Promise.all(workers);
    expect(admitted).to.have.length(10);
    for (const at of admitted) expect(admitted.filter((other) => other > at - 1000 && other <= at).length).to.be.at.most(3);
    expect(Math.max(...admitted) - Math.min(...admitted)).to.be.at.least(3000);
  });

  it('does not fill the window with its own blocked attempts when blocked attempts count', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'n', interval: 1000, maxInInterval: 2, clock });
    const admitted: number[] = [];
    const workers = Array.from({ length: 6 }, () => limiter.waitUntilAllowed('id').then(() => admitted.push(Date.now())));
    await timers.tickAsync(10_000);
    await Promise.all(workers);
    expect(admitted).to.have.length(6);
    expect(Math.max(...admitted) - Math.min(...admitted)).to.be.below(4000);
  });

  it('spreads the wake-ups of workers told the same wait (jitter)', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'n', interval: 1000, maxInInterval: 1, countBlocked: false, clock });
    await limiter.limit('id');
    const delays: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    // A sandbox of its own: on sinon's default one, a later sinon.restore() would put this test's fake setTimeout back.
    const sandbox = sinon.createSandbox();
    sandbox.stub(globalThis, 'setTimeout').callsFake(((callback: () => void, ms: number) => {
      delays.push(ms);
      return realSetTimeout(callback, ms);
    }) as typeof setTimeout);
    const workers = Array.from({ length: 40 }, () => limiter.waitUntilAllowed('id', { maxWaitMs: 60_000 }));
    await timers.tickAsync(0);
    sandbox.restore();
    // Leave out the limiter's own store timeouts (2000 ms): the sleeps are 1000 ms plus up to 20 %.
    const sleeps = delays.filter((delay) => delay !== 2000);
    expect(sleeps).to.have.length(40);
    expect(new Set(sleeps).size).to.be.greaterThan(30);
    for (const delay of sleeps) expect(delay).to.be.within(1000, 1200);
    await timers.tickAsync(60_000);
    await Promise.all(workers);
  });

  it('rejects with RateLimitedError, without sleeping, when admission would take longer than maxWaitMs', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'n', interval: 60_000, maxInInterval: 1, countBlocked: false, clock });
    await limiter.limit('id');
    const error = await limiter.waitUntilAllowed('id', { maxWaitMs: 5_000 }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(RateLimitedError);
    expect((error as RateLimitedError).info.millisecondsUntilAllowed).to.equal(60_000);
    expect(isRateLimiterError(error)).to.equal(true);
  });

  it('stops waiting when its signal aborts', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'n', interval: 60_000, maxInInterval: 1, countBlocked: false, clock });
    await limiter.limit('id');
    const controller = new AbortController();
    const waiting = limiter.waitUntilAllowed('id', { signal: controller.signal }).catch((e: unknown) => e);
    await timers.tickAsync(1000);
    controller.abort();
    const error = await waiting;
    expect((error as Error).name).to.equal('AbortError');
    expect(timers.countTimers()).to.equal(0);
  });

  it('works on a stack, waiting for every tier', async () => {
    const perSecond = new RollingRateLimiter({ namespace: 's', interval: 1000, maxInInterval: 2, countBlocked: false, clock });
    const perFive = new RollingRateLimiter({ namespace: 'f', interval: 5000, maxInInterval: 3, countBlocked: false, clock });
    const stack = new RateLimiterStack([perSecond, perFive]);
    const admitted: number[] = [];
    const workers = Array.from({ length: 6 }, () => stack.waitUntilAllowed('id').then(() => admitted.push(Date.now())));
    await timers.tickAsync(20_000);
    await Promise.all(workers);
    expect(admitted).to.have.length(6);
    for (const at of admitted) expect(admitted.filter((other) => other > at - 5000 && other <= at).length).to.be.at.most(3);
  });
});

describe('waitUntilAllowed: waits longer than a timer can hold (2^31 - 1 ms, about 24.8 days)', () => {
  const thirtyDaysMs = 30 * 24 * 3600 * 1000;

  it('sleeps in steps and admits after the wait, asking the store only at the start and the end', async () => {
    const timers = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
    try {
      const clock = (): number => Date.now() * 1000;
      const limiter = new RollingRateLimiter({ namespace: 'n', interval: '30d', maxInInterval: 1, countBlocked: false, clock });
      await limiter.limit('id');
      const attempts = sinon.spy(limiter, 'limitWithInfo');
      let admittedAt: number | undefined;
      const waiting = limiter.waitUntilAllowed('id', { jitter: 0 }).then(() => (admittedAt = Date.now()));
      await timers.tickAsync(10_000);
      expect(attempts.callCount, 'attempts in the first 10 s').to.equal(1);
      await timers.tickAsync(2 ** 31);
      expect(admittedAt, 'still waiting after the first step').to.equal(undefined);
      expect(attempts.callCount, 'attempts after the first step').to.equal(1);
      await timers.tickAsync(thirtyDaysMs);
      await waiting;
      expect(attempts.callCount).to.equal(2);
      expect(admittedAt).to.equal(Date.UTC(2026, 0, 1) + thirtyDaysMs);
    } finally {
      timers.restore();
    }
  });

  it('does not spin on real timers, and sets no timer Node would overflow', async () => {
    const emitWarning = sinon.spy(process, 'emitWarning');
    try {
      const limiter = new RollingRateLimiter({ namespace: 'n', interval: '30d', maxInInterval: 1, countBlocked: false });
      await limiter.limit('id');
      const attempts = sinon.spy(limiter, 'limitWithInfo');
      const controller = new AbortController();
      const waiting = limiter.waitUntilAllowed('id', { signal: controller.signal }).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 200));
      controller.abort();
      expect(((await waiting) as Error).name).to.equal('AbortError');
      const overflows = emitWarning.getCalls().filter((call) => (call.args[1] as unknown) === 'TimeoutOverflowWarning');
      expect(overflows, 'TimeoutOverflowWarnings').to.have.length(0);
      expect(attempts.callCount, 'attempts in 200 ms').to.equal(1);
    } finally {
      emitWarning.restore();
    }
  });
});

describe('wrap', () => {
  it("rejects with RateLimitedError carrying the decision, without calling the function (whenLimited: 'reject')", async () => {
    // The double-submit guard: 2 per 5 s per user and operation.
    const guard = new RollingRateLimiter({ namespace: 'submit', interval: 5_000, maxInInterval: 2 });
    const placeOrder = sinon.stub<[string, string], Promise<string>>().callsFake(async (userId, item) => `${userId} ordered ${item}`);
    const submit = guard.wrap(placeOrder, { id: (userId: string) => `${userId}:placeOrder` });
    expect(await submit('ann', 'tea')).to.equal('ann ordered tea');
    expect(await submit('ann', 'tea')).to.equal('ann ordered tea');
    const error = await submit('ann', 'tea').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(RateLimitedError);
    expect((error as RateLimitedError).info).to.include({ blocked: true, blockedDueToCount: true });
    expect(await submit('bob', 'tea')).to.equal('bob ordered tea');
    expect(placeOrder.callCount).to.equal(3);
  });

  it("waits until admitted (whenLimited: 'wait')", async () => {
    const timers = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
    try {
      const limiter = new RollingRateLimiter({
        namespace: 'n',
        interval: 1000,
        maxInInterval: 1,
        countBlocked: false,
        clock: () => Date.now() * 1000,
      });
      const work = sinon.stub().resolves('done');
      const limited = limiter.wrap(work, { id: () => 'one', whenLimited: 'wait' });
      const results = Promise.all([limited(), limited(), limited()]);
      await timers.tickAsync(5_000);
      expect(await results).to.deep.equal(['done', 'done', 'done']);
    } finally {
      timers.restore();
    }
  });

  it('refuses bad options at once', () => {
    const limiter = new RollingRateLimiter({ namespace: 'n', interval: 1000, maxInInterval: 1 });
    expect(() => limiter.wrap(() => 1, {} as never)).to.throw(TypeError, /`id`/);
    expect(() => limiter.wrap(() => 1, { id: () => 'x', whenLimited: 'later' as never })).to.throw(RangeError, /`whenLimited`/);
    expect(() => limiter.wrap(() => 1, { id: () => 'x', whenLimited: 'wait', maxWaitMs: -1 })).to.throw(RangeError, /`maxWaitMs`/);
    expect(() => limiter.wrap(() => 1, { id: () => 'x', whenLimited: 'wait', maxWait: '1 s' })).to.throw(TypeError, /`maxWait`/);
    expect(() => limiter.wrap(() => 1, { id: () => 'x', maxWiat: 10 } as never)).to.throw(TypeError, /Unknown option `maxWiat`/);
  });

  it('waits at most `maxWait`, a duration, or its former name `maxWaitMs`, and refuses both at once and unknown options', async () => {
    const limiter = new RollingRateLimiter({ namespace: 'n', interval: '1m', maxInInterval: 1, countBlocked: false });
    await limiter.limit('id');
    for (const options of [{ maxWait: '5s' }, { maxWaitMs: '5s' }, { maxWaitMs: 5_000 }] as const) {
      const error = await limiter.waitUntilAllowed('id', options).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).to.be.instanceOf(RateLimitedError);
    }
    expect(await limiter.waitUntilAllowed('id', { maxWait: 1, maxWaitMs: 1 }).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    const unknown = await limiter.waitUntilAllowed('id', { maxWaittMs: 1 } as never).catch((e: unknown) => e);
    expect((unknown as Error).message).to.match(/^Unknown option `maxWaittMs`/);
  });
});
