// What the script path promises on real Redis beyond the shared contract,
// through the public API and what Redis itself shows (its command stats and
// the keys the README documents): `clock: 'redis'` is one EVALSHA per call
// and survives a flushed script cache, a stack of plain tiers holds what the
// model recorded, useScript: false is refused where only the script can
// decide, a blocked stack leaves non-counting tiers untouched, a flood keeps
// at most maxInInterval members, and `clock: 'redis'` records at the time
// Redis reads. The decide script itself (its SHA1, its replies, its decisions
// at Redis time) is tested in decide-script.test.ts.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter, UnsupportedError } from '../../../src/index.js';
import { commandCalls, commandsDuring } from '../../support/command-stats.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { refused } from '../../support/refused.js';
import { ReferenceLimiter } from '../../support/reference-model.js';
import { ReferenceStack } from '../../support/reference-stack.js';
import { keyOf, recordCount, RECORDS_FROM } from '../../support/redis-keys.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { TestClock } from '../../support/test-clock.js';

describe('the script path on real Redis', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('script');
  before(() => {
    client = connection.client;
  });

  it("clock: 'redis': limit() is one EVALSHA of the decide script, and recovers from SCRIPT FLUSH", async () => {
    const onRedisTime = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, clock: 'redis' });
    await client.script('FLUSH');
    const seen: boolean[] = [];
    const counts = await commandsDuring(client, async () => {
      for (let i = 0; i < 3; i += 1) seen.push(await onRedisTime.limit('user'));
    });
    expect(seen).to.deep.equal([false, false, true]);
    expect(counts).to.deep.equal({ evalsha: 3, eval: 1, multi: 0 });
  });

  it('a stack of plain tiers (per second, minute, day): decides as the model and each tier holds what the model recorded', async () => {
    const clock = new TestClock();
    const rules = [
      { intervalMs: 1_000, maxInInterval: 2 },
      { intervalMs: 60_000, maxInInterval: 5 },
      { intervalMs: 86_400_000, maxInInterval: 8 },
    ];
    const limiters = rules.map(
      ({ intervalMs, maxInInterval }) =>
        new RollingRateLimiter({ client, namespace: namespaces.next(), interval: intervalMs, maxInInterval, countBlocked: false, clock: clock.read }),
    );
    const stack = new RateLimiterStack(limiters);
    const reference = new ReferenceStack(
      rules.map((rule, i) => ({ ...rule, namespace: (limiters[i] as RollingRateLimiter).namespace, minDifferenceMs: 0, countBlocked: false })),
    );
    const blockedBy = new Set<number>();
    let allowed = 0;
    for (let i = 0; i < 60; i += 1) {
      clock.advanceMs([0, 200, 400, 900, 30_000][i % 5] as number);
      const expected = reference.attempt('user', clock.now);
      expect(await stack.limit('user'), `step ${i}`).to.equal(expected.blocked);
      expected.tiers.forEach((tier, k) => tier.blocked && blockedBy.add(k));
      if (!expected.blocked) allowed += 1;
    }
    // Every tier blocked at some step, and each holds what the model recorded: nothing for a blocked attempt.
    expect([...blockedBy].sort(), 'the tiers that blocked').to.deep.equal([0, 1, 2]);
    expect(allowed).to.equal(8);
    for (const [i, limiter] of limiters.entries()) {
      const scores = (await client.zrangebyscore(keyOf(limiter.namespace, 'user'), RECORDS_FROM, '+inf', 'WITHSCORES'))
        .filter((_, k) => k % 2 === 1)
        .map(Number);
      const inWindow = reference.recordedIn(i, 'user').filter((t) => t > clock.now - (rules[i] as { intervalMs: number }).intervalMs * 1000);
      expect(
        scores.filter((t) => t > clock.now - (rules[i] as { intervalMs: number }).intervalMs * 1000),
        `tier ${i}`,
      ).to.deep.equal(inWindow);
      expect(scores.length, `tier ${i}`).to.be.at.most(limiter.maxInInterval as number);
    }
  });

  it('refuses useScript: false where only the script can decide: countBlocked false, the Redis clock, a stack', () => {
    const options = { client, namespace: namespaces.next(), interval: 1000, maxInInterval: 1, useScript: false } as const;
    expect(refused(() => new RollingRateLimiter({ ...options, countBlocked: false }))).to.be.instanceOf(UnsupportedError);
    expect(refused(() => new RollingRateLimiter({ ...options, clock: 'redis' })).message).to.include('`useScript: false`');
    const other = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 1000, maxInInterval: 1 });
    const error = refused(() => new RateLimiterStack([other, new RollingRateLimiter(options)]));
    expect(error).to.be.instanceOf(UnsupportedError);
    expect(error.message).to.include('limiters[1]').and.to.include('`useScript: false`');
  });

  it('leaves a tier that does not count blocked attempts untouched when another tier blocks', async () => {
    const clock = new TestClock();
    const perMinute = new RollingRateLimiter({
      client,
      namespace: namespaces.next('minute'),
      interval: 60_000,
      maxInInterval: 10,
      countBlocked: false,
      clock: clock.read,
    });
    const spacing = new RollingRateLimiter({ client, namespace: namespaces.next('3s'), interval: 3_000, maxInInterval: 1, clock: clock.read });
    const stack = new RateLimiterStack([perMinute, spacing]);
    expect(await stack.limit('teacher')).to.equal(false);
    const minuteKey = keyOf(perMinute.namespace, 'teacher');
    const before = await client.zrange(minuteKey, 0, -1, 'WITHSCORES');
    const pttl = await client.pttl(minuteKey);
    for (let i = 0; i < 20; i += 1) {
      clock.advanceMs(100);
      const info = await stack.limitWithInfo('teacher');
      expect(info.blocked).to.equal(true);
      expect(info.tiers.map((tier) => tier.blocked)).to.deep.equal([false, true]);
    }
    expect(await client.zrange(minuteKey, 0, -1, 'WITHSCORES')).to.deep.equal(before);
    expect(await client.pttl(minuteKey)).to.be.at.most(pttl);
    // The spacing tier counts blocked attempts: it holds the newest attempts (at most maxInInterval + 1 of them).
    expect(await recordCount(client, keyOf(spacing.namespace, 'teacher'))).to.equal(1);
  });

  // Records outlive their window by the time a call may be in flight (the default timeout, 2 s), so a key holds at
  // most maxInInterval records per window of interval that its retention spans (docs/semantics.md, "Memory per key").
  const floodBound = 10 * Math.ceil((60_000 + 2_000) / 60_000);

  it('keeps at most maxInInterval members per window it retains under a 20,000-attempt flood with countBlocked: false, deciding as the model', async function () {
    this.timeout(120_000);
    const clock = new TestClock();
    const limiter = new RollingRateLimiter({
      client,
      namespace: namespaces.next(),
      interval: 60_000, // keys expire in real time: the interval must outlast the test
      maxInInterval: 10,
      countBlocked: false,
      clock: clock.read,
    });
    const reference = new ReferenceLimiter({ intervalMs: 60_000, maxInInterval: 10, minDifferenceMs: 0, countBlocked: false });
    const key = keyOf(limiter.namespace, 'hot');
    let largest = 0;
    await client.config('RESETSTAT');
    for (let i = 0; i < 20_000; i += 1) {
      clock.advanceUs(i % 5000 === 0 ? 61_000_000 : 37); // a pause now and then lets a few through again
      expect(await limiter.limitWithInfo('hot')).to.deep.equal(reference.attempt('hot', clock.now));
      if (i % 50 === 0) largest = Math.max(largest, await recordCount(client, key));
    }
    expect(largest).to.be.at.most(floodBound);
    // One script call per decision, whose reads inside Redis are a bounded number of rank reads of one or two
    // members each (commands run by scripts count in commandstats too): never a read of the whole set.
    const stats = await client.info('commandstats');
    const calls = (command: string): number => commandCalls(stats, command);
    expect(calls('evalsha')).to.equal(20_000);
    expect(calls('zrange')).to.be.at.most(2 * 20_000);
    expect(calls('zrangebyscore') + calls('zrevrangebyscore')).to.equal(0);
  });

  for (const mode of [{ countBlocked: false }, { countBlocked: true, useScript: true }]) {
    it(`limit() under a 20,000-attempt flood with ${JSON.stringify(mode)}: at most maxInInterval members per window retained, one EVALSHA each, as the model`, async function () {
      this.timeout(120_000);
      const clock = new TestClock();
      const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 10, ...mode, clock: clock.read });
      const reference = new ReferenceLimiter({ intervalMs: 60_000, maxInInterval: 10, minDifferenceMs: 0, countBlocked: mode.countBlocked });
      const key = keyOf(limiter.namespace, 'hot');
      let largest = 0;
      await client.config('RESETSTAT');
      for (let i = 0; i < 20_000; i += 1) {
        clock.advanceUs(i % 5000 === 0 ? 61_000_000 : 37);
        expect(await limiter.limit('hot'), `attempt ${i}`).to.equal(reference.attempt('hot', clock.now).blocked);
        if (i % 50 === 0) largest = Math.max(largest, await recordCount(client, key));
      }
      expect(largest).to.be.at.most(floodBound);
      const stats = await client.info('commandstats');
      const calls = (command: string): number => commandCalls(stats, command);
      expect(calls('evalsha')).to.equal(20_000);
      expect(calls('zrange'), 'a few members read back per decision, whatever maxInInterval is').to.be.at.most(2 * 20_000);
      expect(calls('zrangebyscore') + calls('zrevrangebyscore')).to.equal(0);
    });
  }

  describe("clock: 'redis'", () => {
    it('limits on Redis time: allows maxInInterval, blocks the next, and peeks without writing', async () => {
      const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 3, clock: 'redis' });
      expect(await limiter.wouldLimit('user')).to.equal(false);
      expect(await client.exists(keyOf(limiter.namespace, 'user'))).to.equal(0);
      const results = [];
      for (let i = 0; i < 4; i += 1) results.push(await limiter.limit('user'));
      expect(results).to.deep.equal([false, false, false, true]);
      const info = await limiter.wouldLimitWithInfo('user');
      expect(info.blocked).to.equal(true);
      expect(info.millisecondsUntilAllowed).to.be.within(59_000, 60_000);
    });

    it('records the attempt at the time Redis reads', async () => {
      const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 3, clock: 'redis' });
      const [secondsBefore, microsBefore] = await client.time();
      await limiter.limit('user');
      const [secondsAfter, microsAfter] = await client.time();
      const [, score] = await client.zrangebyscore(keyOf(limiter.namespace, 'user'), RECORDS_FROM, '+inf', 'WITHSCORES');
      const before = Number(secondsBefore) * 1e6 + Number(microsBefore);
      const after = Number(secondsAfter) * 1e6 + Number(microsAfter);
      expect(Number(score)).to.be.within(before, after);
    });
  });
});
