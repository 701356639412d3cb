// What the script path promises on real Redis beyond the shared contract:
// the script constant is what Redis loads, a flushed script cache changes
// nothing visible, a blocked stack leaves non-counting tiers untouched,
// replies stay small whatever maxInInterval is, and `clock: 'redis'` decides
// exactly as the model at the time Redis itself reads.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeOutcome } from '../../src/core/decision-model.js';
import { RateLimiterStack, RollingRateLimiter, UnsupportedError } from '../../src/index.js';
import { KeyBuilder } from '../../src/core/identity.js';
import { internalsOf } from '../../src/limiter-internals.js';
import type { RedisAdapter } from '../../src/redis/adapters/adapter.js';
import { IORedisAdapter } from '../../src/redis/adapters/ioredis-adapter.js';
import { DECIDE_SCRIPT } from '../../src/redis/scripts/decide-script.js';
import { decideWithScript } from '../../src/redis/script-path.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { commandCalls } from '../support/command-stats.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { refused } from '../support/refused.js';
import { SeededRandom } from '../support/random.js';
import { ReferenceLimiter } from '../support/reference-model.js';
import { ReferenceStack } from '../support/reference-stack.js';
import { useRedis } from '../support/redis-server.js';
import { TestClock } from '../support/test-clock.js';

