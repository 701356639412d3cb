// The spec reporter, followed by one plain closing line that any reader of
// the log can find: "tests: N passed, N failed" (", N skipped" when any were).
'use strict';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Mocha = require('mocha');

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      const skipped = pending > 0 ? `, ${pending} skipped` : '';
      process.stdout.write(`\ntests: ${passes} passed, ${failures} failed${skipped}\n`);
    });
  }
}

module.exports = SpecWithSummary;
