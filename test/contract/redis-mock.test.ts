// redis-mock, for users' own unit tests: the MULTI path runs the same
// contract; the modes that need Lua are refused at construction.

import { expect } from 'chai';
import redisMock from 'redis-mock';
import { RateLimiterStack, RollingRateLimiter, UnsupportedError, type RedisClient } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { refused } from '../support/refused.js';
import { describeLimiterContract } from './limiter-contract.js';

describe('redis-mock', () => {
  const client = redisMock.createClient() as unknown as RedisClient;
  after(() => (client as unknown as { quit(): void }).quit());
  const namespaces = uniqueNamespaces('mock');

  describeLimiterContract('redis-mock', () => (options) => new RollingRateLimiter({ ...options, client, namespace: namespaces.next(options.namespace) }), {
    countBlockedFalse: false,
    actionIds: false,
    modelSchedules: 300,
  });

  it('refuses countBlocked: false at construction, saying it needs a script', () => {
    const error = refused(() => new RollingRateLimiter({ client, namespace: 'n', interval: 1000, maxInInterval: 1, countBlocked: false }));
    expect(error).to.be.instanceOf(UnsupportedError);
    expect(error.message).to.include('`countBlocked: false`').and.to.include('redis-mock').and.to.include('script');
  });

  it('refuses maxCostInInterval (a cost tier) at construction, saying it needs a script', () => {
    const error = refused(() => new RollingRateLimiter({ client, namespace: 'n', interval: 1000, maxCostInInterval: 100 }));
    expect(error).to.be.instanceOf(UnsupportedError);
    expect(error.message).to.include('`maxCostInInterval`').and.to.include('redis-mock').and.to.include('script');
  });

  it("refuses clock: 'redis' at construction, saying it needs a script", () => {
    const error = refused(() => new RollingRateLimiter({ client, namespace: 'n', interval: 1000, maxInInterval: 1, clock: 'redis' }));
    expect(error).to.be.instanceOf(UnsupportedError);
    expect(error.message).to.include("`clock: 'redis'`").and.to.include('redis-mock');
  });

  it('refuses useScript: true at construction, saying it cannot run scripts', () => {
    const error = refused(() => new RollingRateLimiter({ client, namespace: 'n', interval: 1000, maxInInterval: 1, useScript: true }));
    expect(error).to.be.instanceOf(UnsupportedError);
    expect(error.message).to.include('`useScript: true`').and.to.include('redis-mock');
  });

  it('accepts useScript: false, which is what it does anyway', async () => {
    const limiter = new RollingRateLimiter({ client, namespace: 'use-script-false', interval: 1000, maxInInterval: 1, useScript: false });
    expect(await limiter.limit('u')).to.equal(false);
    expect(await limiter.limit('u')).to.equal(true);
  });

  it('rejects an attempt with an action id, saying it needs a script', async () => {
    const limiter = new RollingRateLimiter({ client, namespace: 'n', interval: 1000, maxInInterval: 1 });
    const error = (await limiter.limit('u', { actionId: 'a' }).catch((e: unknown) => e)) as Error;
    expect(error).to.be.instanceOf(UnsupportedError);
    expect(error.message).to.include('Action ids').and.to.include('redis-mock');
  });

  it('refuses a stack at construction, saying it needs a script', () => {
    const a = new RollingRateLimiter({ client, namespace: 'a', interval: 1000, maxInInterval: 1 });
    const b = new RollingRateLimiter({ client, namespace: 'b', interval: 1000, maxInInterval: 1 });
    const error = refused(() => new RateLimiterStack([a, b]));
    expect(error).to.be.instanceOf(UnsupportedError);
    expect(error.message).to.include('redis-mock').and.to.include('script');
  });
});
