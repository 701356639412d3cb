// The library under Deno, as a user's code imports it: the packed package is
// installed in a throwaway project (see test/support/packed-package.ts), and
// the Deno binary of the `deno` dev dependency runs test/runtimes/deno/smoke.ts
// and hono-smoke.ts there, their imports of src/ rewritten to the package's
// entries (resolved through the project's node_modules, where Hono is this
// repository's copy, linked; `--cached-only`: nothing is fetched). And the
// whole behavioural contract (test/runtimes/deno/contract.ts: memory, ioredis,
// iovalkey, node-redis 5 and @upstash/redis through the test endpoint, each
// also with batch: true) with mocha's API (run-mocha.ts), in this repository
// (its node_modules), an import map sending src/index.js to the installed
// package and the rest of src/ nowhere; on a redis-server started here (REDIS_URL).

import { expect } from 'chai';
import { readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanEnv, REPO, run } from '../support/packed-package.js';
import { useRedis } from '../support/redis-server.js';
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

/** The runner's closing line (test/runtimes/deno/run-mocha.ts). */
interface DenoResult {
  readonly runtime: string;
  readonly library: string;
  readonly passes: number;
  readonly failures: number;
  readonly pending: number;
  readonly suites: readonly string[];
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

  it('passes the contract with the installed package: memory, ioredis, iovalkey, node-redis 5 and @upstash/redis (each also with batch: true)', async function () {
    this.timeout(480_000);
    const { binary, directory, root } = project();
    const src = pathToFileURL(join(REPO, 'src')).href;
    const importMap = join(root, 'deno-contract-import-map.json');
    const imports = {
      [`${src}/index.js`]: installed('index.js'),
      [`${src}/http/hono/hono-middleware.js`]: installed('http/hono/hono-middleware.js'),
      [`${src}/`]: pathToFileURL(join(directory, 'src-is-not-loaded-under-deno')).href + '/',
    };
    writeFileSync(importMap, JSON.stringify({ imports }, null, 2));
    const redis = await useRedis();
    try {
      const env = cleanEnv({ DENO_DIR: join(root, 'deno-dir'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', REDIS_URL: redis.url });
      const args = ['run', '-A', '--no-prompt', '--cached-only', '--unstable-sloppy-imports', '--import-map', importMap];
      const output = await run(binary.path, [...args, 'test/runtimes/deno/run-mocha.ts', 'test/runtimes/deno/contract.ts'], REPO, { env, timeoutMs: 420_000 });
      const line = output.split('\n').find((candidate) => candidate.startsWith('RESULT '));
      expect(line, `the runner's closing line, in:\n${output.slice(-3000)}`).to.be.a('string');
      const result = JSON.parse((line as string).slice('RESULT '.length)) as DenoResult;
      expect(result.runtime).to.equal(binary.version.replace(/^deno (\S+).*$/, 'deno $1'));
      expect(result.library, 'the library came from the installed package').to.equal(installed('index.js'));
      expect(result).to.include({ failures: 0, pending: 0 });
      expect(result.passes).to.be.above(500);
      expect(result.suites).to.deep.equal([
        'RollingRateLimiter contract on the in-memory store',
        'RateLimiterStack contract on the in-memory store',
        'action ids and undo on the in-memory store',
        'costs on the in-memory store',
        'real Redis through ioredis 5 (standalone)',
        'real Redis through iovalkey (standalone)',
        'real Redis through node-redis 5 (standalone)',
        'real Redis through @upstash/redis (HTTP)',
      ]);
      console.log(`      ${result.passes} contract tests passed under ${result.runtime}`);
    } finally {
      await redis.stop();
    }
  });
});
