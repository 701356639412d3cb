// What the MULTI path promises on real Redis beyond the shared contract:
// bounded keys under a flood (with decisions still exactly the model's),
// millisecond TTLs, dry runs that write nothing, replies whose size does not
// grow with maxInInterval, and exact admission under concurrency.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../../src/index.js';
import { KeyBuilder } from '../../../src/core/identity.js';
import type { RedisAdapter } from '../../../src/redis/adapters/adapter.js';
import { IORedisAdapter } from '../../../src/redis/adapters/ioredis-adapter.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { attemptWithMulti, peekWithMulti } from '../../../src/redis/multi-store.js';
import { ReferenceLimiter } from '../../support/reference-model.js';
import { commandCalls } from '../../support/command-stats.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { TestClock } from '../../support/test-clock.js';

describe('the ioredis MULTI path on real Redis', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('multi');
  before(() => {
    client = connection.client;
  });

  const keyOf = (namespace: string, id: string): string => new KeyBuilder(namespace).keyFor(id);

  it('keeps at most maxInInterval + 1 members under a 20,000-attempt flood, deciding exactly as the model', async function () {
    this.timeout(120_000);
    const clock = new TestClock();
    const namespace = namespaces.next();
    const rules = { intervalMs: 1000, maxInInterval: 10, minDifferenceMs: 0, countBlocked: true };
    const limiter = new RollingRateLimiter({ client, namespace, interval: 1000, maxInInterval: 10, clock: clock.read, useScript: false });
    const reference = new ReferenceLimiter(rules);
    let largest = 0;
    for (let i = 0; i < 20_000; i += 1) {
      clock.advanceUs(i % 1000 === 0 ? 1_500_000 : 37); // a flood, with a pause now and then so that some attempts get through
      expect(await limiter.limitWithInfo('hot')).to.deep.equal(reference.attempt('hot', clock.now));
      if (i % 50 === 0) largest = Math.max(largest, await client.zcard(keyOf(namespace, 'hot')));
    }
    largest = Math.max(largest, await client.zcard(keyOf(namespace, 'hot')));
    expect(largest).to.be.at.most(rules.maxInInterval + 1);
  });

  it("limit() keeps at most maxInInterval members under a 20,000-attempt flood with the card's MULTI, as the model", async function () {
    this.timeout(120_000);
    const clock = new TestClock();
    const namespace = namespaces.next();
    const limiter = new RollingRateLimiter({ client, namespace, interval: 1000, maxInInterval: 10, clock: clock.read, useScript: false });
    const reference = new ReferenceLimiter({ intervalMs: 1000, maxInInterval: 10, minDifferenceMs: 0, countBlocked: true });
    let largest = 0;
    await client.config('RESETSTAT');
    for (let i = 0; i < 20_000; i += 1) {
      clock.advanceUs(i % 1000 === 0 ? 1_500_000 : 37);
      expect(await limiter.limit('hot'), `attempt ${i}`).to.equal(reference.attempt('hot', clock.now).blocked);
      if (i % 50 === 0) largest = Math.max(largest, await client.zcard(keyOf(namespace, 'hot')));
    }
    expect(largest).to.be.at.most(10);
    const stats = await client.info('commandstats');
    const calls = (command: string): number => commandCalls(stats, command);
    expect(calls('exec')).to.equal(20_000);
    // ZREMRANGEBYSCORE, ZCOUNT, one ZREVRANGE (the (k-1)-th and k-th newest: without a gap rule nothing reads the
    // newest), ZADD, ZREMRANGEBYRANK, then the companion's ZREMRANGEBYSCORE and ZUNIONSTORE (Redis runs scripts:
    // processes with action ids may share the key), and PEXPIRE per decision (and this test's own ZCARDs).
    expect(['zremrangebyscore', 'zcount', 'zadd', 'zremrangebyrank', 'zunionstore', 'pexpire'].map(calls)).to.deep.equal([
      40_000, 20_000, 20_000, 20_000, 20_000, 20_000,
    ]);
    expect(calls('zrevrange')).to.equal(20_000);
    expect(calls('zcard')).to.equal(20_000 / 50);
    expect(calls('zrange') + calls('zrangebyscore'), 'never the whole set').to.equal(0);
  });

  it('leaves alone the action records of processes that share the key through the decide script, whatever their rank', async () => {
    const clock = new TestClock();
    const namespace = namespaces.next();
    const rules = { client, namespace, interval: 60_000, maxInInterval: 3, clock: clock.read };
    const scripted = new RollingRateLimiter(rules);
    const plain = new RollingRateLimiter({ ...rules, useScript: false });
    expect(await scripted.limitWithInfo('user', { actionId: 'job' })).to.include({ blocked: false });
    // A flood through the MULTI path: its flood bound keeps the newest 3 records by rank, the action's among the older.
    for (let i = 0; i < 20; i += 1) {
      clock.advanceUs(1000);
      await plain.limit('user');
    }
    clock.advanceUs(1000);
    expect(await scripted.limitWithInfo('user', { actionId: 'job' }), 'a retry of the admitted action').to.include({ alreadyAdmitted: true });
    expect(await scripted.undo('user', 'job'), 'undo finds it').to.equal(true);
  });

  it('sets the TTL in milliseconds, not whole seconds: the interval and the time a call may be in flight (timeout)', async () => {
    const namespace = namespaces.next();
    // A timeout above the least time in flight (2 s), which shorter ones count as.
    const limiter = new RollingRateLimiter({ client, namespace, interval: 1500, maxInInterval: 3, useScript: false, timeout: 2250 });
    await limiter.limit('user');
    const ttl = await client.pttl(keyOf(namespace, 'user'));
    expect(ttl).to.be.within(3650, 3750);
  });

  it('writes nothing in a dry run: no key, no member, no TTL change, no trimming', async () => {
    const namespace = namespaces.next();
    const clock = new TestClock();
    const limiter = new RollingRateLimiter({ client, namespace, interval: 60_000, maxInInterval: 2, clock: clock.read, useScript: false });
    const key = keyOf(namespace, 'user');
    await limiter.wouldLimitWithInfo('user');
    expect(await client.exists(key)).to.equal(0);

    await limiter.limit('user');
    await limiter.limit('user');
    clock.advanceMs(61_000); // both members are now outside the window, but still stored
    await client.pexpire(key, 50_000);
    const before = await client.zrange(key, 0, -1, 'WITHSCORES');
    for (let i = 0; i < 5; i += 1) await limiter.wouldLimitWithInfo('user');
    expect(await client.zrange(key, 0, -1, 'WITHSCORES')).to.deep.equal(before);
    expect(await client.pttl(key)).to.be.within(49_000, 50_000);
  });

  it('gets back replies of the same size at maxInInterval 10 and 10,000 with the window full', async function () {
    this.timeout(60_000);
    const replyBytes = async (maxInInterval: number): Promise<number> => {
      const namespace = namespaces.next();
      const clock = new TestClock();
      const key = keyOf(namespace, 'full');
      // Fill the window directly: maxInInterval members within the last second.
      const pipeline = client.pipeline();
      for (let i = 0; i < maxInInterval; i += 1) pipeline.zadd(key, clock.now - 1_000_000 + i * 10 + 1, `m${i}`);
      await pipeline.exec();
      let bytes = 0;
      const ioredis = new IORedisAdapter(client);
      const measuring: RedisAdapter = {
        client,
        kind: 'measuring ioredis',
        isCluster: false,
        supportsScripts: true,
        async transaction(commands) {
          const replies = await ioredis.transaction(commands);
          bytes += JSON.stringify(replies).length;
          return replies;
        },
        evalsha: (sha1, keys, args) => ioredis.evalsha(sha1, keys, args),
        eval: (lua, keys, args) => ioredis.eval(lua, keys, args),
      };
      const rule = { intervalUs: 60_000_000, maxInInterval, countsCost: false, minDifferenceUs: 0, countBlocked: true, inFlightUs: 0 };
      const tier = { key, rule, store: new MemoryStore() };
      const decision = await attemptWithMulti(measuring, tier, clock.now);
      expect(decision.tiers[0]?.verdict.blockedDueToCount).to.equal(true);
      await peekWithMulti(measuring, [tier], clock.now + 1);
      return bytes;
    };
    const small = await replyBytes(10);
    const large = await replyBytes(10_000);
    expect(large / small).to.be.at.most(1.5);
  });

  it('admits exactly maxInInterval when many connections hammer one id at once', async function () {
    this.timeout(60_000);
    const connections = Array.from({ length: 8 }, () => new Redis(connection.url));
    try {
      for (let run = 0; run < 5; run += 1) {
        const namespace = namespaces.next();
        const limiters = connections.map(
          (connection) => new RollingRateLimiter({ client: connection, namespace, interval: 600_000, maxInInterval: 25, useScript: false }),
        );
        const attempts = Array.from({ length: 400 }, (_, i) => (limiters[i % limiters.length] as RollingRateLimiter).limit('shared'));
        const blocked = await Promise.all(attempts);
        expect(blocked.filter((isBlocked) => !isBlocked).length, `run ${run}`).to.equal(25);
      }
    } finally {
      await Promise.all(connections.map((connection) => connection.quit()));
    }
  });
});
