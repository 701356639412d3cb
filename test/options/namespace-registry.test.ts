// One rule per namespace and client in a process: limiters on one namespace
// share their keys, so a second limiter there with another rule (which would
// over-admit with the first) is refused when it is made. No server is needed:
// the clients never connect.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import redisMock from 'redis-mock';
import { InvalidOptionTypeError, RollingRateLimiter, UnsupportedError, type RollingRateLimiterOptions } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';

const namespaces = uniqueNamespaces('namespace-registry');
const rule = { interval: 60_000, maxInInterval: 3, minDifference: 0, countBlocked: true } as const;

function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('one rule per namespace and client', () => {
  const clients: Redis[] = [];
  const client = (): Redis => {
    const made = new Redis({ lazyConnect: true });
    clients.push(made);
    return made;
  };
  after(() => {
    for (const made of clients) made.disconnect();
  });

  const others: [string, number | boolean][] = [
    ['interval', 1_000],
    ['maxInInterval', 1],
    ['minDifference', 500],
    ['countBlocked', false],
    // A timeout above the least time in flight (2 s) keeps records longer: the shorter one would let keys expire.
    ['timeout', 5_000],
  ];
  for (const [field, value] of others) {
    const change = { [field]: value } as Partial<RollingRateLimiterOptions>;
    it(`refuses a second limiter whose \`${field}\` differs, with a TypeError naming the namespace and both rules`, () => {
      const redis = client();
      const namespace = namespaces.next(field);
      const first = new RollingRateLimiter({ client: redis, namespace, ...rule });
      const error = thrownBy(() => new RollingRateLimiter({ client: redis, namespace, ...rule, ...change }));
      expect(error).to.be.instanceOf(InvalidOptionTypeError).and.to.be.instanceOf(TypeError);
      const { message, option, received } = error as InvalidOptionTypeError;
      expect({ option, received }).to.deep.equal({ option: 'namespace', received: namespace });
      expect(message).to.include(`\`${namespace}\``);
      expect(message).to.include('{ interval: 60000, maxInInterval: 3, minDifference: 0, countBlocked: true, timeout: 2000 }');
      expect(message).to.include(`${field}: ${String(value)}`);
      expect(first.namespace).to.equal(namespace);
    });
  }

  it('accepts any number of limiters with the same rule on one namespace and client (however the durations are written)', () => {
    const redis = client();
    const namespace = namespaces.next();
    const limiters = [
      new RollingRateLimiter({ client: redis, namespace, ...rule }),
      new RollingRateLimiter({ client: redis, namespace, interval: '1m', maxInInterval: 3 }),
      new RollingRateLimiter({ client: redis, namespace, ...rule, minDifference: '0ms', timeout: 500, onStoreError: 'allow' }),
    ];
    expect(limiters.map((limiter) => limiter.namespace)).to.deep.equal([namespace, namespace, namespace]);
  });

  it('accepts other rules on other clients, on other namespaces, and in memory', () => {
    const namespace = namespaces.next();
    const redis = client();
    new RollingRateLimiter({ client: redis, namespace, ...rule });
    expect(() => new RollingRateLimiter({ client: client(), namespace, ...rule, maxInInterval: 1 })).not.to.throw();
    expect(() => new RollingRateLimiter({ client: redis, namespace: `${namespace}:other`, ...rule, maxInInterval: 1 })).not.to.throw();
    // Each in-memory limiter has a store of its own: no two share keys.
    new RollingRateLimiter({ namespace, ...rule });
    expect(() => new RollingRateLimiter({ namespace, ...rule, maxInInterval: 1 })).not.to.throw();
    expect(() => new RollingRateLimiter({ ...rule })).not.to.throw();
    expect(() => new RollingRateLimiter({ ...rule, maxInInterval: 1 })).not.to.throw();
  });

  it('claims nothing for a limiter that cannot be made', () => {
    const redis = redisMock.createClient();
    const namespace = namespaces.next();
    // redis-mock cannot run scripts: `countBlocked: false` is refused for the client, not for the namespace.
    expect(() => new RollingRateLimiter({ client: redis, namespace, ...rule, countBlocked: false })).to.throw(UnsupportedError);
    expect(() => new RollingRateLimiter({ client: redis, namespace, ...rule, maxInInterval: 1 })).not.to.throw();
    expect(() => new RollingRateLimiter({ client: redis, namespace, ...rule })).to.throw(InvalidOptionTypeError, 'maxInInterval: 1');
  });
});
