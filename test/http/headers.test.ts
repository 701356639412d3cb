// The framework-free header helpers: rounding, structured-field strings, the
// binding tier.

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
    expect(policiesOf(a)).to.deep.equal([{ index: 0, namespace: 'a', interval: 1_000, maxInInterval: 5, minDifference: 100 }]);
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
});
