import { expect } from 'chai';
import { RollingRateLimiter } from '../../src/index.js';

describe('smoke', () => {
  it('limits', async () => {
    let now = 1_000_000;
    const limiter = new RollingRateLimiter({ interval: 1000, maxInInterval: 2, clock: () => now });
    expect(await limiter.limit('a')).to.equal(false);
    now += 1;
    expect(await limiter.limit('a')).to.equal(false);
    expect(await limiter.limit('a')).to.equal(true);
  });
});
