// Every TypeScript block of the README runs as pasted: each is written, as it
// stands in README.md, to a file of a throwaway project that installs the
// packed tarball (test/support/packed-package.ts) beside the clients and
// frameworks the blocks import (linked from this repository's node_modules, as
// a user's project would have them installed), type-checked there by tsc
// (`strict`, against the package's .d.ts), and run with Node (through tsx) as
// a user runs it, against servers this test starts on 127.0.0.1:
//
// - a program must exit by itself with code 0 within RUN_TIMEOUT_MS (a block
//   that is a whole snippet file must print what its `.out.txt` holds);
// - a block that listens (`.listen(`) is started with PORT set to a free port,
//   must answer its first route with a 200 and, within a few more requests, a
//   429, and is then stopped (its own PID);
// - a Worker (`export default { fetch }`) is imported and its `fetch` called
//   with requests and the env a Worker gets, and must answer 200, then 429.
//
// Blocks read Redis at REDIS_URL (a redis-server of this test's, emptied
// before each block) and Upstash at UPSTASH_REDIS_REST_URL (the test's
// Upstash-compatible endpoint on that redis-server).

import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { codeBlocks, type CodeBlock } from '../docs/code-blocks.js';
import { findFreeLoopbackPort } from '../support/free-port.js';
import { installedProject, packedTarball, REPO, run } from '../support/packed-package.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';

/** Far longer than any block needs; past it the child is killed (its own PID) and the test fails. */
const RUN_TIMEOUT_MS = 30_000;
/** How long a server block may take to answer its first request. */
const LISTEN_TIMEOUT_MS = 20_000;
const TSC = join(REPO, 'node_modules/typescript/bin/tsc');
/** tsx's loader, given to `node --import` by URL: the throwaway project does not install tsx. */
const TSX = pathToFileURL(
  join(REPO, 'node_modules/tsx', (JSON.parse(readFileSync(join(REPO, 'node_modules/tsx/package.json'), 'utf8')) as { exports: { '.': string } }).exports['.']),
).href;

/** The TypeScript blocks of the README, each with the name of its file in the project. */
function readmeBlocks(): { block: CodeBlock; file: string }[] {
  return codeBlocks('README.md')
    .filter((block) => /^(ts|typescript)$/.test(block.language))
    .map((block) => ({ block, file: `block-line-${block.line}.ts` }));
}

/** The packages a block imports (not the library, not Node's built-ins): `@upstash/redis/cloudflare` is `@upstash/redis`. */
function importedPackages(code: string): string[] {
  const specifiers = [...code.matchAll(/^import\s[\s\S]*?\sfrom\s+'([^']+)';?$/gm)].map((match) => match[1] ?? '');
  return specifiers
    .filter((specifier) => !specifier.startsWith('node:') && !specifier.startsWith('.') && !/^rolling-window-limiter(\/|$)/.test(specifier))
    .map((specifier) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/'),
    );
}

