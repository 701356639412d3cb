// The NestJS guide's example runs as pasted: its code block is
// examples/nestjs-api.ts (after the file's header comment, with the package
// name for this repository's source), and that file, run as `npm run
// examples` runs it, against a redis-server the harness starts, prints the
// two answers the guide shows and exits by itself.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** Longer than the example needs by far; past it the child is killed (its own PID) and the test fails. */
const RUN_TIMEOUT_MS = 30_000;

/** The code block, and the output block after it, of the NestJS guide (docs/guides/nestjs.md). */
function readmeBlocks(): { code: string; output: string } {
  const section = readFileSync(join(REPO, 'docs/guides/nestjs.md'), 'utf8');
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  const output = /```console\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined || output === undefined) throw new Error('no ts and console blocks in docs/guides/nestjs.md');
  return { code, output };
}

describe("the NestJS guide's example", function () {
  this.timeout(60_000);
  let redis: UsedRedis | undefined;
  before(async () => {
    redis = await useRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('is examples/nestjs-api.ts, with the package name', () => {
    const example = readFileSync(join(REPO, 'examples/nestjs-api.ts'), 'utf8');
    const body = example.replace(/^(\/\/.*\n|\n)+/, '').replace("'../src/integrations/nestjs/index.js'", "'rolling-window-limiter/nestjs'");
    expect(readmeBlocks().code).to.equal(body);
  });

  it('prints what the guide shows, on Redis, and exits', async () => {
    const { exitCode, stdout, stderr } = await new Promise<{ exitCode: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', '-e', "require('./examples/nestjs-api.ts')"],
        { cwd: REPO, env: { ...process.env, REDIS_URL: (redis as UsedRedis).url }, timeout: RUN_TIMEOUT_MS, encoding: 'utf8' },
        (error, out, err) => resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout: out, stderr: err }),
      );
    });
    expect(exitCode, stderr).to.equal(0);
    expect(stdout).to.equal(readmeBlocks().output);
  });
});
