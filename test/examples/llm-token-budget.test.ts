// examples/llm-token-budget.ts, run as `npm run examples` runs it: six workers share an RPM + TPM + tokens-per-day
// budget against a simulated provider that enforces the same rolling limits on its own books. The provider must
// answer no 429, and the workers must use most of the TPM budget: the reservations hold back only what the answers in
// flight may still use (about 98% used on a quiet machine; the threshold leaves room for a busy one, whose late
// wake-ups waste budget time). On Redis too when REDIS_URL is set.

import { expect } from 'chai';
import { main, type RunSummary } from '../../examples/llm-token-budget.js';

/** Below this share of the TPM budget, reserve-then-settle (or waiting) is not working. */
const TPM_SHARE_AT_LEAST = 0.85;

function expectWithinLimits(summary: RunSummary): void {
  const report = summary.lines.join('\n');
  expect(summary.rejected, `429s the provider answered\n${report}`).to.equal(0);
  expect(summary.requests, report).to.be.greaterThan(100);
  expect(summary.busiestMinuteTokens, report).to.be.at.most(90_000);
  expect(summary.busiestMinuteRequests, report).to.be.at.most(60);
  expect(summary.tpmShare, `share of the TPM budget used\n${report}`).to.be.above(TPM_SHARE_AT_LEAST);
  // Every settlement landed in the day tier too: the limiter's day count is the provider's, token for token.
  expect(summary.limiterDayTokens, report).to.equal(summary.tokensUsed);
  expect(summary.tokensUsed, report).to.be.below(summary.tokensReserved);
}

describe('examples/llm-token-budget.ts', function () {
  this.timeout(30_000);

  it('in memory: no 429 from the provider, and most of the TPM budget used', async () => {
    const summary = await main({ print: false });
    expectWithinLimits(summary);
    expect(summary.allowanceMs).to.equal(0);
    expect(summary.realMs).to.be.below(15_000);
    expect(summary.lines.some((line) => line.includes('0 answered 429'))).to.equal(true);
  });

  (process.env.REDIS_URL ? it : it.skip)('on the Redis at REDIS_URL: no 429 from the provider, and most of the TPM budget used', async () => {
    expectWithinLimits(await main({ redisUrl: process.env.REDIS_URL, print: false }));
  });
});
