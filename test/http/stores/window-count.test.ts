// The one conversion both stores make of the hit log's answer: the count, and
// its reset as a moment (express-rate-limit's resetTime) and as a wait
// (@fastify/rate-limit's ttl), both rounded up so never early; and the rule
// of a request from the window and limit its host hands over.

import { expect } from 'chai';
import { hitRule, windowCount } from '../../../src/http/stores/window-count.js';

describe('windowCount', () => {
  it('has no reset for an empty window', () => {
    expect(windowCount({ count: 0, changesAtUs: undefined, nowUs: 5_000_000 })).to.deep.equal({ count: 0, reset: undefined });
  });

  it('gives the reset as a moment and as a wait from the answer, in whole milliseconds rounded up', () => {
    expect(windowCount({ count: 3, changesAtUs: 61_000_000, nowUs: 1_000_000 })).to.deep.equal({ count: 3, reset: { atMs: 61_000, inMs: 60_000 } });
    // 59,999.001 ms away, at 61,000.001 ms: both rounded up.
    expect(windowCount({ count: 1, changesAtUs: 61_000_001, nowUs: 1_000_999 }).reset).to.deep.equal({ atMs: 61_001, inMs: 60_000 });
  });

  it('waits 0 once the moment has passed', () => {
    expect(windowCount({ count: 2, changesAtUs: 1_000_000, nowUs: 1_500_000 }).reset).to.deep.equal({ atMs: 1_000, inMs: 0 });
  });
});

describe('hitRule', () => {
  it('takes the window in microseconds (a fraction of a millisecond rounded up, at least 1 ms) and the limit rounded down', () => {
    expect(hitRule(60_000, 5)).to.deep.equal({ windowUs: 60_000_000, limit: 5 });
    expect(hitRule(0.2, 2.9)).to.deep.equal({ windowUs: 1_000, limit: 2 });
    expect(hitRule(0, 0)).to.deep.equal({ windowUs: 1_000, limit: 0 });
  });
});
