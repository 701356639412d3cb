// A store that fails after the call has already timed out must not crash the
// process: test/support/late-failure-child.ts lets every store call time out
// and then reject, on every path (MULTI, scripts, dry runs, stacks, clear,
// undo, waiting, wrap, the middleware) under every `onStoreError` policy, in a
// child run with `--unhandled-rejections=strict`. A late rejection left
// unhandled would end it with exit code 1 and the error on stderr.

import { expect } from 'chai';
import { lastJsonLine, runChild } from '../support/child-process.js';

interface Case {
  readonly name: string;
  readonly policy: string;
  readonly outcome: string;
  readonly fallbackCalls: number;
  readonly expectedFallbackCalls: number;
}

describe('a store failure that comes after the timeout', function () {
  this.timeout(40_000);

  it('goes nowhere on every path under every policy: exit code 0, nothing on stderr, each fallback asked once per decision', async () => {
    const run = await runChild('late-failure-child.ts', ['stub'], 30_000);
    expect(run.killed, 'still running at the limit').to.equal(false);
    expect(run.stderr, 'stderr').to.equal('');
    expect(run.code, `exit code (stderr: ${run.stderr})`).to.equal(0);
    const { cases } = lastJsonLine<{ cases: Case[] }>(run);
    expect(cases).to.have.length(4 * 21);
    for (const { name, policy, outcome, fallbackCalls, expectedFallbackCalls } of cases) {
      const where = `${name} under '${policy}'`;
      expect(fallbackCalls, `${where}: fallback calls`).to.equal(expectedFallbackCalls);
      if (/clear|undo/.test(name)) {
        // Not decisions: no policy stands in for them.
        expect(outcome, where).to.equal('rejected TimeoutError');
      } else if (policy === 'throw') {
        expect(outcome, where).to.match(/^(rejected TimeoutError|resolved next\(TimeoutError\))$/);
      } else {
        expect(outcome, where).to.match(/^(resolved (true|false|blocked=(true|false)|called|next\(\)|status 429)|rejected RateLimitedError)$/);
      }
    }
    console.log(`      late failures: ${cases.length} calls (21 paths × 4 policies) settled once, no late rejection escaped`);
  });
});
