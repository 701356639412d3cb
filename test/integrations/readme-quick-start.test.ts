// The README's Quick start runs as pasted: its code block is taken from the
// README, the package name pointed at this repository's source, and run as a
// file of its own (node with tsx, as `node quick-start.mjs` would run it)
// against a redis-server the harness starts. It must print its three lines and
// exit by itself, with code 0, well within the time limit.

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { findFreeLoopbackPort } from '../support/free-port.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** Longer than the script needs by far; past it the child is killed (its own PID) and the test fails. */
const RUN_TIMEOUT_MS = 30_000;

/** The first code block under `## Quick start` in the README. */
function quickStartCode(): string {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? '';
  const code = /```(?:js|ts)\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('no code block under "## Quick start" in README.md');
  return code;
}

describe("the README's Quick start", function () {
  this.timeout(60_000);
  let redis: UsedRedis | undefined;
  let directory = '';

  before(async () => {
    redis = await useRedis();
    // Inside node_modules/.cache, so that `ioredis` resolves from this repository's node_modules.
    const cache = join(REPO, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    directory = mkdtempSync(join(cache, 'rwl-quick-start-'));
  });

  after(async () => {
    if (directory) rmSync(directory, { recursive: true, force: true });
    await redis?.stop();
  });

  /** Writes the Quick start to a file and runs it with REDIS_URL set to `url`. */
  async function runQuickStart(url: string): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
    const code = quickStartCode();
    expect(code, 'no top-level return').not.to.match(/^return\b/m);
    const file = join(directory, 'quick-start.mjs');
    writeFileSync(file, code.replace(/from 'rolling-window-limiter'/, `from '${pathToFileURL(join(REPO, 'src/index.ts')).href}'`));
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', file],
        { cwd: directory, env: { ...process.env, REDIS_URL: url }, timeout: RUN_TIMEOUT_MS, encoding: 'utf8' },
        (error, stdout, stderr) => resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
    });
  }

  it('runs as pasted, prints its lines and exits', async () => {
    if (redis === undefined) throw new Error('no redis');
    const { exitCode, stdout, stderr } = await runQuickStart(redis.url);
    expect(exitCode, `exited by itself with code 0\n${stderr}`).to.equal(0);
    expect(stdout.trim().split('\n')).to.deep.equal(['ada: sent', 'ada: blocked, too soon after the last one', 'grace: sent']);

    const client = new Redis(redis.url);
    try {
      expect(await client.exists('push:{ada}', 'push:{grace}'), 'it used the Redis it was given').to.equal(2);
      await client.del('push:{ada}', 'push:{grace}');
    } finally {
      await client.quit();
    }
  });

  it('with Redis down, says so and exits with an error instead of retrying forever', async () => {
    const { exitCode, stdout, stderr } = await runQuickStart(`redis://127.0.0.1:${await findFreeLoopbackPort()}`);
    expect(exitCode, 'exited by itself (null: killed at the time limit)').to.equal(1);
    expect(stdout).to.equal('');
    expect(stderr).to.match(/Redis: connect ECONNREFUSED/);
    expect(stderr).to.match(/TimeoutError/);
    expect(stderr).not.to.match(/Unhandled error event/);
  });
});
