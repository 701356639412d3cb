// The express-rate-limit store in memory keeps memory proportional to the
// keys it counts, however often their hits are given back (`decrement`, as
// with skipSuccessfulRequests) and their entries leave and come back.

import { expect } from 'chai';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { heapGrowth } from '../../support/heap.js';

describe('RollingWindowStore (express-rate-limit) in memory, heap', () => {
  // 60 s: each key's entry stays and is emptied by every give-back; 1 ms: entries expire and are made again all along.
  for (const windowMs of [60_000, 1]) {
    it(`keeps memory flat over 300,000 increment + decrement cycles on 10 keys (skipSuccessfulRequests, windowMs ${windowMs})`, async function () {
      this.timeout(60_000);
      const store = new RollingWindowStore();
      store.init({ windowMs, limit: 5, skipSuccessfulRequests: true });
      const request = async (i: number): Promise<void> => {
        const key = `client-${i % 10}`;
        await store.increment(key);
        await store.decrement(key);
      };
      const grown = await heapGrowth(request, { warmup: 10_000, cycles: 300_000 });
      expect(grown, `heap grew by ${Math.round(grown / 1e6)} MB`).to.be.below(8_000_000);
      // Every hit was given back: no key counts anything.
      for (let key = 0; key < 10; key += 1) expect((await store.get(`client-${key}`))?.totalHits ?? 0).to.equal(0);
    });
  }
});