describe('the script path on real Redis', () => {
  let redis: Awaited<ReturnType<typeof useRedis>>;
  let client: Redis;
  const namespaces = uniqueNamespaces('script');
  before(async () => {
    redis = await useRedis();
    client = new Redis(redis.url);
  });
  after(async () => {
    await client?.quit();
    await redis?.stop();
  });

  const keyOf = (namespace: string, id: string): string => new KeyBuilder(namespace).keyFor(id);

  /** The ioredis adapter, with every EVALSHA shown to `watch` (which hands the reply on). */
  const watchedAdapter = (
    kind: string,
    watch: (sha1: string, args: readonly (string | number)[], reply: Promise<unknown>) => Promise<unknown>,
  ): RedisAdapter => {
    const ioredis = new IORedisAdapter(client);
    return {
      client,
      kind,
      supportsScripts: true,
      transaction: (commands) => ioredis.transaction(commands),
      evalsha: (sha1, keys, args) => watch(sha1, args, ioredis.evalsha(sha1, keys, args)),
      eval: (lua, keys, args) => ioredis.eval(lua, keys, args),
    };
  };

  it('loads into Redis under the SHA1 computed at build time', async () => {
    expect(await client.script('LOAD', DECIDE_SCRIPT.lua)).to.equal(DECIDE_SCRIPT.sha1);
  });

  it('recovers from SCRIPT FLUSH before every call, deciding exactly as the model', async () => {
    const clock = new TestClock();
    const limiter = new RollingRateLimiter({
      client,
      namespace: namespaces.next(),
      interval: 1000,
      maxInInterval: 3,
      minDifference: 100,
      countBlocked: false,
      clock: clock.read,
    });
    const reference = new ReferenceLimiter({ intervalMs: 1000, maxInInterval: 3, minDifferenceMs: 100, countBlocked: false });
    for (let i = 0; i < 40; i += 1) {
      await client.script('FLUSH');
      expect(await client.script('EXISTS', DECIDE_SCRIPT.sha1)).to.deep.equal([0]);
      clock.advanceMs(i % 7 === 0 ? 0 : 60);
      const actual = i % 3 === 0 ? await limiter.wouldLimitWithInfo('user') : await limiter.limitWithInfo('user');
      const expected = i % 3 === 0 ? reference.peek('user', clock.now) : reference.attempt('user', clock.now);
      expect(actual, `step ${i}`).to.deep.equal(expected);
    }
    await client.script('FLUSH');
    await limiter.limitWithInfo('user');
    expect(await client.script('EXISTS', DECIDE_SCRIPT.sha1), 'EVAL loaded it again').to.deep.equal([1]);
  });

  /** Runs `body` and counts the commands Redis served meanwhile. */
  const commandsDuring = async (body: () => Promise<void>): Promise<{ evalsha: number; eval: number; multi: number }> => {
    await client.config('RESETSTAT');
    await body();
    const stats = await client.info('commandstats');
    return { evalsha: commandCalls(stats, 'evalsha'), eval: commandCalls(stats, 'eval'), multi: commandCalls(stats, 'multi') };
  };

  const scriptModes: readonly { name: string; build: (clock: TestClock) => RollingRateLimiter | RateLimiterStack; rules: { intervalMs: number; maxInInterval: number; minDifferenceMs: number; countBlocked: boolean } }[] = [
    {
      name: 'countBlocked: false with a gap rule',
      rules: { intervalMs: 1000, maxInInterval: 3, minDifferenceMs: 100, countBlocked: false },
      build: (clock) => new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 1000, maxInInterval: 3, minDifference: 100, countBlocked: false, clock: clock.read }),
    },
    {
      name: 'useScript: true',
      rules: { intervalMs: 1000, maxInInterval: 3, minDifferenceMs: 0, countBlocked: true },
      build: (clock) => new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 1000, maxInInterval: 3, useScript: true, clock: clock.read }),
    },
    {
      // The second tier is the stricter one in every respect, so it alone decides.
      name: 'a stack',
      rules: { intervalMs: 1000, maxInInterval: 2, minDifferenceMs: 100, countBlocked: true },
      build: (clock) =>
        new RateLimiterStack([
          new RollingRateLimiter({ client, namespace: namespaces.next('a'), interval: 1000, maxInInterval: 3, minDifference: 100, countBlocked: false, clock: clock.read }),
          new RollingRateLimiter({ client, namespace: namespaces.next('b'), interval: 1000, maxInInterval: 2, minDifference: 100, clock: clock.read }),
        ]),
    },
  ];

  for (const mode of scriptModes) {
    it(`${mode.name}: limit() and limitWithInfo() are one EVALSHA of the decide script each, recover from SCRIPT FLUSH, and decide as the model`, async () => {
      const clock = new TestClock();
      const limiter = mode.build(clock);
      const reference = new ReferenceLimiter(mode.rules);
      const steps = 40;
      const counts = await commandsDuring(async () => {
        for (let i = 0; i < steps; i += 1) {
          if (i % 10 === 0) await client.script('FLUSH');
          clock.advanceMs([0, 60, 60, 150, 20, 700, 1000][i % 7] as number);
          const expected = reference.attempt('user', clock.now);
          if (i % 2 === 0) expect(await limiter.limit('user'), `step ${i}`).to.equal(expected.blocked);
          else expect((await limiter.limitWithInfo('user')).blocked, `step ${i}`).to.equal(expected.blocked);
        }
      });
      // Four flushes: the EVALSHA after each is answered NOSCRIPT, and EVAL loads the script again.
      expect(counts).to.deep.equal({ evalsha: steps, eval: 4, multi: 0 });
      expect(await client.script('EXISTS', DECIDE_SCRIPT.sha1)).to.deep.equal([1]);
    });
  }

  it("clock: 'redis': limit() is one EVALSHA of the decide script, and recovers from SCRIPT FLUSH", async () => {
    const onRedisTime = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, clock: 'redis' });
    await client.script('FLUSH');
    const seen: boolean[] = [];
    const counts = await commandsDuring(async () => {
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
      const scores = (await client.zrange(keyOf(limiter.namespace, 'user'), 0, -1, 'WITHSCORES')).filter((_, k) => k % 2 === 1).map(Number);
      const inWindow = reference.recordedIn(i, 'user').filter((t) => t > clock.now - (rules[i] as { intervalMs: number }).intervalMs * 1000);
      expect(scores.filter((t) => t > clock.now - (rules[i] as { intervalMs: number }).intervalMs * 1000), `tier ${i}`).to.deep.equal(inWindow);
      expect(scores.length, `tier ${i}`).to.be.at.most(limiter.maxInInterval);
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
    expect(await client.zcard(keyOf(spacing.namespace, 'teacher'))).to.equal(1);
  });

  it('keeps at most maxInInterval members under a 20,000-attempt flood with countBlocked: false, deciding as the model', async function () {
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
      if (i % 50 === 0) largest = Math.max(largest, await client.zcard(key));
    }
    expect(largest).to.be.at.most(10);
    // One script call per decision, whose reads inside Redis are a bounded number of rank reads of one or two
    // members each (commands run by scripts count in commandstats too): never a read of the whole set.
    const stats = await client.info('commandstats');
    const calls = (command: string): number => commandCalls(stats, command);
    expect(calls('evalsha')).to.equal(20_000);
    expect(calls('zrange')).to.be.at.most(2 * 20_000);
    expect(calls('zrangebyscore') + calls('zrevrangebyscore')).to.equal(0);
  });

  for (const mode of [{ countBlocked: false }, { countBlocked: true, useScript: true }]) {
    it(`limit() under a 20,000-attempt flood with ${JSON.stringify(mode)}: at most maxInInterval members, one EVALSHA each, as the model`, async function () {
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
        if (i % 50 === 0) largest = Math.max(largest, await client.zcard(key));
      }
      expect(largest).to.be.at.most(10);
      const stats = await client.info('commandstats');
      const calls = (command: string): number => commandCalls(stats, command);
      expect(calls('evalsha')).to.equal(20_000);
      expect(calls('zrange'), 'a few members read back per decision, whatever maxInInterval is').to.be.at.most(2 * 20_000);
      expect(calls('zrangebyscore') + calls('zrevrangebyscore')).to.equal(0);
    });
  }

  it('gets back replies of the same size at maxInInterval 10 and 10,000 with the window full', async function () {
    this.timeout(60_000);
    const replyBytes = async (maxInInterval: number): Promise<number> => {
      const clock = new TestClock();
      const key = keyOf(namespaces.next(), 'full');
      const pipeline = client.pipeline();
      for (let i = 0; i < maxInInterval; i += 1) pipeline.zadd(key, clock.now - 1_000_000 + i * 10 + 1, `m${i}`);
      await pipeline.exec();
      let bytes = 0;
      const measuring = watchedAdapter('measuring ioredis', async (_sha1, _args, reply) => {
        bytes += JSON.stringify(await reply).length;
        return reply;
      });
      await client.script('LOAD', DECIDE_SCRIPT.lua);
      const tier = { key, rule: { intervalUs: 60_000_000, maxInInterval, minDifferenceUs: 0, countBlocked: false }, store: new MemoryStore() };
      const decision = await decideWithScript(measuring, [tier], clock.now, false);
      expect(decision.tiers[0]?.verdict.blockedDueToCount).to.equal(true);
      await decideWithScript(measuring, [tier], undefined, true);
      return bytes;
    };
    const small = await replyBytes(10);
    const large = await replyBytes(10_000);
    expect(large / small).to.be.at.most(1.5);
  });

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
      const [, score] = await client.zrange(keyOf(limiter.namespace, 'user'), 0, -1, 'WITHSCORES');
      const before = Number(secondsBefore) * 1e6 + Number(microsBefore);
      const after = Number(secondsAfter) * 1e6 + Number(microsAfter);
      expect(Number(score)).to.be.within(before, after);
    });

    it('decides exactly as the reference model at the time the script read, on random real-time schedules', async function () {
      this.timeout(120_000);
      const seed = Number(process.env.MODEL_SEED ?? Date.now() % 2 ** 31);
      const random = new SeededRandom(seed);
      const schedules = Number(process.env.REDIS_CLOCK_SCHEDULES ?? 120);
      let decisions = 0;
      for (let schedule = 0; schedule < schedules; schedule += 1) {
        const intervalMs = random.pick([3, 5, 10, 20]);
        const rules = {
          intervalMs,
          maxInInterval: random.int(1, 4),
          minDifferenceMs: Math.min(intervalMs, random.pick([0, 0, 1, 2, 4])),
          countBlocked: random.chance(0.5),
        };
        const limiter = new RollingRateLimiter({
          client,
          namespace: namespaces.next(),
          interval: rules.intervalMs,
          maxInInterval: rules.maxInInterval,
          minDifference: rules.minDifferenceMs,
          countBlocked: rules.countBlocked,
          clock: 'redis',
        });
        const internals = internalsOf(limiter);
        if (internals === undefined) throw new Error('no internals');
        const { keys, rule, store } = internals.tier;
        const tier = { key: keys.keyFor('user'), rule, store };
        const reference = new ReferenceLimiter(rules);
        for (let step = 0; step < 25; step += 1) {
          if (random.chance(0.5)) await sleep(random.int(0, 3));
          const peek = random.chance(0.25);
          const decision = peek ? await store.peek([tier], undefined) : await store.attempt([tier], undefined);
          const [outcome] = decision.tiers;
          if (outcome === undefined) throw new Error('no outcome');
          const actual = describeOutcome(rule, decision.now, outcome.verdict, outcome.after);
          const expected = peek ? reference.peek('user', decision.now) : reference.attempt('user', decision.now);
          expect(actual, `seed ${seed}, schedule ${schedule}, step ${step}, ${JSON.stringify(rules)}`).to.deep.equal(expected);
          decisions += 1;
        }
      }
      console.log(`      clock 'redis' model test: ${schedules} schedules, ${decisions} decisions compared (seed ${seed})`);
    });
  });
});
