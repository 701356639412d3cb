// Memory of a cost tier on Redis (issue 38, "Memory ∝ records, not units"): a
// budget of 200,000 tokens a minute fed calls of 1,000 tokens holds about 200
// members, one per call in the window (and the few kept for calls in flight),
// not one per token; and with `countBlocked: true`, a hot id hammering it is
// held by the flood bound, which keeps the newest records until they weigh
// the budget, trimming the oldest at every blocked attempt.
// Members and bytes (MEMORY USAGE of the sorted set and of its weights) are
// printed, for docs/benchmarks.md.

import { expect } from 'chai';
import { KeyBuilder, recordWeightsKey } from '../../src/core/identity.js';
import { RollingRateLimiter, type RollingRateLimiterOptions } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useIORedisClient } from '../support/ioredis-client.js';
import { recordCount } from '../support/redis-keys.js';
import { TestClock } from '../support/test-clock.js';

const BUDGET = 200_000;
const CALL = 1_000;
/** Calls of CALL tokens the budget holds in one window. */
const CALLS_PER_WINDOW = BUDGET / CALL;
/** The limiter's timeout (the default): records stay this long after leaving the window, for calls in flight. */
const TIMEOUT_MS = 2_000;
/** At most the window's calls, and those admitted `everyMs` apart in the timeout before its start. */
const mostMembers = (everyMs: number): number => CALLS_PER_WINDOW + Math.ceil(TIMEOUT_MS / everyMs);

describe('a cost tier on Redis: members and bytes per key', function () {
  this.timeout(120_000);
  const connection = useIORedisClient();
  const namespaces = uniqueNamespaces('cost-memory');

  const make = (clock: TestClock, options: Partial<RollingRateLimiterOptions>): RollingRateLimiter =>
    new RollingRateLimiter({
      client: connection.client,
      namespace: namespaces.next(),
      interval: 60_000,
      maxCostInInterval: BUDGET,
      clock: clock.read,
      ...options,
    });

  /** The id's members, and MEMORY USAGE of its sorted set and its weights. */
  const footprint = async (limiter: RollingRateLimiter, id: string): Promise<{ members: number; bytes: number; weightsBytes: number }> => {
    const key = new KeyBuilder(limiter.namespace).keyFor(id);
    const usage = async (name: string): Promise<number> => Number(await connection.client.call('MEMORY', 'USAGE', name, 'SAMPLES', '0'));
    return { members: await recordCount(connection.client, key), bytes: await usage(key), weightsBytes: await usage(recordWeightsKey(key)) };
  };

  /** Attempts of `cost` every `everyMs` for `forMs` of the test clock: how many were admitted, and the footprint at its most members and at the end. */
  const drive = async (limiter: RollingRateLimiter, clock: TestClock, everyMs: number, forMs: number, cost: number) => {
    const key = new KeyBuilder(limiter.namespace).keyFor('user');
    let admitted = 0;
    let peak = { members: 0, bytes: 0, weightsBytes: 0 };
    for (let at = 0; at < forMs; at += everyMs) {
      clock.advanceMs(everyMs);
      if (!(await limiter.limit('user', { cost }))) admitted += 1;
      if ((await recordCount(connection.client, key)) > peak.members) peak = await footprint(limiter, 'user');
    }
    return { admitted, most: peak.members, peak, last: await footprint(limiter, 'user') };
  };

  type Footprint = Awaited<ReturnType<typeof footprint>>;
  const describe = ({ members, bytes, weightsBytes }: Footprint): string =>
    `${members} members, ${bytes} bytes (sorted set) + ${weightsBytes} bytes (weights), ${((bytes + weightsBytes) / members).toFixed(1)} bytes per member`;
  const report = (what: string, { peak, last }: { peak: Footprint; last: Footprint }): void =>
    console.log(`      ${what}: at most ${describe(peak)}; at the end ${describe(last)}`);

  it('calls of 1,000 tokens at the budget for two minutes: about 200 members (countBlocked: true)', async () => {
    // One call every 300 ms is exactly 200,000 tokens a minute: every call is admitted.
    const clock = new TestClock();
    const driven = await drive(make(clock, {}), clock, 300, 120_000, CALL);
    report('200k tokens a minute, 1,000 a call every 300 ms', driven);
    expect(driven.admitted).to.equal(400);
    // The window's 200, and the 7 admitted in the 2 s before it, kept for calls in flight.
    expect(driven.most).to.be.within(CALLS_PER_WINDOW, mostMembers(300));
  });

  it('calls of 1,000 tokens offered at three times the budget for two minutes: about 200 members (countBlocked: false)', async () => {
    const clock = new TestClock();
    const driven = await drive(make(clock, { countBlocked: false }), clock, 100, 120_000, CALL);
    report('200k tokens a minute, 1,000 a call every 100 ms, countBlocked false', driven);
    expect(driven.admitted).to.be.within(2 * CALLS_PER_WINDOW, 2 * CALLS_PER_WINDOW + 10);
    // The first 200 were admitted 100 ms apart, and so are those that replace them a window later: 20 in 2 s.
    expect(driven.most).to.be.within(CALLS_PER_WINDOW, mostMembers(100));
  });

  it('a hot id hammering with calls of 1,000 tokens (countBlocked: true): the flood bound holds the key', async () => {
    // 100 calls a second, 30 times the budget, for 70 s: every call after the first 200 is blocked and recorded.
    const clock = new TestClock();
    const driven = await drive(make(clock, {}), clock, 10, 70_000, CALL);
    report('200k tokens a minute, 1,000 a call every 10 ms, countBlocked true', driven);
    expect(driven.admitted).to.equal(CALLS_PER_WINDOW);
    // It keeps the newest records until they weigh the budget (200 of them), trimming the oldest at every blocked
    // attempt (before the weights kept a running sum of the records without an action id: up to twice that, plus 16).
    expect(driven.most).to.be.within(CALLS_PER_WINDOW, CALLS_PER_WINDOW + 1);
  });
});
