// The one conversion both stores make of the hit log's answer: the count, and
// its reset as a wait (@fastify/rate-limit's ttl), rounded up to the
// millisecond once, and as a moment (express-rate-limit's resetTime), the
// answer's millisecond plus that wait; and the rule of a request from the
// window and limit its host hands over.

import { expect } from 'chai';
import { hitRule, windowCount } from '../../../src/http/stores/window-count.js';

describe('windowCount', () => {
  it('has no reset for an empty window', () => {
    expect(windowCount({ count: 0, changesAtUs: undefined, nowUs: 5_000_000 })).to.deep.equal({ count: 0, reset: undefined });
  });

  it("gives the reset as a wait rounded up to the millisecond, and as the answer's millisecond plus that wait", () => {
    expect(windowCount({ count: 3, changesAtUs: 61_000_000, nowUs: 1_000_000 })).to.deep.equal({ count: 3, reset: { atMs: 61_000, inMs: 60_000 } });
    // 59,999.002 ms away: 60,000 ms, from the answer's millisecond (1,000 ms, as Date.now() read it).
    expect(windowCount({ count: 1, changesAtUs: 61_000_001, nowUs: 1_000_999 }).reset).to.deep.equal({ atMs: 61_000, inMs: 60_000 });
  });

  it("reads a 60 s window as 60 s from the answer's millisecond, wherever in it the hit fell (not 61: the moment is not rounded up again)", () => {
    for (const nowUs of [1_000_000, 1_000_001, 1_000_400, 1_000_999]) {
      const reset = windowCount({ count: 1, changesAtUs: nowUs + 60_000_000, nowUs }).reset;
      const dateNow = Math.floor(nowUs / 1000); // what express-rate-limit's Date.now() reads in the answer's millisecond
      expect({ nowUs, seconds: Math.ceil(((reset?.atMs ?? 0) - dateNow) / 1000), inMs: reset?.inMs }).to.deep.equal({ nowUs, seconds: 60, inMs: 60_000 });
    }
    // A wait a microsecond past 60 s is 61 s, rounded up once.
    expect(windowCount({ count: 1, changesAtUs: 1_000_400 + 60_000_001, nowUs: 1_000_400 }).reset).to.deep.equal({ atMs: 61_001, inMs: 60_001 });
  });

  it('waits 0 once the moment has passed', () => {
    expect(windowCount({ count: 2, changesAtUs: 1_000_000, nowUs: 1_500_000 }).reset).to.deep.equal({ atMs: 1_500, inMs: 0 });
  });
});

describe('hitRule', () => {
  it('takes the window in microseconds (a fraction of a millisecond rounded up, at least 1 ms) and the limit rounded down', () => {
    expect(hitRule(60_000, 5)).to.deep.equal({ windowUs: 60_000_000, limit: 5 });
    expect(hitRule(0.2, 2.9)).to.deep.equal({ windowUs: 1_000, limit: 2 });
    expect(hitRule(0, 0)).to.deep.equal({ windowUs: 1_000, limit: 0 });
  });
});
