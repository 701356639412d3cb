// The default clock must never run ahead of the wall clock: a clock that
// forced each reading past the previous one drifted into the future under a
// busy process, and a limiter on such a clock admits more than it promised
// (the window's start moves forward with it). These replay the schedules
// that showed it, in memory; test/redis/local-clock.test.ts compares the
// scores written to Redis with the wall clock. A soak: a busy process takes
// millions of decisions, so `npm run test:soak` and `npm test` run it, not
// `npm run test:unit`.

import { expect } from 'chai';
import { localMicroseconds } from '../../src/core/clock.js';
import { RollingRateLimiter } from '../../src/index.js';

/** The most timestamps (ms) that fall in any window of `intervalMs`. */
function mostInAnyWindow(timesMs: readonly number[], intervalMs: number): number {
  let most = 0;
  for (let i = 0; i < timesMs.length; i += 1) {
    let count = 0;
    for (let j = i; j < timesMs.length && (timesMs[j] as number) - (timesMs[i] as number) < intervalMs; j += 1) count += 1;
    most = Math.max(most, count);
  }
  return most;
}

/** How far this process's clock is ahead of the wall clock's current millisecond, in µs (0 when it is not). */
function clockLeadUs(): number {
  const reading = localMicroseconds();
  return Math.max(0, reading - ((Date.now() + 1) * 1000 - 1));
}

describe("the 'local' clock under a busy process", function () {
  this.timeout(60_000);

  it('10 attempts, 1.5 million decisions for other ids, 10 more: at most 10 admitted in any second, and the clock not ahead', async () => {
    const limiter = new RollingRateLimiter({ interval: 1000, maxInInterval: 10 });
    const busy = new RollingRateLimiter({ interval: 1000, maxInInterval: 10 });
    const admittedAt: number[] = [];
    const attemptA = async (): Promise<void> => {
      if (!(await limiter.limit('A'))) admittedAt.push(Date.now());
    };
    const started = Date.now();
    for (let i = 0; i < 10; i += 1) await attemptA();
    for (let i = 0; i < 1_500_000; i += 1) await busy.limit(`other-${i % 10_000}`);
    // The readings themselves, as fast as a process can take them: forcing each one past the last drifted 1 µs per call.
    for (let i = 0; i < 1_500_000; i += 1) localMicroseconds();
    for (let i = 0; i < 10; i += 1) await attemptA();
    const lead = clockLeadUs();
    console.log(`      A admitted ${admittedAt.length} times in ${Date.now() - started} ms; the clock is ${lead} µs ahead of the wall clock`);
    expect(mostInAnyWindow(admittedAt, 1000), 'admitted within one second').to.be.at.most(10);
    expect(lead, 'µs ahead of the wall clock').to.equal(0);
  });

  it('countBlocked: false on one hot id for 800 ms: at most 10 admitted with 10 per second', async () => {
    const limiter = new RollingRateLimiter({ interval: 1000, maxInInterval: 10, countBlocked: false });
    const admittedAt: number[] = [];
    const started = Date.now();
    let attempts = 0;
    while (Date.now() - started < 800) {
      for (let i = 0; i < 1000; i += 1) {
        attempts += 1;
        if (!(await limiter.limit('hot'))) admittedAt.push(Date.now());
      }
      for (let i = 0; i < 20_000; i += 1) localMicroseconds();
    }
    console.log(`      hot id: ${attempts} attempts in ${Date.now() - started} ms, ${admittedAt.length} admitted; the clock is ${clockLeadUs()} µs ahead`);
    expect(mostInAnyWindow(admittedAt, 1000), 'admitted within one second').to.be.at.most(10);
    expect(admittedAt.length).to.be.at.least(10);
    expect(clockLeadUs()).to.equal(0);
  });
});
