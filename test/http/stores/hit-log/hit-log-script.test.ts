// The hit-log script (the HTTP stores' one round trip) on a real Redis: it
// loads, and it answers exactly as the in-memory hit log for the same
// schedule of hits, reads, give-backs and rules, on an injected clock, with
// blocks (the NestJS throttler storage's blockDuration) too, and with one
// request judged on several keys at once (its named throttlers); and what it
// keeps under a flood of refused hits that may be given back.

import { expect } from 'chai';
import fc from 'fast-check';
import { MemoryHitLog } from '../../../../src/http/stores/hit-log/memory-hit-log.js';
import { RedisHitLog } from '../../../../src/http/stores/hit-log/redis-hit-log.js';
import type { BlockingCount, BlockingRule, HitLog, HitRule } from '../../../../src/http/stores/hit-log/hit-log.js';
import { adapterFor } from '../../../../src/redis/adapters/create-adapter.js';
import { HIT_LOG_SCRIPT } from '../../../../src/http/stores/hit-log/hit-log-script.js';
import { useIORedisClient } from '../../../support/ioredis-client.js';
import { uniqueNamespaces } from '../../../support/namespaces.js';

const keys = uniqueNamespaces('hit-log');

type Step =
  | { readonly kind: 'hit' | 'read'; readonly advanceUs: number; readonly rule: HitRule }
  | { readonly kind: 'block'; readonly advanceUs: number; readonly rules: readonly BlockingRule[] }
  | { readonly kind: 'remove'; readonly advanceUs: number; readonly nth: number };

