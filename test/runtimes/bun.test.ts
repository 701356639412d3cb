// The library under Bun, as a user's code imports it: the packed package is
// installed in a throwaway project (see test/support/packed-package.ts), and
// the Bun binary of the `bun` dev dependency runs the behavioural contract
// (test/runtimes/bun/contract.ts: memory, and ioredis, iovalkey and node-redis 5
// on a redis-server it starts on loopback) with mocha's API, every import of
// src/index.js resolved to the installed package. Also: Bun's own RedisClient
// is told apart from the clients the library serves.

import { expect } from 'chai';
import { join } from 'node:path';
import { cleanEnv, REPO, run } from '../support/packed-package.js';
import { useRuntimeProject } from '../support/runtime-binary.js';

/** The runner's closing line (test/runtimes/bun/run-mocha.ts). */
interface BunResult {
  readonly runtime: string;
  readonly library: string;
  readonly passes: number;
  readonly failures: number;
  readonly pending: number;
  readonly suites: readonly string[];
}

describe('under Bun', function () {
  this.timeout(240_000);
  const project = useRuntimeProject('bun');

  it('passes the contract with the installed package: memory, ioredis, iovalkey and node-redis 5 (with batch: true), and refuses Bun’s RedisClient', async () => {
    const args = ['--preload', './test/runtimes/bun/built-package.ts', 'test/runtimes/bun/run-mocha.ts', 'test/runtimes/bun/contract.ts'];
    const { binary, directory } = project();
    const output = await run(binary.path, args, REPO, { env: cleanEnv({ RWL_CONSUMER_DIR: directory }), timeoutMs: 200_000 });
    const line = output.split('\n').find((candidate) => candidate.startsWith('RESULT '));
    expect(line, `the runner's closing line, in:\n${output.slice(-3000)}`).to.be.a('string');
    const result = JSON.parse((line as string).slice('RESULT '.length)) as BunResult;
    expect(result.runtime).to.equal(`bun ${binary.version}`);
    expect(result.library, 'the library came from the installed package').to.equal(join(directory, 'node_modules', 'rolling-window-limiter', 'dist', 'esm', 'index.js'));
    expect(result).to.include({ failures: 0, pending: 0 });
    expect(result.passes).to.be.above(300);
    expect(result.suites).to.include.members([
      'RollingRateLimiter contract on the in-memory store',
      'RateLimiterStack contract on the in-memory store',
      'real Redis through ioredis 5 (standalone)',
      'real Redis through iovalkey (standalone)',
      'real Redis through node-redis 5 (standalone)',
      'Bun’s built-in RedisClient',
    ]);
  });

  it('tells Bun’s RedisClient apart from ioredis, iovalkey and node-redis clients', async () => {
    const output = await run(project().binary.path, ['test/runtimes/bun/bun-client-detection.ts'], REPO);
    expect(JSON.parse(output)).to.deep.equal({ bun: true, ioredis: false, iovalkey: false, nodeRedis: false, object: false });
  });
});
