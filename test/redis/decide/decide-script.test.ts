// The decide script (src/redis/decide/decide-script.ts) on real Redis, with
// the library's internals imported openly: it loads under the SHA1 computed
// at build time, a flushed script cache makes EVALSHA fall back to EVAL,
// which loads it again (every mode that runs it: countBlocked: false,
// useScript: true, a stack), its replies stay the same size whatever
// maxInInterval is, and on the Redis clock it decides exactly as the
// reference model at the time the script read (which only the store's
// decision tells: the public API does not say when Redis read the time).

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { millisecondsToMicroseconds } from '../../../src/core/clock.js';
import { describeOutcome } from '../../../src/core/decision-model.js';
import { KeyBuilder } from '../../../src/core/identity.js';
import { RateLimiterStack, RollingRateLimiter } from '../../../src/index.js';
import type { RedisAdapter } from '../../../src/redis/adapters/adapter.js';
import { IORedisAdapter } from '../../../src/redis/adapters/ioredis-adapter.js';
import { ScriptStore } from '../../../src/redis/script-store.js';
import { decideWithScript } from '../../../src/redis/script-store.js';
import { DECIDE_SCRIPT } from '../../../src/redis/decide/decide-script.js';
import { commandsDuring } from '../../support/command-stats.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { SeededRandom } from '../../support/random.js';
import { ReferenceLimiter } from '../../support/reference-model.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { TestClock } from '../../support/test-clock.js';

describe('the decide script on real Redis', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('decide-script');
  before(() => {
    client = connection.client;
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
      isCluster: false,
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
  const scriptModes: readonly {
    name: string;
    build: (clock: TestClock) => RollingRateLimiter | RateLimiterStack;
    rules: { intervalMs: number; maxInInterval: number; minDifferenceMs: number; countBlocked: boolean };
  }[] = [
    {
      name: 'countBlocked: false with a gap rule',
      rules: { intervalMs: 1000, maxInInterval: 3, minDifferenceMs: 100, countBlocked: false },
      build: (clock) =>
        new RollingRateLimiter({
          client,
          namespace: namespaces.next(),
          interval: 1000,
          maxInInterval: 3,
          minDifference: 100,
          countBlocked: false,
          clock: clock.read,
        }),
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
          new RollingRateLimiter({
            client,
            namespace: namespaces.next('a'),
            interval: 1000,
            maxInInterval: 3,
            minDifference: 100,
            countBlocked: false,
            clock: clock.read,
          }),
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
      const counts = await commandsDuring(client, async () => {
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
      const tier = {
        key,
        rule: { intervalUs: 60_000_000, maxInInterval, countsCost: false, minDifferenceUs: 0, countBlocked: false, inFlightUs: 0 },
        store: new ScriptStore(measuring, false),
      };
      const decision = await decideWithScript(measuring, { tiers: [tier], now: clock.now, dryRun: false });
      expect(decision.tiers[0]?.verdict.blockedDueToCount).to.equal(true);
      await decideWithScript(measuring, { tiers: [tier], now: undefined, dryRun: true });
      return bytes;
    };
    const small = await replyBytes(10);
    const large = await replyBytes(10_000);
    expect(large / small).to.be.at.most(1.5);
  });

  describe("clock: 'redis'", () => {
    it('decides exactly as the reference model at the time the script read, on random real-time schedules', async function () {
      this.timeout(120_000);
      const seed = Number(process.env.MODEL_SEED ?? Date.now() % 2 ** 31);
      const random = new SeededRandom(seed);
      const schedules = Number(process.env.REDIS_CLOCK_SCHEDULES ?? 120);
      const store = new ScriptStore(new IORedisAdapter(client), false);
      let decisions = 0;
      for (let schedule = 0; schedule < schedules; schedule += 1) {
        const intervalMs = random.pick([3, 5, 10, 20]);
        const rules = {
          intervalMs,
          maxInInterval: random.int(1, 4),
          minDifferenceMs: Math.min(intervalMs, random.pick([0, 0, 1, 2, 4])),
          countBlocked: random.chance(0.5),
        };
        // What a limiter with these rules and `clock: 'redis'` hands its store: one tier, no time of its own.
        const rule = {
          intervalUs: millisecondsToMicroseconds(rules.intervalMs),
          maxInInterval: rules.maxInInterval,
          countsCost: false,
          minDifferenceUs: millisecondsToMicroseconds(rules.minDifferenceMs),
          countBlocked: rules.countBlocked,
          inFlightUs: 0,
        };
        const tier = { key: keyOf(namespaces.next(), 'user'), rule, store };
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
