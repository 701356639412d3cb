// The flood bound as the README states it, measured on real Redis (the
// decide script, batched and not, and the MULTI path) and in memory: a key
// holds at most maxInInterval members from attempts without an action id,
// plus the admitted actions still in the window (at most maxInInterval),
// plus each blocked action until maxInInterval newer attempts without an
// action id arrive (a blocked attempt whose action id is single-use, as the
// HTTP middleware's are, is one without). Its companion set holds a copy of
// the action records; the key also holds its horizon mark, not counted here.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { actionRecordsKey, KeyBuilder } from '../../../src/core/identity.js';
import { RollingRateLimiter, type RollingRateLimiterOptions } from '../../../src/index.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { recordCount } from '../../support/redis-keys.js';
import { TestClock } from '../../support/test-clock.js';

const MAX = 5;

describe('members per key under a flood (the README bound)', () => {
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('flood');
  before(() => {
    client = connection.client;
  });

  const members = async (limiter: RollingRateLimiter, id: string): Promise<{ key: number; actions: number }> => {
    const key = new KeyBuilder(limiter.namespace).keyFor(id);
    return { key: await recordCount(client, key), actions: await client.zcard(actionRecordsKey(key)) };
  };

  for (const mode of ['the script', 'batch: true', 'useScript: false'] as const) {
    const make = (clock: TestClock, options: Partial<RollingRateLimiterOptions> = {}): RollingRateLimiter =>
      new RollingRateLimiter({
        client,
        namespace: namespaces.next(),
        interval: 60_000,
        maxInInterval: MAX,
        clock: clock.read,
        ...(mode === 'batch: true' ? { batch: true } : mode === 'useScript: false' ? { useScript: false } : {}),
        ...options,
      });

    it(`keeps maxInInterval members for 2,000 attempts without action ids (${mode})`, async () => {
      const clock = new TestClock();
      const limiter = make(clock);
      for (let i = 0; i < 2_000; i += 1) {
        clock.advanceUs(7);
        await limiter.limit('hot');
      }
      expect(await members(limiter, 'hot')).to.deep.equal({ key: MAX, actions: 0 });
    });

    if (mode === 'useScript: false') continue;

    it(`keeps the admitted actions and the newest maxInInterval others under a flood of blocked attempts (${mode})`, async () => {
      const clock = new TestClock();
      const limiter = make(clock);
      for (let i = 0; i < MAX; i += 1) {
        clock.advanceUs(7);
        expect(await limiter.limit('hot', { actionId: `job-${i}` })).to.equal(false);
      }
      for (let i = 0; i < 2_000; i += 1) {
        clock.advanceUs(7);
        await limiter.limit('hot');
      }
      expect(await members(limiter, 'hot')).to.deep.equal({ key: 2 * MAX, actions: MAX });
    });

    it(`drops blocked actions once maxInInterval newer attempts without an action id arrive (${mode})`, async () => {
      const clock = new TestClock();
      const limiter = make(clock);
      for (let i = 0; i < MAX; i += 1) await limiter.limit('hot');
      for (let i = 0; i < 300; i += 1) {
        clock.advanceUs(7);
        expect(await limiter.limit('hot', { actionId: `blocked-${i}` })).to.equal(true);
      }
      expect(await members(limiter, 'hot'), 'each blocked action id is kept until then').to.deep.equal({ key: MAX + 300, actions: 300 });
      for (let i = 0; i < MAX; i += 1) {
        clock.advanceUs(7);
        await limiter.limit('hot');
      }
      expect(await members(limiter, 'hot')).to.deep.equal({ key: MAX, actions: 0 });
    });
  }

  for (const batch of [false, true]) {
    it(`keeps a flood of blocked attempts with single-use action ids to maxInInterval records, as without ids (batch: ${batch})`, async () => {
      const clock = new TestClock();
      const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: MAX, clock: clock.read, batch });
      for (let i = 0; i < MAX; i += 1) {
        clock.advanceUs(7);
        expect(await limiter.limit('hot', { actionId: `request-${i}`, singleUse: true })).to.equal(false);
      }
      for (let i = 0; i < 2_000; i += 1) {
        clock.advanceUs(7);
        expect(await limiter.limit('hot', { actionId: `request-${MAX + i}`, singleUse: true })).to.equal(true);
      }
      // 0.4.3 had no single-use ids: the HTTP middleware's flood kept all 2,000 blocked actions.
      expect(await members(limiter, 'hot')).to.deep.equal({ key: 2 * MAX, actions: MAX });
      // The admitted ones keep their ids: undo finds them.
      expect(await limiter.undo('hot', 'request-0')).to.equal(true);
    });
  }

  it('keeps the bound when the clock steps back past records the window dropped (the companion never holds them)', async () => {
    const clock = new TestClock();
    const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 10_000, maxInInterval: 1, clock: clock.read });
    const start = clock.now;
    await limiter.limit('hot', { actionId: 'x0' });
    for (let i = 1; i <= 100; i += 1) {
      clock.now = start + i;
      await limiter.limit('hot', { actionId: `y${i}` });
    }
    // Past the window and the time a call may be in flight (the default timeout, 2 s): every record is forgotten.
    clock.now = start + 12_000_200;
    await limiter.limit('hot');
    for (let i = 1; i <= 50; i += 1) {
      clock.now = start + 5_000_000 + i;
      await limiter.limit('hot');
    }
    expect(await members(limiter, 'hot')).to.deep.equal({ key: 1, actions: 0 });
  });

  for (const batch of [false, true]) {
    it(`renews the companion's TTL with its key's while the key holds a record, and leaves a new key's alone (batch: ${batch})`, async () => {
      const clock = new TestClock();
      const limiter = new RollingRateLimiter({ client, namespace: namespaces.next(), interval: 60_000, maxInInterval: MAX, clock: clock.read, batch });
      const key = new KeyBuilder(limiter.namespace).keyFor('user');
      const companion = actionRecordsKey(key);
      await limiter.limit('user', { actionId: 'job' });
      // Later attempts without an action id renew the key's TTL: the companion's must follow, or it would expire
      // first and the flood bound would take an admitted action for a record without one.
      for (let i = 0; i < 3; i += 1) {
        await sleep(25);
        clock.advanceUs(1_000);
        await limiter.limit('user');
        // Both read in one transaction: Redis's clock does not move between them.
        const [[, keyTtl], [, companionTtl]] = (await client.multi().pttl(key).pttl(companion).exec()) as [[null, number], [null, number]];
        expect(keyTtl, 'the key has a TTL').to.be.above(59_000);
        expect(companionTtl, 'the companion outlives its key').to.be.at.least(keyTtl);
      }
      // A new key without an action id has no companion, and is given none.
      await limiter.limit('fresh');
      expect(await client.exists(actionRecordsKey(new KeyBuilder(limiter.namespace).keyFor('fresh')))).to.equal(0);
    });
  }

  it('holds the same bound in memory', async () => {
    const store = new MemoryStore();
    const rule = { intervalUs: 60_000_000, maxInInterval: MAX, countsCost: false, minDifferenceUs: 0, countBlocked: true, inFlightUs: 0 };
    const tier = { key: 'hot', rule, store };
    let now = 1_000_000_000;
    const count = async (): Promise<number> => (await store.peek([tier], now)).tiers[0]?.after.count as number;
    for (let i = 0; i < MAX; i += 1) await store.attempt([tier], (now += 7), `job-${i}`);
    for (let i = 0; i < 2_000; i += 1) await store.attempt([tier], (now += 7));
    // A dry run counts the attempt it describes.
    expect(await count()).to.equal(2 * MAX + 1);
    for (let i = 0; i < 300; i += 1) await store.attempt([tier], (now += 7), `blocked-${i}`);
    expect(await count()).to.equal(2 * MAX + 300 + 1);
    for (let i = 0; i < MAX; i += 1) await store.attempt([tier], (now += 7));
    expect(await count()).to.equal(2 * MAX + 1);
    // Single-use action ids: a blocked one is recorded as without an id, and the bound holds at once.
    for (let i = 0; i < 300; i += 1) await store.attempt([tier], (now += 7), `request-${i}`, 1, true);
    expect(await count()).to.equal(2 * MAX + 1);
  });
});
