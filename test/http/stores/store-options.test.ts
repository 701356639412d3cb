// The options of the two stores, checked when the store is made (and, for
// what express-rate-limit and @fastify/rate-limit hand over, in `init` and per
// request): unknown names, wrong types and out-of-range values are refused
// with the option's name and the value received.

import { expect } from 'chai';
import { RollingWindowStore, type RollingWindowStoreOptions } from '../../../src/http/stores/express-rate-limit-store.js';
import { rollingWindowStore, type FastifyRateLimitCount, type FastifyRollingWindowStoreOptions } from '../../../src/http/stores/fastify-store.js';
import { InvalidOptionRangeError, InvalidOptionTypeError } from '../../../src/errors/invalid-option-error.js';

describe('RollingWindowStore options', () => {
  const made =
    (options: unknown): (() => unknown) =>
    () =>
      new RollingWindowStore(options as RollingWindowStoreOptions);

  it('takes no options, or client, prefix and maxLimit, with their defaults', () => {
    const store = new RollingWindowStore(undefined);
    expect(store.prefix).to.equal('rl:');
    expect(new RollingWindowStore({ prefix: 'api:', maxLimit: 0 }).prefix).to.equal('api:');
  });

  it('refuses unknown options and values of the wrong kind, naming them', () => {
    expect(made({ windowMs: 1 })).to.throw(InvalidOptionTypeError, /Unknown option `windowMs`; the options are client, prefix, maxLimit/);
    expect(made('rl:')).to.throw(InvalidOptionTypeError, /the options to be an object, got `"rl:"`/);
    expect(made({ client: 'redis://x' })).to.throw(InvalidOptionTypeError, /`client` to be a Redis client object, got `"redis:\/\/x"`/);
    expect(made({ prefix: 7 })).to.throw(InvalidOptionTypeError, /`prefix` to be a string, got `7` \(number\)/);
    expect(made({ maxLimit: -1 })).to.throw(InvalidOptionRangeError, /`maxLimit` to be an integer from 0 to 2147483647, got `-1`/);
    expect(made({ maxLimit: 1.5 })).to.throw(RangeError, /maxLimit/);
    expect(made({ maxLimit: '10' })).to.throw(InvalidOptionTypeError, /`maxLimit`.*`"10"` \(string\)/);
  });

  it("checks express-rate-limit's windowMs and limit in init, and fails each later call with the same error", async () => {
    const store = new RollingWindowStore();
    expect(() => store.init({ windowMs: 60_000, limit: '5' })).to.throw(InvalidOptionTypeError, /`limit` to be an integer from 0 to .*, got `"5"`/);
    let error: unknown;
    await store.increment('a').catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(TypeError).and.to.match(/limit/);
    expect(() => new RollingWindowStore().init({ windowMs: 0, limit: 5 })).to.throw(InvalidOptionRangeError, /`windowMs` to be a number from 1 to .*, got `0`/);
    expect(() => new RollingWindowStore().init({ windowMs: '1m' as never, limit: 5 })).to.throw(InvalidOptionTypeError, /windowMs/);
    expect(() => new RollingWindowStore().init({ windowMs: 60_000, limit: () => 5 })).to.not.throw();
  });
});

describe('rollingWindowStore options', () => {
  const made =
    (options: unknown): (() => unknown) =>
    () =>
      rollingWindowStore(options as FastifyRollingWindowStoreOptions);

  it('takes no options, or client and namespace', () => {
    expect(made(undefined)).to.not.throw();
    expect(made({ namespace: 'api-' })).to.not.throw();
  });

  it('refuses unknown options and values of the wrong kind, naming them', () => {
    expect(made({ prefix: 'x' })).to.throw(InvalidOptionTypeError, /Unknown option `prefix`; the options are client, namespace/);
    expect(made(null)).to.throw(InvalidOptionTypeError, /the options to be an object, got `null`/);
    expect(made({ namespace: 1 })).to.throw(InvalidOptionTypeError, /`namespace` to be a string, got `1` \(number\)/);
    expect(made({ client: 6379 })).to.throw(InvalidOptionTypeError, /`client` to be a Redis client object, got `6379`/);
  });

  it('refuses ipv6Subnet, saying where it belongs', () => {
    expect(made({ ipv6Subnet: 56 })).to.throw(InvalidOptionTypeError, /Give `ipv6Subnet` to @fastify\/rate-limit/);
  });

  it('answers a request whose window or max is not a number with an error naming it', async () => {
    const store = new (rollingWindowStore())();
    const incr = (timeWindow: unknown, max: unknown): Promise<FastifyRateLimitCount | undefined> =>
      new Promise((resolve, reject) => store.incr('k', (error, result) => (error ? reject(error) : resolve(result)), timeWindow as number, max as number));
    const errorOf = (promise: Promise<unknown>): Promise<unknown> =>
      promise.then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(await errorOf(incr('1 minute', 5)))
      .to.be.instanceOf(InvalidOptionTypeError)
      .and.to.match(/`timeWindow`.*`"1 minute"`/);
    expect(await errorOf(incr(60_000, -1)))
      .to.be.instanceOf(InvalidOptionRangeError)
      .and.to.match(/`max`.*`-1`/);
    expect(await errorOf(incr(60_000, Infinity))).to.be.instanceOf(RangeError);
    expect((await incr(1_000.5, 2.9))?.current, 'a fraction of a window is rounded up, of a max down').to.equal(1);
  });
});
