// The memory store's decisions, expiry and timers. Its soaks (a million ids,
// 300,000 cycles on one id) are in test/soak/memory-store-volume.test.ts.

import { expect } from 'chai';
import sinon from 'sinon';
import type { WindowRule } from '../../../src/core/decision-model.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { localMicroseconds } from '../../../src/core/clock.js';
import { RollingRateLimiter } from '../../../src/index.js';

const rule: WindowRule = { intervalUs: 1_000_000, maxInInterval: 5, countsCost: false, minDifferenceUs: 0, countBlocked: true, inFlightUs: 0 };

describe('MemoryStore', () => {
  it('never forgets an id before its window has passed: interval 1 ms, max 1, at most one admission in any 1 ms of stamps', async () => {
    // Ids expire on the same clock, in the same unit, as the decisions: not on Date.now(), whose millisecond
    // may end a microsecond after an admission.
    const admittedAt: number[] = [];
    let stamp = 0;
    const limiter = new RollingRateLimiter({
      interval: 1,
      maxInInterval: 1,
      clock: () => {
        stamp = localMicroseconds();
        return stamp;
      },
    });
    // 50 ms of the limiter's own clock (its stamps), however slowly a loaded machine runs the loop.
    const from = localMicroseconds();
    let attempts = 0;
    while (stamp - from < 50_000 && attempts < 1_000_000) {
      attempts += 1;
      if (!(await limiter.limit('user'))) admittedAt.push(stamp);
    }
    expect(admittedAt.length, 'admissions').to.be.greaterThan(2);
    const closest = Math.min(...admittedAt.slice(1).map((t, i) => t - (admittedAt[i] as number)));
    expect(closest, 'µs between two admissions').to.be.at.least(1000);
  });

  it("keeps an id the model still counts when the attempts' clock jumps ahead and steps back", async () => {
    const store = new MemoryStore();
    const one: WindowRule = { ...rule, maxInInterval: 1 };
    const t = 1_000_000_000;
    await store.attempt([{ key: 'a', rule: one, store }], t);
    // Other ids written 10 intervals later by the attempts' clock (a clock set ahead), then the clock steps back.
    for (let i = 0; i < 200; i += 1) await store.attempt([{ key: `later-${i}`, rule: one, store }], t + 10_000_000 + i);
    const [outcome] = (await store.attempt([{ key: 'a', rule: one, store }], t + 1)).tiers;
    expect(outcome?.verdict.blockedDueToCount, 'still counted: forgotten only by wall-clock time, as a Redis TTL').to.equal(true);
  });

  it('keeps at most maxInInterval timestamps per id under a flood', async () => {
    const store = new MemoryStore();
    let now = 1_000_000_000;
    for (let i = 0; i < 20_000; i += 1) {
      now += 1;
      await store.attempt([{ key: 'hot', rule, store }], now);
    }
    const [peek] = (await store.peek([{ key: 'hot', rule, store }], now)).tiers;
    expect(peek?.after.count).to.equal(rule.maxInInterval + 1);
    expect(peek?.verdict.blockedDueToCount).to.equal(true);
  });

  it('peek changes nothing', async () => {
    const store = new MemoryStore();
    const now = 1_000_000_000;
    await store.peek([{ key: 'a', rule, store }], now);
    expect(store.size).to.equal(0);
    await store.attempt([{ key: 'a', rule, store }], now);
    const first = await store.peek([{ key: 'a', rule, store }], now + 5);
    const second = await store.peek([{ key: 'a', rule, store }], now + 5);
    expect(second).to.deep.equal(first);
  });

  it('answers consistently when an id expires by the wall clock while the injected clock stands still', async () => {
    const wall = sinon.useFakeTimers({ now: 1_700_000_000_000, toFake: ['Date'] });
    try {
      const store = new MemoryStore();
      const two: WindowRule = { ...rule, maxInInterval: 2 };
      const tier = { key: 'frozen', rule: two, store };
      const frozen = 1_000_000_000;
      for (let i = 0; i < 3; i += 1) await store.attempt([tier], frozen);
      // 1.1 s of real time: the id expired (as its Redis key would), so it is decided on an empty window.
      wall.tick(1_100);
      const [outcome] = (await store.attempt([tier], frozen)).tiers;
      expect(outcome?.verdict.blocked).to.equal(false);
      expect(outcome?.after.count).to.equal(1);
    } finally {
      wall.restore();
    }
  });

  it('keeps no timer', async () => {
    const clock = sinon.useFakeTimers();
    try {
      const store = new MemoryStore();
      for (let i = 0; i < 100; i += 1) await store.attempt([{ key: `id-${i}`, rule, store }], 1_000_000_000 + i);
      expect(clock.countTimers()).to.equal(0);
    } finally {
      clock.restore();
    }
  });
});
