// How a RateLimiterStack is built, and what it refuses (each refusal a
// TypeError naming the offending entry): no limiters, something that is not
// a RollingRateLimiter, two tiers with one namespace, different clocks, and
// limiters that keep their state in another store. Part of the stack
// contract (stack-contract.ts), run on every backend.

import { expect } from 'chai';
import { RateLimiterStack, type RollingRateLimiter } from '../../src/index.js';
import { TestClock } from '../support/test-clock.js';
import type { StackContractOptions, StackFixture } from './stack-contract.js';

/** Expects `build` to throw a TypeError whose message matches `message`. */
function expectTypeError(build: () => unknown, message: RegExp): void {
  let caught: unknown;
  try {
    build();
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected a TypeError').to.be.instanceOf(TypeError);
  expect((caught as TypeError).message).to.match(message);
}

export function describeStackConstruction(fixture: StackFixture, options: StackContractOptions): void {
  const { make } = fixture;
  let clock: TestClock;
  beforeEach(() => {
    clock = fixture.clock;
  });

  describe('construction', () => {
    it('refuses an empty array or something that is not an array', () => {
      expectTypeError(() => new RateLimiterStack([]), /non-empty array/);
      expectTypeError(() => new RateLimiterStack(undefined as never), /non-empty array/);
      expectTypeError(() => new RateLimiterStack(make() as never), /non-empty array/);
    });

    it('refuses something that is not a RollingRateLimiter, naming its index', () => {
      const limiter = make();
      const lookalike = {
        interval: limiter.interval,
        maxInInterval: limiter.maxInInterval,
        minDifference: limiter.minDifference,
        namespace: 'lookalike',
        countBlocked: true,
        clock: clock.read,
        limit: () => Promise.resolve(false),
        limitWithInfo: () => limiter.limitWithInfo('x'),
        wouldLimit: () => Promise.resolve(false),
        wouldLimitWithInfo: () => limiter.wouldLimitWithInfo('x'),
        clear: () => Promise.resolve(),
      };
      expectTypeError(() => new RateLimiterStack([limiter, lookalike as unknown as RollingRateLimiter]), /limiters\[1\]/);
      expectTypeError(() => new RateLimiterStack([{} as RollingRateLimiter]), /limiters\[0\]/);
      // Holes in a sparse array are not limiters either (map() would skip them).
      // eslint-disable-next-line no-sparse-arrays
      expectTypeError(() => new RateLimiterStack([limiter, ,] as never), /limiters\[1\]/);
      expectTypeError(() => new RateLimiterStack(new Array(2) as never), /limiters\[0\]/);
      expectTypeError(() => new RateLimiterStack([limiter, null as unknown as RollingRateLimiter]), /limiters\[1\]/);
    });

    it('refuses two tiers with the same namespace', () => {
      const limiter = make({ namespace: 'same' });
      expectTypeError(() => new RateLimiterStack([limiter, limiter]), /namespace/);
      const other = make({ namespace: 'other' });
      expectTypeError(() => new RateLimiterStack([limiter, other, limiter]), /namespace.*limiters\[2\]/);
      // Two distinct limiters with one namespace clash only where they share a keyspace (one Redis), not in memory.
      const twin = make({ namespace: limiter.namespace });
      if (twin.namespace === limiter.namespace) {
        if (options.ownStatePerLimiter === true) expect(new RateLimiterStack([limiter, twin]).limiters).to.have.length(2);
        else expectTypeError(() => new RateLimiterStack([limiter, twin]), /namespace/);
      }
    });

    it('refuses limiters with different clocks', () => {
      const other = new TestClock(clock.now);
      const a = make();
      expectTypeError(() => new RateLimiterStack([a, make({ clock: other.read })]), /clock/);
      expectTypeError(() => new RateLimiterStack([a, make({ clock: 'local' })]), /clock/);
      // The same function is the same clock.
      expect(new RateLimiterStack([a, make({ clock: clock.read })]).limiters).to.have.length(2);
    });

    const { foreignLimiter } = options;
    if (foreignLimiter !== undefined) {
      it('refuses limiters that keep their state in another store (they cannot decide in one atomic step)', () => {
        const here = make({ namespace: 'here' });
        const elsewhere = foreignLimiter({ interval: 1000, maxInInterval: 3, clock: clock.read, namespace: 'elsewhere' });
        expectTypeError(() => new RateLimiterStack([here, elsewhere]), /same place/);
        expectTypeError(() => new RateLimiterStack([elsewhere, here]), /same place/);
      });
    }
  });
}
