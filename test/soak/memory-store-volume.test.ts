// Soaks of the memory store: a million ids, and 300,000 cycles on one id, each
// checking that memory stays bounded. `npm run test:soak` and `npm test` run
// them; the rest of the store's tests are in test/stores/memory/.

import { expect } from 'chai';
import sinon from 'sinon';
import type { WindowRule } from '../../src/core/decision-model.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { heapGrowth } from '../support/heap.js';

const rule: WindowRule = { intervalUs: 1_000_000, maxInInterval: 5, countsCost: false, minDifferenceUs: 0, countBlocked: true, inFlightUs: 0 };

describe('MemoryStore', () => {
  it('reclaims ids not written for an interval of wall-clock time, without timers, so memory stays bounded over a million ids', async () => {
    const wall = sinon.useFakeTimers({ now: 1_700_000_000_000, toFake: ['Date'] });
    try {
      const store = new MemoryStore();
      let now = 1_000_000_000;
      let largest = 0;
      for (let i = 0; i < 1_000_000; i += 1) {
        now += 10;
        if (i % 100 === 99) wall.tick(1); // 100,000 new ids per interval of wall-clock time
        await store.attempt([{ key: `id-${i}`, rule, store }], now);
        largest = Math.max(largest, store.size);
      }
      // About one interval's worth of ids, plus the small backlog of amortized reclaiming.
      expect(largest).to.be.at.most(100_000 + 1_000);
      expect(store.size).to.be.at.most(100_000 + 1_000);
    } finally {
      wall.restore();
    }
  });

  for (const forget of ['clear', 'undo'] as const) {
    it(`keeps memory flat over 300,000 cycles of limit and ${forget} on one id`, async function () {
      this.timeout(60_000);
      const store = new MemoryStore();
      const tier = { key: 'one', rule: { ...rule, intervalUs: 60_000_000 }, store };
      let now = 1_000_000_000;
      const grown = await heapGrowth(
        async (i) => {
          await store.attempt([tier], (now += 1), forget === 'undo' ? `a${i}` : undefined);
          if (forget === 'clear') await store.clear(['one']);
          else await store.undo(['one'], `a${i}`);
        },
        { warmup: 10_000, cycles: 300_000 },
      );
      expect(grown, `heap grew by ${Math.round(grown / 1e6)} MB`).to.be.below(8_000_000);
      expect(store.size).to.equal(1);
    });
  }
});
