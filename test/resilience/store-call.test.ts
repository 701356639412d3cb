import { expect } from 'chai';
import sinon from 'sinon';
import { RollingRateLimiter, StoreError, TimeoutError, isRateLimiterError } from '../../src/index.js';
import { controlledClient } from '../support/controlled-client.js';
import { callStore } from '../../src/resilience/store-call.js';

describe('callStore', () => {
  afterEach(() => sinon.restore());

  it('rejects with a TimeoutError when the store never answers', async () => {
    const clock = sinon.useFakeTimers();
    const pending = callStore(() => new Promise<never>(() => {}), 250, 'test').catch((error: unknown) => error);
    await clock.tickAsync(250);
    const error = await pending;
    expect(error).to.be.instanceOf(TimeoutError);
    expect(error).to.include({ code: 'ERR_RATE_LIMITER_TIMEOUT', timeoutMs: 250 });
  });

  it('wraps a client failure in a StoreError carrying it as cause', async () => {
    const failure = new Error('ECONNREFUSED');
    const error = await callStore(() => Promise.reject(failure), 1000, 'Recording an attempt').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(StoreError);
    expect(isRateLimiterError(error)).to.equal(true);
    expect((error as StoreError).cause).to.equal(failure);
    expect((error as StoreError).code).to.equal('ERR_RATE_LIMITER_STORE');
    expect((error as StoreError).message).to.include('ECONNREFUSED');
  });

  it('clears its timer after a call', async () => {
    const clock = sinon.useFakeTimers();
    await callStore(() => Promise.resolve(1), 60_000, 'test');
    await callStore(() => Promise.reject(new Error('x')), 60_000, 'test').catch(() => undefined);
    expect(clock.countTimers()).to.equal(0);
  });

  it('makes limit() and limitWithInfo() reject, not hang, when Redis hangs', async () => {
    const redis = controlledClient();
    try {
      redis.respond('hang');
      const limiter = new RollingRateLimiter({ client: redis.client, namespace: 'hang', interval: 1000, maxInInterval: 1, timeout: 20 });
      expect(await limiter.limit('user').catch((e: unknown) => e)).to.be.instanceOf(TimeoutError);
      expect(await limiter.limitWithInfo('user').catch((e: unknown) => e)).to.be.instanceOf(TimeoutError);
    } finally {
      redis.close();
    }
  });

  it('sets no timer for an in-memory decision, which cannot hang', async () => {
    const setTimeoutSpy = sinon.spy(globalThis, 'setTimeout');
    const limiter = new RollingRateLimiter({ interval: 1000, maxInInterval: 1, timeout: 20 });
    await limiter.limit('user');
    await limiter.wouldLimit('user');
    expect(setTimeoutSpy.callCount).to.equal(0);
  });
});

describe('errors', () => {
  it('have a name, a stable code, and are recognised by isRateLimiterError', () => {
    const error = new StoreError('boom', { cause: 'x' });
    expect(error.name).to.equal('StoreError');
    expect(error).to.be.instanceOf(Error);
    expect(isRateLimiterError(error)).to.equal(true);
    expect(isRateLimiterError(new Error('other'))).to.equal(false);
    expect(isRateLimiterError({ code: 'ERR_RATE_LIMITER_STORE' })).to.equal(false);
  });

  it('rejects a clock that returns something other than integer microseconds', async () => {
    const limiter = new RollingRateLimiter({ interval: 1000, maxInInterval: 1, clock: () => 1.5 });
    const error = await limiter.limit('user').catch((e: unknown) => e);
    expect(error).to.be.instanceOf(TypeError);
    expect((error as Error).message).to.include('`clock`');
  });
});
