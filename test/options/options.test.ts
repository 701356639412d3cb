import { expect } from 'chai';
import { InvalidOptionTypeError, RateLimiterStack, RollingRateLimiter, UnsupportedError } from '../../src/index.js';
import {
  LIMITER_DEFAULTS as DEFAULT_OPTIONS,
  normalizeLimiterOptions as normalizeOptions,
  type RollingRateLimiterOptions,
} from '../../src/options/limiter-options.js';

const valid = { interval: 1000, maxInInterval: 5 } as const;

function thrownBy(options: unknown): unknown {
  try {
    new RollingRateLimiter(options as RollingRateLimiterOptions);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('options', () => {
  it('fills in the defaults without touching the caller’s object', () => {
    const options = Object.freeze({ ...valid });
    const normalized = normalizeOptions(options);
    expect(normalized).to.include({
      interval: 1000,
      maxInInterval: 5,
      minDifference: DEFAULT_OPTIONS.minDifference,
      countBlocked: true,
      clock: 'local',
      timeout: DEFAULT_OPTIONS.timeout,
      namespace: DEFAULT_OPTIONS.memoryNamespace,
    });
    expect(options).to.deep.equal(valid);
  });

  const typeErrors: [string, unknown][] = [
    ['interval', '1000'],
    ['interval', undefined],
    ['maxInInterval', null],
    ['minDifference', '5'],
    ['timeout', true],
    ['countBlocked', 'yes'],
    ['namespace', 42],
    ['clock', 42],
    ['client', 'redis://localhost'],
    ['useScript', 'yes'],
    ['useScript', 1],
  ];
  for (const [name, value] of typeErrors) {
    it(`throws a TypeError naming \`${name}\` and the value for ${JSON.stringify(value) ?? 'undefined'}`, () => {
      const error = thrownBy({ ...valid, [name]: value });
      expect(error).to.be.instanceOf(TypeError);
      expect((error as Error).message).to.include(`\`${name}\``);
      if (typeof value === 'string' || typeof value === 'number') expect((error as Error).message).to.include(String(value));
    });
  }

  const rangeErrors: [string, unknown][] = [
    ['interval', 0],
    ['interval', -1],
    ['interval', 1.5],
    ['interval', NaN],
    ['interval', Infinity],
    ['interval', 1e13],
    ['maxInInterval', 0],
    ['maxInInterval', 2 ** 31],
    ['minDifference', -1],
    ['minDifference', 0.5],
    ['timeout', 0],
    ['clock', 'remote'],
    ['clock', 'REDIS'],
  ];
  for (const [name, value] of rangeErrors) {
    it(`throws a RangeError naming \`${name}\` and the value for ${String(value)}`, () => {
      const error = thrownBy({ ...valid, [name]: value });
      expect(error).to.be.instanceOf(RangeError);
      expect((error as Error).message)
        .to.include(`\`${name}\``)
        .and.to.include(String(value));
    });
  }

  it('refuses a budget above 2^48 with a RangeError naming it (every sum of costs then stays exact), and takes 2^48', () => {
    const { maxInInterval: _, ...rest } = valid;
    for (const value of [2 ** 48 + 1, Number.MAX_SAFE_INTEGER]) {
      const error = thrownBy({ ...rest, maxCostInInterval: value });
      expect(error).to.be.instanceOf(RangeError);
      expect((error as Error).message)
        .to.include('`maxCostInInterval`')
        .and.to.include(String(value));
    }
    expect(thrownBy({ ...rest, maxCostInInterval: 2 ** 48 })).to.equal(undefined);
  });

  it('uses the message shape ``Expected `x` to be …, got `v` (type)``', () => {
    expect((thrownBy({ ...valid, maxInInterval: 0 }) as Error).message).to.equal(
      'Expected `maxInInterval` to be an integer from 1 to 2147483647, got `0` (number)',
    );
  });

  it('refuses a minDifference longer than the interval with a RangeError naming both, on every store', () => {
    // A duck-typed ioredis client: the options are refused before any command could be sent.
    const redisLike = { isCluster: false, multi: () => undefined, pipeline: () => undefined, evalsha: () => undefined, eval: () => undefined };
    for (const extra of [{}, { client: redisLike as never, namespace: 'n' }, { client: redisLike as never, namespace: 'n', countBlocked: false }]) {
      let caught: unknown;
      try {
        new RollingRateLimiter({ interval: 200, maxInInterval: 3, minDifference: 2000, ...extra });
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(RangeError);
      expect((caught as Error).message)
        .to.include('`minDifference`')
        .and.include('`interval`')
        .and.include('2000')
        .and.include('200');
    }
    expect(new RollingRateLimiter({ interval: 200, maxInInterval: 3, minDifference: 200 }).minDifference, 'equal is fine').to.equal(200);
  });

  it('throws a TypeError for an unknown option, naming it', () => {
    const error = thrownBy({ ...valid, maxInterval: 5 });
    expect(error).to.be.instanceOf(TypeError);
    expect((error as Error).message).to.include('`maxInterval`');
  });

  it("refuses a stack's unknown option as a limiter's, naming it", () => {
    const tiers = [new RollingRateLimiter({ namespace: 'a', ...valid }), new RollingRateLimiter({ namespace: 'b', ...valid })];
    let error: unknown;
    try {
      new RateLimiterStack(tiers, { batchh: true } as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(InvalidOptionTypeError);
    expect(error).to.include({ option: 'batchh', received: true });
    expect((error as Error).message).to.equal('Unknown option `batchh`; the options are onStoreError, circuitBreaker, batch');
    expect(new RateLimiterStack(tiers, { onStoreError: 'allow', circuitBreaker: false, batch: false }).limiters).to.have.length(2);
  });

  it('throws a TypeError when the options are not an object', () => {
    expect(thrownBy(undefined)).to.be.instanceOf(TypeError);
    expect(thrownBy(null)).to.be.instanceOf(TypeError);
  });

  it('requires a namespace when a client is given', () => {
    const error = thrownBy({ ...valid, client: { isCluster: false, multi() {}, pipeline() {}, evalsha() {} } });
    expect(error).to.be.instanceOf(TypeError);
    expect((error as Error).message).to.include('`namespace`');
  });

  it("refuses clock: 'redis' without a Redis client", () => {
    const error = thrownBy({ ...valid, clock: 'redis' });
    expect(error).to.be.instanceOf(UnsupportedError);
    expect((error as Error).message)
      .to.include("clock: 'redis'")
      .and.to.include('client');
  });

  it('refuses useScript without a Redis client', () => {
    for (const useScript of [true, false]) {
      const error = thrownBy({ ...valid, useScript });
      expect(error).to.be.instanceOf(UnsupportedError);
      expect((error as Error).message)
        .to.include('`useScript`')
        .and.to.include('client');
    }
  });

  it('refuses a client it does not know, listing what is supported', () => {
    const error = thrownBy({ ...valid, namespace: 'n', client: { get() {} } });
    expect(error).to.be.instanceOf(UnsupportedError);
    expect((error as Error).message).to.include('ioredis');
  });

  it('exposes the rules it enforces', () => {
    const limiter = new RollingRateLimiter({ ...valid, minDifference: 10, namespace: 'ns', countBlocked: false });
    expect(limiter).to.include({ interval: 1000, maxInInterval: 5, minDifference: 10, namespace: 'ns', countBlocked: false });
  });
});

describe('durations', () => {
  it('reads interval, minDifference and timeout as milliseconds or as strings with their unit', () => {
    const normalized = normalizeOptions({ interval: '1m', maxInInterval: 5, minDifference: '500ms', timeout: '2s' });
    expect(normalized).to.include({ interval: 60_000, minDifference: 500, timeout: 2_000 });
    expect(normalizeOptions({ interval: '1.5s', maxInInterval: 1 }).interval).to.equal(1_500);
    expect(normalizeOptions({ interval: '1h', maxInInterval: 1 }).interval).to.equal(3_600_000);
    expect(normalizeOptions({ interval: '1d', maxInInterval: 1 }).interval).to.equal(86_400_000);
    expect(normalizeOptions({ interval: '1.1s', maxInInterval: 1 }).interval).to.equal(1_100);
    const limiter = new RollingRateLimiter({ interval: '10s', maxInInterval: 2, minDifference: '1s' });
    expect([limiter.interval, limiter.minDifference]).to.deep.equal([10_000, 1_000]);
  });

  it('refuses a string that is not a duration with a TypeError naming the option', () => {
    for (const [name, value] of [
      ['interval', '60'],
      ['interval', '10 s'],
      ['interval', '10sec'],
      ['minDifference', '-1s'],
      ['timeout', 'soon'],
    ] as const) {
      const error = thrownBy({ ...valid, [name]: value });
      expect(error, `${name}: ${value}`).to.be.instanceOf(TypeError);
      expect(String(error)).to.include(`\`${name}\``).and.include(JSON.stringify(value));
    }
  });

  it('refuses a duration out of range, or not a whole number of milliseconds, with a RangeError', () => {
    expect(thrownBy({ ...valid, interval: '0s' })).to.be.instanceOf(RangeError);
    expect(String(thrownBy({ ...valid, interval: '0.5ms' }))).to.match(/`interval`.*"0\.5ms".*0\.5 ms/);
    expect(thrownBy({ ...valid, timeout: '30d' })).to.be.instanceOf(RangeError);
  });

  it('takes maxWaitMs as a duration too', async () => {
    const limiter = new RollingRateLimiter({ interval: '1m', maxInInterval: 1 });
    await limiter.limit('a');
    let error: unknown;
    await limiter.waitUntilAllowed('a', { maxWaitMs: '1s' }).catch((caught: unknown) => (error = caught));
    expect(error).to.have.property('name', 'RateLimitedError');
    await limiter.waitUntilAllowed('a', { maxWaitMs: 'a while' as '1s' }).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(TypeError).and.have.property('message').that.includes('`maxWaitMs`');
  });
});
