import { expect } from 'chai';
import sinon from 'sinon';
import {
  InvalidOptionRangeError,
  InvalidOptionTypeError,
  RateLimiterError,
  RateLimiterStack,
  RollingRateLimiter,
  StoreError,
  TimeoutError,
  type RollingRateLimiterOptions,
} from '../../src/index.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { controlledClient, type CallOutcome, type ControlledClient, type SentCall } from '../support/controlled-client.js';
import { UNDO_SCRIPT } from '../../src/redis/scripts/undo-script.js';
import { TestClock } from '../support/test-clock.js';

describe('onStoreError', () => {
  let redis: ControlledClient | undefined;
  afterEach(() => {
    sinon.restore();
    redis?.close();
    redis = undefined;
  });
  const failure = new StoreError('Redis is down', { cause: new Error('ECONNREFUSED') });
  /** A Redis client whose calls all fail with `failure` (or as `respond` says): the store of one limiter only. */
  const failingRedis = (respond: (call: SentCall) => CallOutcome = () => failure): ControlledClient['client'] => {
    redis = controlledClient();
    redis.respond(respond);
    return redis.client;
  };
  const failingStore = (): void => {
    sinon.stub(MemoryStore.prototype, 'attempt').rejects(failure);
    sinon.stub(MemoryStore.prototype, 'peek').rejects(failure);
  };
  const rules = (extra: Partial<RollingRateLimiterOptions> = {}): RollingRateLimiterOptions => ({
    namespace: 'n',
    interval: 60_000,
    maxInInterval: 2,
    ...extra,
  });

  it("'throw' (the default) rejects with the store's error", async () => {
    const limiter = new RollingRateLimiter(rules());
    failingStore();
    expect(await limiter.limit('u').catch((e: unknown) => e)).to.equal(failure);
    expect(await limiter.wouldLimit('u').catch((e: unknown) => e)).to.equal(failure);
  });

  it("'allow' fails open and says so", async () => {
    const limiter = new RollingRateLimiter(rules({ onStoreError: 'allow' }));
    failingStore();
    expect(await limiter.limit('u')).to.equal(false);
    expect(await limiter.limitWithInfo('u')).to.deep.equal({
      blocked: false,
      blockedDueToCount: false,
      blockedDueToMinDifference: false,
      actionsRemaining: 2,
      millisecondsUntilAllowed: 0,
      storeFailure: { policy: 'allow', error: failure },
    });
  });

  it("'block' fails closed and says so", async () => {
    const limiter = new RollingRateLimiter(rules({ onStoreError: 'block', timeout: 500 }));
    failingStore();
    expect(await limiter.limit('u')).to.equal(true);
    const info = await limiter.wouldLimitWithInfo('u');
    expect(info).to.include({ blocked: true, actionsRemaining: 0, millisecondsUntilAllowed: 500 });
    expect(info.storeFailure).to.deep.equal({ policy: 'block', error: failure });
  });

  it('a fallback limiter decides with its own state, and says so', async () => {
    const clock = new TestClock();
    const fallback = new RollingRateLimiter({ namespace: 'fallback', interval: 60_000, maxInInterval: 2, clock: clock.read });
    // Only the primary limiter's own store fails.
    const limiter = new RollingRateLimiter(rules({ onStoreError: fallback, clock: clock.read, client: failingRedis() }));
    const first = await limiter.limitWithInfo('u');
    expect(first).to.include({ blocked: false, actionsRemaining: 1 });
    expect(first.storeFailure).to.deep.equal({ policy: 'fallback', error: failure });
    await limiter.limit('u');
    expect(await limiter.limit('u')).to.equal(true);
    expect(await fallback.wouldLimit('u'), 'the fallback kept the count').to.equal(true);
  });

  it('a failing fallback rejects with a StoreError naming both failures', async () => {
    const fallback = { limitWithInfo: () => Promise.reject(new Error('fallback broke')), wouldLimitWithInfo: () => Promise.reject(new Error('x')) };
    const limiter = new RollingRateLimiter(rules({ onStoreError: fallback }));
    failingStore();
    const error = (await limiter.limit('u').catch((e: unknown) => e)) as StoreError;
    expect(error).to.be.instanceOf(StoreError);
    expect(error.message).to.include('Redis is down').and.to.include('fallback broke');
    expect(error.cause).to.equal(failure);
  });

  it('applies to timeouts too', async () => {
    const redis = controlledClient();
    try {
      redis.respond('hang');
      const limiter = new RollingRateLimiter(rules({ client: redis.client, onStoreError: 'allow', timeout: 10 }));
      const info = await limiter.limitWithInfo('u');
      expect(info.storeFailure?.error).to.be.instanceOf(TimeoutError);
    } finally {
      redis.close();
    }
  });

  it('never stands in for a bad id', async () => {
    const limiter = new RollingRateLimiter(rules({ onStoreError: 'allow' }));
    failingStore();
    expect(await limiter.limit('').catch((e: unknown) => e)).to.be.instanceOf(TypeError);
  });

  it('applies to a stack, with each tier in the info', async () => {
    const a = new RollingRateLimiter({ namespace: 'a', interval: 1000, maxInInterval: 3 });
    const b = new RollingRateLimiter({ namespace: 'b', interval: 60_000, maxInInterval: 10 });
    const stack = new RateLimiterStack([a, b], { onStoreError: 'block' });
    failingStore();
    const info = await stack.limitWithInfo('u');
    expect(info).to.include({ blocked: true, actionsRemaining: 0 });
    expect(info.tiers.map((tier) => [tier.namespace, tier.blocked])).to.deep.equal([
      ['a', true],
      ['b', true],
    ]);
    expect(info.storeFailure?.policy).to.equal('block');
  });

  it("hands the attempt's actionId to a fallback limiter, so a job retried during an outage counts once; undo reaches it too", async () => {
    const clock = new TestClock();
    const fallback = new RollingRateLimiter({ namespace: 'fallback', interval: 60_000, maxInInterval: 2, clock: clock.read });
    // The primary limiter's store fails; undo (one EVALSHA of the undo script) is answered once `undoBack` is set,
    // with nothing removed.
    const isUndo = (call: SentCall): boolean => call.kind === 'evalsha' && call.sha1 === UNDO_SCRIPT.sha1;
    let undoBack = false;
    const limiter = new RollingRateLimiter(
      rules({ onStoreError: fallback, clock: clock.read, client: failingRedis((call) => (undoBack && isUndo(call) ? { reply: 0 } : failure)) }),
    );
    const undoCallsToStore = (): number => redis?.calls.filter(isUndo).length ?? 0;
    expect(await limiter.limitWithInfo('u', { actionId: 'job-1' })).to.include({ blocked: false, actionsRemaining: 1 });
    const retry = await limiter.limitWithInfo('u', { actionId: 'job-1' });
    expect(retry).to.include({ blocked: false, actionsRemaining: 1, alreadyAdmitted: true });
    expect(retry.storeFailure?.policy).to.equal('fallback');
    // The store is down for undo as well: the fallback, which admitted the job, gives the slot back.
    expect(await limiter.undo('u', 'job-1')).to.equal(true);
    expect(await fallback.wouldLimitWithInfo('u'), 'a dry run counts itself: 2 - 1').to.include({ actionsRemaining: 1 });
    // The store is back: undo asks both, since the action may have been admitted by either.
    undoBack = true; // nothing to remove in the store: its undo answers false
    await fallback.limit('u', { actionId: 'job-2' });
    expect(await limiter.undo('u', 'job-2')).to.equal(true);
    expect(undoCallsToStore()).to.equal(2);
  });

  it('stacks in-memory limiters given no namespace, as a fallback stack', async () => {
    const fallback = new RateLimiterStack([
      new RollingRateLimiter({ interval: 1000, maxInInterval: 1 }),
      new RollingRateLimiter({ interval: 60_000, maxInInterval: 5 }),
    ]);
    const primary = new RollingRateLimiter(rules({ namespace: 'p1', interval: 1000, maxInInterval: 1, client: failingRedis() }));
    const stack = new RateLimiterStack([primary], { onStoreError: fallback });
    expect(await stack.limit('u')).to.equal(false);
    expect(await stack.limit('u'), 'the fallback stack keeps its own count').to.equal(true);
  });

  it('refuses an invalid policy, naming the option', () => {
    expect(() => new RollingRateLimiter(rules({ onStoreError: 'ignore' as never }))).to.throw(InvalidOptionRangeError, /`onStoreError`/);
    expect(() => new RollingRateLimiter(rules({ onStoreError: {} as never }))).to.throw(InvalidOptionTypeError, /`onStoreError`/);
    expect(() => new RateLimiterStack([new RollingRateLimiter(rules())], { onStoreError: 5 as never })).to.throw(TypeError, /`onStoreError`/);
  });
});

describe('error classes', () => {
  it('are all recognised as RateLimiterError, option errors included, while subclasses stay exact', () => {
    const optionError = new InvalidOptionTypeError('x', 'interval', 'y');
    expect(optionError).to.be.instanceOf(TypeError);
    expect(optionError).to.be.instanceOf(RateLimiterError);
    expect(new StoreError('x')).to.be.instanceOf(RateLimiterError);
    expect(new StoreError('x')).not.to.be.instanceOf(TimeoutError);
    expect(new TimeoutError(5)).not.to.be.instanceOf(StoreError);
    expect(new Error('x')).not.to.be.instanceOf(RateLimiterError);
    expect(optionError).to.include({ code: 'ERR_RATE_LIMITER_INVALID_OPTION', option: 'interval', received: 'y', name: 'InvalidOptionTypeError' });
  });
});
