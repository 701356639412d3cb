// The framework-free header helpers: rounding, structured-field strings, the
// binding tier, and tiers that count cost (their budget as q and r).

import { expect } from 'chai';
import { RateLimiterStack, RollingRateLimiter, type RateLimitInfo } from '../../src/index.js';
import { createRateLimitHeaders, policiesOf, retryAfterSeconds, tierStatuses, toStructuredString } from '../../src/http/express/express-middleware.js';

function info(fields: Partial<RateLimitInfo>): RateLimitInfo {
  return { blocked: false, blockedDueToCount: false, blockedDueToMinDifference: false, actionsRemaining: 0, millisecondsUntilAllowed: 0, ...fields };
}

describe('rate-limit header helpers', () => {
  it('rounds waits up to whole seconds, 0 only when there is nothing to wait for', () => {
    expect([0, -5, Number.NaN, 1, 999, 1_000, 1_001, 59_999, 60_000].map(retryAfterSeconds)).to.deep.equal([0, 0, 0, 1, 1, 1, 2, 60, 60]);
  });

  it('serializes policy names as structured-field strings', () => {
    expect(toStructuredString('push:minute')).to.equal('"push:minute"');
    expect(toStructuredString('a "quoted" \\ name')).to.equal('"a \\"quoted\\" \\\\ name"');
    expect(toStructuredString('café\n')).to.equal('"caf%C3%A9%0A"');
    expect(toStructuredString('')).to.equal('""');
  });

  it('describes the tiers of a limiter and of a stack', () => {
    const a = new RollingRateLimiter({ namespace: 'a', interval: 1_000, maxInInterval: 5, minDifference: 100 });
    const b = new RollingRateLimiter({ namespace: 'b', interval: 60_000, maxInInterval: 100 });
    expect(policiesOf(a)).to.deep.equal([{ index: 0, namespace: 'a', interval: 1_000, maxInInterval: 5, quota: 5, minDifference: 100 }]);
    expect(policiesOf(new RateLimiterStack([a, b])).map((policy) => policy.namespace)).to.deep.equal(['a', 'b']);
  });

  it('binds the longest wait first, then the fewest remaining, then the first stacked', () => {
    const policies = policiesOf(
      new RateLimiterStack([
        new RollingRateLimiter({ namespace: 'x', interval: 1_000, maxInInterval: 5 }),
        new RollingRateLimiter({ namespace: 'y', interval: 1_000, maxInInterval: 5 }),
        new RollingRateLimiter({ namespace: 'z', interval: 1_000, maxInInterval: 5 }),
      ]),
    );
    const stackInfo = (tiers: Partial<RateLimitInfo>[]): RateLimitInfo => ({ ...info({}), tiers: tiers.map(info) }) as RateLimitInfo;
    const bind = (tiers: Partial<RateLimitInfo>[]): string => tierStatuses(policies, stackInfo(tiers)).binding.policy.namespace;
    expect(bind([{ actionsRemaining: 3 }, { actionsRemaining: 1 }, { actionsRemaining: 2 }])).to.equal('y');
    expect(bind([{ actionsRemaining: 1 }, { actionsRemaining: 1 }, { actionsRemaining: 2 }])).to.equal('x');
    expect(bind([{ actionsRemaining: 0, millisecondsUntilAllowed: 500 }, { actionsRemaining: 4, millisecondsUntilAllowed: 2_500 }, {}])).to.equal('y');
    // A wait makes the available quota 0, whatever actionsRemaining says.
    const statuses = tierStatuses(
      policies,
      stackInfo([{ actionsRemaining: 4, millisecondsUntilAllowed: 1 }, { actionsRemaining: 4 }, { actionsRemaining: 4 }]),
    );
    expect(statuses.binding).to.include({ index: 0, remaining: 0, resetSeconds: 1 });
  });

  it('builds the headers of a decision for use without Express', () => {
    const limiter = new RollingRateLimiter({ namespace: 'api', interval: 60_000, maxInInterval: 10 });
    const headersFor = createRateLimitHeaders(limiter, { headers: 'both', policyName: () => 'per-minute' });
    expect(headersFor(info({ blocked: true, actionsRemaining: 0, millisecondsUntilAllowed: 12_001 }))).to.deep.equal({
      'RateLimit-Policy': '"per-minute";q=10;w=60',
      RateLimit: '"per-minute";r=0;t=13',
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '13',
      'Retry-After': '13',
    });
  });

  describe('tiers that count cost', () => {
    const tokens = new RollingRateLimiter({ namespace: 'tokens', interval: 60_000, maxCostInInterval: 10_000 });
    const requests = new RollingRateLimiter({ namespace: 'requests', interval: 60_000, maxInInterval: 20 });

    it('describes a tier that counts cost by its maxCostInInterval, the quota q advertises', () => {
      expect(policiesOf(tokens)).to.deep.equal([
        { index: 0, namespace: 'tokens', interval: 60_000, maxCostInInterval: 10_000, quota: 10_000, minDifference: 0 },
      ]);
      expect(
        policiesOf(new RateLimiterStack([requests, tokens])).map(({ maxInInterval, maxCostInInterval, quota }) => [maxInInterval, maxCostInInterval, quota]),
      ).to.deep.equal([
        [20, undefined, 20],
        [undefined, 10_000, 10_000],
      ]);
    });

    it('reports its costRemaining as r, also while a request of this cost has to wait, and its budget as q', () => {
      const headersFor = createRateLimitHeaders(tokens, { headers: 'both' });
      expect(headersFor(info({ actionsRemaining: 1, costRemaining: 5_900 }))).to.deep.equal({
        'RateLimit-Policy': '"tokens";q=10000;w=60',
        RateLimit: '"tokens";r=5900',
        'X-RateLimit-Limit': '10000',
        'X-RateLimit-Remaining': '5900',
        'X-RateLimit-Reset': '0',
      });
      expect(headersFor(info({ blocked: true, actionsRemaining: 0, costRemaining: 1_200, millisecondsUntilAllowed: 30_000 }))).to.deep.include({
        RateLimit: '"tokens";r=1200;t=30',
        'X-RateLimit-Remaining': '1200',
        'Retry-After': '30',
      });
    });

    it('reports r=0 while a tier that counts cost with a minDifference waits: the gap may be what holds', () => {
      const spaced = new RollingRateLimiter({ namespace: 'spaced-tokens', interval: 60_000, maxCostInInterval: 10_000, minDifference: 2_000 });
      const headersFor = createRateLimitHeaders(spaced);
      expect(headersFor(info({ actionsRemaining: 9, costRemaining: 9_000, millisecondsUntilAllowed: 2_000 })).RateLimit).to.equal('"spaced-tokens";r=0;t=2');
      expect(headersFor(info({ actionsRemaining: 9, costRemaining: 9_000 })).RateLimit).to.equal('"spaced-tokens";r=9000');
    });

    it('binds the tier that admits the fewest more requests like this one, whatever its units', () => {
      const policies = policiesOf(new RateLimiterStack([requests, tokens]));
      const stackInfo = (tiers: Partial<RateLimitInfo>[]): RateLimitInfo => ({ ...info({}), tiers: tiers.map(info) }) as RateLimitInfo;
      // 5,900 tokens left is one more request of 4,000, and fewer than the 19 requests left.
      const large = tierStatuses(policies, stackInfo([{ actionsRemaining: 19 }, { actionsRemaining: 1, costRemaining: 5_900 }]));
      expect(large.binding).to.include({ index: 1, remaining: 5_900, actionsRemaining: 1 });
      // 9,990 tokens left is 999 more requests of 10: the requests tier binds.
      const small = tierStatuses(policies, stackInfo([{ actionsRemaining: 19 }, { actionsRemaining: 999, costRemaining: 9_990 }]));
      expect(small.binding).to.include({ index: 0, remaining: 19, actionsRemaining: 19 });
      expect(small.tiers.map((tier) => tier.remaining)).to.deep.equal([19, 9_990]);
    });

    it('describes an unannounced tier that counts cost by its own info', () => {
      const stackInfo = {
        ...info({}),
        tiers: [
          info({ actionsRemaining: 3 }),
          { ...info({ actionsRemaining: 2, costRemaining: 40 }), namespace: 'extra', interval: 1_000, maxCostInInterval: 50 },
        ],
      };
      const { binding } = tierStatuses(policiesOf(requests), stackInfo);
      expect(binding).to.deep.include({ index: 1, remaining: 40 });
      expect(binding.policy).to.deep.equal({ index: 1, namespace: 'extra', interval: 1_000, maxCostInInterval: 50, quota: 50, minDifference: 0 });
    });
  });
});