const rule = fc.record({ windowUs: fc.constantFrom(1_000_000, 3_000_000, 10_000_000), limit: fc.integer({ min: 0, max: 6 }) });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom('hit' as const, 'read' as const), advanceUs: fc.integer({ min: 0, max: 1_500_000 }), rule }),
  fc.record({ kind: fc.constant('remove' as const), advanceUs: fc.constant(0), nth: fc.nat(40) }),
  fc.record({
    kind: fc.constant('block' as const),
    advanceUs: fc.integer({ min: 0, max: 1_500_000 }),
    // One request on up to three keys (the first is the one the other steps use), each with its own rule.
    rules: fc.array(
      fc.record({
        windowUs: fc.constantFrom(1_000_000, 3_000_000),
        limit: fc.integer({ min: 0, max: 4 }),
        blockUs: fc.constantFrom(0, 1_000_000, 2_500_000, 8_000_000),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);

/** Runs the steps on one log and returns every answer (with the clock's times, which both logs share). */
async function replay(log: HitLog, key: string, steps: readonly Step[], clock: { now: number }): Promise<unknown[]> {
  const members: string[] = [];
  const answers: unknown[] = [];
  for (const current of steps) {
    clock.now += current.advanceUs;
    if (current.kind === 'remove') {
      const member = members[current.nth % Math.max(1, members.length)];
      if (member !== undefined) await log.remove(key, member);
      answers.push('removed');
    } else if (current.kind === 'block') {
      answers.push(await log.hitOrBlock(current.rules.map((rule, i) => ({ key: i === 0 ? key : `${key}:${i}`, rule }))));
    } else if (current.kind === 'hit') {
      const { member, ...count } = await log.hit(key, current.rule);
      members.push(member);
      answers.push(count);
    } else {
      answers.push(await log.read(key, current.rule));
    }
  }
  return answers;
}

describe('the hit-log script on a real Redis', function () {
  this.timeout(60_000);
  const redis = useIORedisClient();

  it('loads under its SHA1', async () => {
    expect(await redis.client.script('LOAD', HIT_LOG_SCRIPT.lua)).to.equal(HIT_LOG_SCRIPT.sha1);
  });

  it('answers exactly as the in-memory log, whatever the rules of the requests', async () => {
    await fc.assert(
      // The first hits (on every key) set the largest window, so that the memory log's expiry (on this test's clock) and the Redis
      // key's TTL (in real time) never differ in what a rule can count.
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 6 }), async (rest, limit) => {
        const wide = { windowUs: 10_000_000, limit: 6, blockUs: 0 };
        const steps: Step[] = [
          { kind: 'hit', advanceUs: 0, rule: { windowUs: 10_000_000, limit } },
          { kind: 'block', advanceUs: 0, rules: [wide, wide, wide] },
          ...rest,
        ];
        const clock = { now: 1_700_000_000_000_000 };
        const memory = await replay(new MemoryHitLog(() => clock.now), 'k', steps, clock);
        clock.now = 1_700_000_000_000_000;
        const onRedis = await replay(new RedisHitLog(adapterFor(redis.client), () => clock.now), keys.next(), steps, clock);
        expect(onRedis).to.deep.equal(memory);
      }),
      { numRuns: 150 },
    );
  });

  it('with a block: records admitted requests only, blocks over the limit, refuses without recording while the block lasts', async () => {
    const clock = { now: 1_700_000_000_000_000 };
    const log = new RedisHitLog(adapterFor(redis.client), () => clock.now);
    const key = keys.next();
    const rule = { windowUs: 10_000_000, limit: 2, blockUs: 30_000_000 };
    const answers = [];
    for (const advanceUs of [0, 1_000_000, 1_000_000, 1_000_000, 28_999_999, 1]) {
      clock.now += advanceUs;
      const [{ count, blockedUntilUs }] = (await log.hitOrBlock([{ key, rule }])) as [BlockingCount];
      answers.push({ count, blockedFor: blockedUntilUs === undefined ? undefined : blockedUntilUs - clock.now });
    }
    expect(answers).to.deep.equal([
      { count: 1, blockedFor: undefined },
      { count: 2, blockedFor: undefined },
      { count: 3, blockedFor: 30_000_000 }, // over the limit at t = 2 s: refused, not recorded, blocked until t = 32 s
      { count: 2, blockedFor: 29_000_000 }, // refused by the block, not recorded
      { count: 0, blockedFor: 1 }, // t = 32 s - 1 µs: still refused; the window has emptied
      { count: 1, blockedFor: undefined }, // t = 32 s: admitted, and counted afresh
    ]);
    const ttl = await redis.client.pttl(`${key}:block`);
    expect(ttl, 'the block key expires with its block').to.be.within(1, 30_000);
  });

  it('under a flood keeps every admitted hit and the newest limit + 1 refused ones, all with the window as TTL; a give-back frees only its own', async () => {
    const clock = { now: 1_700_000_000_000_000 };
    const log = new RedisHitLog(adapterFor(redis.client), () => clock.now);
    const key = keys.next();
    const rule = { windowUs: 60_000_000, limit: 2 };
    const members: string[] = [];
    for (let i = 0; i < 200; i += 1) {
      clock.now += 1_000;
      members.push((await log.hit(key, rule)).member);
    }
    const [admitted, refused] = [members.slice(0, 2), members.slice(2)];
    expect(await redis.client.zrange(key, 0, -1), 'the two admitted hits and the three newest refused ones').to.deep.equal([...admitted, ...refused.slice(-3)]);
    expect(await redis.client.zrange(`${key}:refused`, 0, -1)).to.deep.equal(refused.slice(-3));
    for (const suffix of ['', ':rules', ':refused']) expect(await redis.client.pttl(key + suffix), `the TTL of ${key}${suffix}`).to.be.within(59_000, 60_000);
    // Every refused hit gives itself back, the dropped ones too: the admitted hits still fill the window.
    for (const member of refused) await log.remove(key, member);
    expect(await redis.client.zrange(key, 0, -1)).to.deep.equal(admitted);
    expect(await redis.client.exists(`${key}:refused`), 'the refused key is gone with its last hit').to.equal(0);
    expect((await log.hit(key, rule)).count, 'still refused').to.equal(3);
  });

  it('keeps what the largest rule needs: a 1-per-second rule does not trim a 5-per-10-seconds count', async () => {
    const clock = { now: 1_700_000_000_000_000 };
    const log = new RedisHitLog(adapterFor(redis.client), () => clock.now);
    const key = keys.next();
    const wide = { windowUs: 10_000_000, limit: 5 };
    const narrow = { windowUs: 1_000_000, limit: 1 };
    for (let i = 0; i < 3; i += 1) {
      await log.hit(key, wide);
      clock.now += 2_000_000;
      await log.hit(key, narrow);
    }
    expect((await log.read(key, wide)).count, 'six hits in 10 s, capped at 5 + 1').to.equal(6);
    expect(await redis.client.hgetall(`${key}:rules`)).to.deep.equal({ w: '10000000', k: '6' });
  });
});
