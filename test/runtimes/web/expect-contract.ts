// What the workerd and edge-runtime tests expect of a contract run inside the
// runtime (test/runtimes/web/contract.ts): no failure (each reported with its
// stack, as mocha would), every test the contract declares for that store
// passed (counted here, on Node), and none of Node's globals where it ran.

import { Redis } from '@upstash/redis';
import { expect } from 'chai';
import { contractTestCount, type WebContractConfig, type WebContractResult } from './contract.js';

/** The top-level suites of the contract on a store named `store`. */
const suitesOn = (store: string): string[] => [
  `RollingRateLimiter contract on ${store}`,
  `RateLimiterStack contract on ${store}`,
  `action ids and undo on ${store}`,
  `costs on ${store}`,
];

export function expectContractPassed(result: WebContractResult, config: WebContractConfig, runtime: string): void {
  const report = result.failures.map((failure) => `${failure.title}\n${failure.stack}`).join('\n\n');
  expect(result.failures.length, `failures inside ${runtime}:\n${report}`).to.equal(0);
  expect(result.passes, 'every test the contract declares passed').to.equal(contractTestCount(config, Redis));
  expect(result.nodeGlobals, `Node’s globals inside ${runtime}`).to.deep.equal({ process: 'undefined', Buffer: 'undefined', setImmediate: 'undefined' });
  const suites =
    config.store === 'memory'
      ? suitesOn('the in-memory store')
      : [...suitesOn('@upstash/redis over fetch'), ...suitesOn('@upstash/redis over fetch, batch: true')];
  expect(result.suites).to.deep.equal(suites);
  console.log(`      ${result.passes} contract tests passed inside ${runtime} in ${result.durationMs} ms`);
}