interface Finished {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node --import tsx <args>` in `cwd` with `env` to its end (killed past the time limit: exit code null). */
function runNode(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Finished> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', TSX, ...args], { cwd, env, timeout: RUN_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** The statuses of `count` GET requests to `url`, one after another. */
async function statuses(url: string, count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await fetch(url, { signal: AbortSignal.timeout(5_000) })).status);
  return seen;
}

/** What a Worker block's runner prints: the statuses of six requests of one client. */
const WORKER_RUNNER = `const worker = (await import(process.argv[2])).default;
const env = { UPSTASH_REDIS_REST_URL: process.env.UPSTASH_REDIS_REST_URL, UPSTASH_REDIS_REST_TOKEN: process.env.UPSTASH_REDIS_REST_TOKEN };
const statuses = [];
for (let i = 0; i < 6; i++) {
  const response = await worker.fetch(new Request('http://worker.test/', { headers: { 'CF-Connecting-IP': '203.0.113.7' } }), env, {});
  statuses.push(response.status);
}
console.log(JSON.stringify(statuses));
`;

describe('the README’s TypeScript blocks, pasted into a project with the packed package', function () {
  this.timeout(300_000);
  const blocks = readmeBlocks();
  let root = '';
  let project = '';
  let redis: RedisServer | undefined;
  let upstash: UpstashRestEndpoint | undefined;
  const links: string[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'rwl-readme-'));
    const tarball = await packedTarball();
    project = await installedProject(root, 'readme-blocks', { type: 'module' }, tarball);
    // The clients and frameworks the blocks import, and the types a TypeScript project has, as installed.
    const packages = new Set(['@types', ...blocks.flatMap(({ block }) => importedPackages(block.code))]);
    for (const name of packages) {
      const link = join(project, 'node_modules', name);
      mkdirSync(dirname(link), { recursive: true }); // the scope's folder, for a scoped package
      symlinkSync(join(REPO, 'node_modules', name), link, 'dir');
      links.push(link);
    }
    for (const { block, file } of blocks) writeFileSync(join(project, file), block.code);
    writeFileSync(join(project, 'run-worker.mjs'), WORKER_RUNNER);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'], noEmit: true },
        files: blocks.map(({ file }) => file),
      }),
    );
    redis = await startRedisServer();
    if (blocks.some(({ block }) => importedPackages(block.code).includes('@upstash/redis'))) upstash = await startUpstashRestEndpoint({ redisUrl: redis.url });
  });

  after(async () => {
    await Promise.allSettled([upstash?.close(), redis?.stop()]);
    for (const link of links) if (existsSync(link)) unlinkSync(link); // the links into this repository, before anything is removed
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** The environment of a block's run: the servers of this test, and nothing of an enclosing `npm test`. */
  function envFor(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', REDIS_URL: redis?.url ?? '' };
    if (upstash) Object.assign(env, { UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: upstash.token });
    return { ...env, ...extra };
  }

  /** Empties the test's redis-server, so that no block sees another's keys. */
  async function flush(): Promise<void> {
    const client = new Redis(redis?.url ?? '', { maxRetriesPerRequest: 1 });
    try {
      await client.flushall();
    } finally {
      client.disconnect();
    }
  }

  it('are found: the Quick start, the action ids, the Express middleware and the Worker among them', () => {
    const sources = blocks.map(({ block }) => block.source?.replace(/#.*$/, ''));
    expect(sources).to.include.members([
      'examples/snippets/quick-start.ts',
      'examples/snippets/action-ids.ts',
      'examples/snippets/express.ts',
      'examples/snippets/edge-cloudflare-worker.ts',
    ]);
  });

  it('type-check as pasted (strict, against the packed .d.ts)', async () => {
    const output = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], project).catch((error: unknown) => String(error));
    expect(output).to.equal('');
  });

  for (const { block, file } of blocks) {
    const where = `README.md:${block.line} (${block.source ?? 'no file named'})`;
    const listens = /\.listen\(/.test(block.code);
    const worker = /^export default \{/m.test(block.code) && /\bfetch\(/.test(block.code);

    if (listens) {
      it(`${where}: serves, answers its route, limits it, and is stopped`, async () => {
        await flush();
        const route = /\.(?:get|post|all)\(\s*'(\/[^']*)'/.exec(block.code)?.[1];
        expect(route, 'a GET route to ask').to.be.a('string');
        const port = await findFreeLoopbackPort();
        const child = spawn(process.execPath, ['--import', TSX, file], {
          cwd: project,
          env: envFor({ PORT: String(port) }),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        try {
          const url = `http://127.0.0.1:${port}${route}`;
          const deadline = performance.now() + LISTEN_TIMEOUT_MS;
          let first: number | undefined;
          while (first === undefined && child.exitCode === null && performance.now() < deadline) {
            first = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
              (response) => response.status,
              () => undefined,
            );
            if (first === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
          }
          expect(first, `the first answer on ${url}\n${output}`).to.equal(200);
          expect(await statuses(url, 5), `a limit on ${route}\n${output}`).to.include(429);
        } finally {
          child.kill(); // this child's own PID
          await exited;
        }
      });
    } else if (worker) {
      it(`${where}: answers requests as a Worker, then limits them`, async () => {
        await flush();
        const { exitCode, stdout, stderr } = await runNode(['run-worker.mjs', pathToFileURL(join(project, file)).href], project, envFor());
        expect(exitCode, `exited by itself with code 0\n${stdout}\n${stderr}`).to.equal(0);
        const seen = JSON.parse(stdout) as number[];
        expect(seen[0], stderr).to.equal(200);
        expect(seen, stderr).to.include(429);
      });
    } else {
      it(`${where}: runs and exits by itself`, async () => {
        await flush();
        const { exitCode, stdout, stderr } = await runNode([file], project, envFor());
        expect(exitCode, `exited by itself with code 0 (null: killed at ${RUN_TIMEOUT_MS} ms)\n${stdout}\n${stderr}`).to.equal(0);
        const expected = block.source?.includes('#') === false ? join(REPO, block.source.replace(/\.[cm]?[jt]s$/, '.out.txt')) : undefined;
        if (expected !== undefined && existsSync(expected)) expect(stdout, 'what its .out.txt holds').to.equal(readFileSync(expected, 'utf8'));
      });
    }
  }
});
