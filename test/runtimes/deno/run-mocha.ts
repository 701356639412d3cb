// Runs test files under Deno with mocha's programmatic API (Deno loads the
// repository's TypeScript itself, `.js` specifiers of `.ts` files by
// `--unstable-sloppy-imports`): `deno run -A --unstable-sloppy-imports
// --import-map <map> run-mocha.ts <file>...`, where the import map sends
// src/index.js and src/http/hono/hono-middleware.js to the installed package
// and every other file of src/ nowhere. Prints the spec report, then one line
// `RESULT {json}` with the counts, Deno's version, where the library came from
// and the titles of the top-level suites; exits non-zero when a test failed or
// none ran.

import Mocha from 'mocha';
import { resolve } from 'node:path';

const mocha = new Mocha({ timeout: 30_000, reporter: 'spec' });
mocha.suite.emit('pre-require', globalThis, 'deno', mocha);
for (const file of process.argv.slice(2)) await import(resolve(file));

const runner = mocha.run((failures) => {
  const stats = runner.stats ?? { passes: 0, pending: 0 };
  const result = {
    runtime: `deno ${(globalThis as unknown as { Deno: { version: { deno: string } } }).Deno.version.deno}`,
    library: import.meta.resolve('../../../src/index.js'),
    passes: stats.passes,
    failures,
    pending: stats.pending,
    suites: mocha.suite.suites.map((suite) => suite.title),
  };
  // Exits at once: a client or server a suite failed to close must not keep the run alive past its result.
  process.stdout.write(`\nRESULT ${JSON.stringify(result)}\n`, () => process.exit(failures > 0 || stats.passes === 0 ? 1 : 0));
});
