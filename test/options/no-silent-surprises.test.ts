// Mistakes the library used to accept without a word, each now refused with
// an error that names it: a clock in milliseconds (every window 1000 times
// too long), an empty namespace, and a client of no supported kind whose
// refusal named it with a blank.

import { expect } from 'chai';
import { InvalidOptionRangeError, InvalidOptionTypeError, RateLimiterStack, RollingRateLimiter, UnsupportedError } from '../../src/index.js';
import { TestClock } from '../support/test-clock.js';

const rules = { interval: 60_000, maxInInterval: 2 } as const;

/** What `promise` rejects with (undefined when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('a clock in milliseconds', () => {
  for (const [name, clock, advice] of [
    ['Date.now() (milliseconds)', () => Date.now(), /looks like milliseconds; multiply by 1000/],
    ['a fixed millisecond time', () => Date.UTC(2026, 0, 1), /looks like milliseconds; multiply by 1000/],
    ['seconds', () => Math.floor(Date.now() / 1000), /looks like seconds, or a clock that counts from 0; .*times 1,000,000/],
    ['a clock that counts from 0', () => 0, /looks like seconds, or a clock that counts from 0/],
  ] as const) {
    it(`is refused at its first reading with a TypeError that says what it looks like and how to fix it: ${name}`, async () => {
      const limiter = new RollingRateLimiter({ ...rules, clock });
      for (const call of [() => limiter.limit('a'), () => limiter.wouldLimitWithInfo('a')]) {
        const error = await rejectionOf(call());
        expect(error).to.be.instanceOf(InvalidOptionTypeError).and.to.be.instanceOf(TypeError);
        expect(error).to.have.property('option', 'clock');
        expect((error as InvalidOptionTypeError).received)
          .to.be.a('number')
          .below(1e15);
        expect((error as Error).message)
          .to.include('`clock`')
          .and.to.include('microseconds since the epoch')
          .and.to.match(advice);
      }
    });
  }

  it('is refused in a stack too', async () => {
    const clock = (): number => Date.now();
    const stack = new RateLimiterStack([
      new RollingRateLimiter({ ...rules, namespace: 'a', clock }),
      new RollingRateLimiter({ ...rules, namespace: 'b', clock }),
    ]);
    expect(await rejectionOf(stack.limit('a'))).to.be.instanceOf(InvalidOptionTypeError);
  });

  it('is told apart from microseconds: the time now, the tests’ fixed 2026 clock and 10^15 itself are taken', async () => {
    for (const start of [Date.now() * 1000, Date.UTC(2026, 0, 1) * 1000, 1e15]) {
      const clock = new TestClock(start);
      const limiter = new RollingRateLimiter({ ...rules, clock: clock.read });
      expect(await limiter.limit('a')).to.equal(false);
      expect(await limiter.limit('a')).to.equal(false);
      expect(await limiter.limit('a')).to.equal(true);
      clock.advanceMs(60_000);
      expect(await limiter.limit('a')).to.equal(false); // the window is 60 s of this clock, not 60,000 s
    }
  });

  it('is refused below 10^15 µs (2001-09-09), whatever reading first falls there', async () => {
    let now = 1e15;
    const limiter = new RollingRateLimiter({ ...rules, clock: () => now });
    expect(await limiter.limit('a')).to.equal(false);
    now = 1e15 - 1;
    expect(await rejectionOf(limiter.limit('a'))).to.be.instanceOf(InvalidOptionTypeError);
  });
});

describe("namespace: ''", () => {
  it('is refused with a RangeError naming `namespace`, with a client or without', () => {
    const client = { get() {} } as never;
    for (const options of [
      { ...rules, namespace: '' },
      { ...rules, namespace: '', client },
    ]) {
      let error: unknown;
      try {
        new RollingRateLimiter(options);
      } catch (caught) {
        error = caught;
      }
      expect(error).to.be.instanceOf(InvalidOptionRangeError).and.to.be.instanceOf(RangeError);
      expect(error).to.include({ option: 'namespace', received: '' });
      expect((error as Error).message)
        .to.include('`namespace`')
        .and.to.include('non-empty');
    }
  });

  it('takes any other string, a single character included', () => {
    expect(new RollingRateLimiter({ ...rules, namespace: 'x' }).namespace).to.equal('x');
    expect(new RollingRateLimiter({ ...rules, namespace: ' ' }).namespace).to.equal(' ');
  });
});

describe('the refusal of an unknown client', () => {
  /** The message of the refusal of `client`. */
  function refusal(client: object): string {
    try {
      new RollingRateLimiter({ ...rules, namespace: 'n', client: client as never });
    } catch (error) {
      expect(error).to.be.instanceOf(UnsupportedError);
      return (error as Error).message;
    }
    throw new Error('the client was accepted');
  }

  it('names the client, never with a blank: its class, or what kind of object it is', () => {
    class LegacyRedisWrapper {}
    const cases: [object, string][] = [
      [new LegacyRedisWrapper(), 'an instance of LegacyRedisWrapper'],
      [new (class {})(), 'an instance of an anonymous class'],
      [{}, 'a plain object'],
      [Object.create(null) as object, 'an object without a prototype'],
      [{ constructor: 'not a function' }, 'a plain object'],
    ];
    for (const [client, name] of cases) {
      const message = refusal(client);
      expect(message).to.match(/^Unsupported `client` \(([^)]+)\)/);
      expect(message).to.include(`Unsupported \`client\` (${name}):`);
    }
  });

  it('lists node-redis 6 among the clients it takes', () => {
    expect(refusal({})).to.include('`redis` 4, 5 or 6');
  });
});
