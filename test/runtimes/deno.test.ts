// The library under Deno, as a user's code imports it: the packed package is
// installed in a throwaway project (see test/support/packed-package.ts), and
// the Deno binary of the `deno` dev dependency runs test/runtimes/deno/smoke.ts
// there, its import rewritten to the package's name (resolved through the
// project's node_modules; `--cached-only`: nothing is fetched).

import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanEnv, REPO, run } from '../support/packed-package.js';
import { useRuntimeProject } from '../support/runtime-binary.js';

describe('under Deno', function () {
  this.timeout(120_000);
  const project = useRuntimeProject('deno');

  it('limits exactly in memory (limit, limitWithInfo, wouldLimit, undo, clear, a stack) on an injected clock, with diagnostics_channel', async () => {
    const { binary, directory, root } = project();
    const smoke = readFileSync(join(REPO, 'test/runtimes/deno/smoke.ts'), 'utf8').replaceAll("'../../../src/index.js'", "'rolling-window-limiter'");
    expect(smoke, 'every import of src/ is rewritten').to.not.match(/'(\.\.\/)+src\//);
    writeFileSync(join(directory, 'smoke.ts'), smoke);
    const env = cleanEnv({ DENO_DIR: join(root, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' });
    const output = await run(binary.path, ['run', '--no-prompt', '--cached-only', 'smoke.ts'], directory, { env });
    expect(JSON.parse(output)).to.deep.equal({
      runtime: binary.version.replace(/^deno (\S+).*$/, 'deno $1'),
      library: pathToFileURL(join(directory, 'node_modules/rolling-window-limiter/dist/esm/index.js')).href,
      decisions: 14,
    });
  });
});
