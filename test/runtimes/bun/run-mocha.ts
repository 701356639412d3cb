// Runs test files under Bun with mocha's programmatic API (mocha's own
// command line loads TypeScript through require(), which Bun's plugins do not
// see): `bun --preload ./built-package.ts run-mocha.ts <file>...`. Prints the
// spec report, then one line `RESULT {json}` with the counts, the runtime's
// version, where the library came from and the titles of the top-level suites;
// exits non-zero when a test failed or none ran.

import Mocha from 'mocha';
import { resolve } from 'node:path';
import { LIBRARY_ENTRY } from './built-package.js';

const mocha = new Mocha({ timeout: 30_000, reporter: 'spec' });
mocha.suite.emit('pre-require', globalThis, 'bun', mocha);
for (const file of process.argv.slice(2)) await import(resolve(file));

const runner = mocha.run((failures) => {
  const stats = runner.stats ?? { passes: 0, pending: 0 };
  const result = {
    runtime: `bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`,
    library: LIBRARY_ENTRY,
    passes: stats.passes,
    failures,
    pending: stats.pending,
    suites: mocha.suite.suites.map((suite) => suite.title),
  };
  process.stdout.write(`\nRESULT ${JSON.stringify(result)}\n`);
  process.exitCode = failures > 0 || stats.passes === 0 ? 1 : 0;
});
