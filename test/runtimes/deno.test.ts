// The library under Deno, as a user's code imports it: the packed package is
// installed in a throwaway project (see test/support/packed-package.ts), and
// the Deno binary of the `deno` dev dependency runs test/runtimes/deno/smoke.ts
// and hono-smoke.ts there, their imports of src/ rewritten to the package's
// entries (resolved through the project's node_modules, where Hono is this
// repository's copy, linked; `--cached-only`: nothing is fetched).

import { expect } from 'chai';
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanEnv, REPO, run } from '../support/packed-package.js';
import { useRuntimeProject, type RuntimeProject } from '../support/runtime-binary.js';

/** The package's entry for each file of src/ the smoke tests import. */
const ENTRIES = {
  "'../../../src/index.js'": "'rolling-window-limiter'",
  "'../../../src/http/hono/hono-middleware.js'": "'rolling-window-limiter/hono'",
};

/** Copies test/runtimes/deno/`file` into the project, its imports of src/ rewritten, runs it under Deno and returns what it printed. */
async function runSmoke({ binary, directory, root }: RuntimeProject, file: string): Promise<unknown> {
  let smoke = readFileSync(join(REPO, 'test/runtimes/deno', file), 'utf8');
  for (const [from, to] of Object.entries(ENTRIES)) smoke = smoke.replaceAll(from, to);
  expect(smoke, 'every import of src/ is rewritten').to.not.match(/'(\.\.\/)+src\//);
  writeFileSync(join(directory, file), smoke);
  const env = cleanEnv({ DENO_DIR: join(root, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' });
  return JSON.parse(await run(binary.path, ['run', '--no-prompt', '--cached-only', file], directory, { env }));
}

describe('under Deno', function () {
  this.timeout(120_000);
  const project = useRuntimeProject('deno');
  const installed = (entry: string): string => pathToFileURL(join(project().directory, 'node_modules/rolling-window-limiter/dist/esm', entry)).href;

  it('limits exactly in memory (limit, limitWithInfo, wouldLimit, undo, clear, a stack) on an injected clock, with diagnostics_channel', async () => {
    const { binary } = project();
    expect(await runSmoke(project(), 'smoke.ts')).to.deep.equal({
      runtime: binary.version.replace(/^deno (\S+).*$/, 'deno $1'),
      library: installed('index.js'),
      decisions: 14,
    });
  });

  it('limits a Hono app with rolling-window-limiter/hono in process (app.request): 200 and 429 with exact headers', async () => {
    const { binary, directory } = project();
    const hono = join(directory, 'node_modules', 'hono');
    symlinkSync(join(REPO, 'node_modules', 'hono'), hono, 'dir');
    try {
      expect(await runSmoke(project(), 'hono-smoke.ts')).to.deep.equal({
        runtime: binary.version.replace(/^deno (\S+).*$/, 'deno $1'),
        library: installed('http/hono/hono-middleware.js'),
        statuses: [200, 429, 500],
      });
    } finally {
      unlinkSync(hono); // the link, before the project is removed
    }
  });
});
