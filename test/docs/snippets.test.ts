// Every code block of README.md, docs/*.md and docs/guides/*.md is either a
// file or a fragment that says so:
//
// - A TypeScript or JavaScript block names its file in the comment before it,
//   `<!-- embedme examples/snippets/<name>.ts -->` (a part of one:
//   `<!-- embedme examples/snippets/<name>.ts#L10-L20 -->`), and embedme's
//   verify mode (`npm run docs:verify`) fails when a block differs from its
//   file. There is no TypeScript fragment without a file: an excerpt is a line
//   range of a file that compiles and runs.
// - Any other block is a fragment by its language (`text`, `sh`, `http`,
//   `console`, `ini`, ...), and may name a file too (an output that a snippet
//   prints, checked below). A block without a language fails.
//
// Every file in examples/snippets/ is type-checked (its tsconfig.json extends
// the library's strict settings and maps the package's names to src/), and
// run here as a user would run it, in a child process with a time limit,
// against a redis-server this test starts (REDIS_URL), a Redis Cluster when
// the snippet reads REDIS_CLUSTER_URL, and a Sentinel set-up when it reads
// REDIS_SENTINEL_URL. A snippet must exit by itself with code 0; when
// `<name>.out.txt` sits beside it, it must print exactly that (an output
// block of the docs may embed that file).

import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { codeBlocks, documentFiles } from './code-blocks.js';
import { startRedisCluster, type RedisClusterHandle } from '../support/redis-cluster.js';
import { startRedisSentinel, type RedisSentinelHandle } from '../support/redis-sentinel.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SNIPPETS = 'examples/snippets';
/** Far longer than any snippet needs; past it the child is killed (its own PID) and the test fails. */
const RUN_TIMEOUT_MS = 30_000;
const CODE_LANGUAGES = /^(ts|js|typescript|javascript|tsx|jsx|mjs|cjs|mts|cts)$/;

/** The snippet files that run: every program of examples/snippets/ (its support/ folder holds only what they share). */
function snippetFiles(): string[] {
  return readdirSync(join(REPO, SNIPPETS))
    .filter((file) => /\.(ts|cts|mts|js|cjs|mjs)$/.test(file) && !file.endsWith('.d.ts'))
    .sort();
}

interface Run {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, timeout = RUN_TIMEOUT_MS): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: REPO, env, timeout, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ exitCode: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('the code blocks of the README and docs/', function () {
  this.timeout(120_000);

  it('are each a file (embedme --verify: no block differs from its file)', async () => {
    const embedme = join(REPO, 'node_modules/embedme/dist/embedme.js');
    const { exitCode, stdout, stderr } = await run(process.execPath, [embedme, '--verify', '--source-root', '.', ...documentFiles()], process.env);
    expect(exitCode, `${stdout}\n${stderr}\nRun \`npm run docs:embed\` to write the files into the docs.`).to.equal(0);
  });

  it('name their file when they are code, and their language when they are not', () => {
    const problems: string[] = [];
    for (const block of documentFiles().flatMap(codeBlocks)) {
      const where = `${block.file}:${block.line}`;
      if (block.language === '') problems.push(`${where}: a block without a language (write \`text\`, \`sh\`, ... for a fragment)`);
      else if (CODE_LANGUAGES.test(block.language) && block.source === undefined) {
        problems.push(
          `${where}: a ${block.language} block that names no file: put it in ${SNIPPETS}/ and embed it with <!-- embedme ${SNIPPETS}/<name>.ts -->`,
        );
      } else if (block.source !== undefined && !existsSync(join(REPO, block.source.replace(/#L\d+-L\d+$/, '')))) {
        problems.push(`${where}: names ${block.source}, which does not exist`);
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it('embed a line range of a snippet exactly between its `// docs:begin` and `// docs:end` markers', () => {
    const problems: string[] = [];
    for (const block of documentFiles().flatMap(codeBlocks)) {
      const range = /^(examples\/snippets\/[^#]+)#L(\d+)-L(\d+)$/.exec(block.source ?? '');
      if (range === null) continue;
      const lines = readFileSync(join(REPO, range[1] ?? ''), 'utf8').split('\n');
      const [first, last] = [Number(range[2]), Number(range[3])];
      const begin = lines[first - 2]?.trim() ?? '';
      const end = lines[last]?.trim() ?? '';
      if (!begin.startsWith('// docs:begin') || end !== '// docs:end') {
        const markers = lines.flatMap((line, i) => (line.trim().startsWith('// docs:begin') ? [`${line.trim()} at L${i + 2}`] : []));
        problems.push(`${block.file}:${block.line}: ${block.source} is not a range between markers (${markers.join(', ')})`);
      }
    }
    expect(problems).to.deep.equal([]);
  });

  it('leave no snippet file unused', () => {
    const named = new Set(
      documentFiles()
        .flatMap(codeBlocks)
        .flatMap((block) => (block.source === undefined ? [] : [block.source.replace(/#L\d+-L\d+$/, '')])),
    );
    const unused = snippetFiles()
      .map((file) => `${SNIPPETS}/${file}`)
      .filter((path) => !named.has(path));
    expect(unused, 'snippet files no document embeds').to.deep.equal([]);
  });

  it('type-check with the strict settings (examples/snippets/tsconfig.json)', async () => {
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const { exitCode, stdout, stderr } = await run(process.execPath, [tsc, '-p', `${SNIPPETS}/tsconfig.json`, '--noEmit'], process.env, 110_000);
    expect(exitCode, `${stdout}\n${stderr}`).to.equal(0);
  });
});

describe('every snippet file runs against the services it names', function () {
  this.timeout(120_000);
  // edge-*.ts are a Next.js middleware and a Cloudflare Worker, modules that a runtime calls, not programs:
  // test/runtimes/edge-snippets.test.ts runs each as written in its runtime (edge-runtime, workerd).
  const files = snippetFiles().filter((file) => !file.startsWith('edge-'));
  const sources = new Map(files.map((file) => [file, readFileSync(join(REPO, SNIPPETS, file), 'utf8')]));
  const needs = (name: string): boolean => [...sources.values()].some((source) => source.includes(`process.env.${name}`));
  let server: RedisServer | undefined;
  let cluster: RedisClusterHandle | undefined;
  let sentinel: RedisSentinelHandle | undefined;

  before(async () => {
    // Servers of this test's own (not REDIS_URL's): each snippet starts on an empty Redis.
    server = await startRedisServer();
    if (needs('REDIS_CLUSTER_URL')) cluster = await startRedisCluster();
    if (needs('REDIS_SENTINEL_URL')) sentinel = await startRedisSentinel();
  });

  after(async () => {
    await Promise.allSettled([server?.stop(), cluster?.stop(), sentinel?.stop()]);
  });

  /** Empties every server a snippet may use, so that none sees another's keys. */
  async function flush(): Promise<void> {
    const urls = [server?.url, ...(cluster?.urls ?? []), ...(sentinel ? [`redis://${await sentinel.primary()}`] : [])];
    for (const url of urls) {
      if (url === undefined) continue;
      const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await client.connect();
        // On a cluster, a replica refuses writes: flush the masters only.
        const role = (await client.call('ROLE')) as [string];
        if (role[0] === 'master') await client.flushall();
      } finally {
        client.disconnect();
      }
    }
  }

  for (const file of files) {
    it(`${SNIPPETS}/${file}`, async () => {
      if (server === undefined) throw new Error('no redis-server');
      await flush();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        REDIS_URL: server.url,
        TSX_TSCONFIG_PATH: `${SNIPPETS}/tsconfig.json`,
        NO_COLOR: '1',
        PORT: '0', // a snippet that serves on PORT takes a free port
      };
      if (cluster) env.REDIS_CLUSTER_URL = cluster.urls[0];
      if (sentinel) env.REDIS_SENTINEL_URL = `redis://${sentinel.sentinelNodes[0]?.host}:${sentinel.sentinelNodes[0]?.port}`;
      const { exitCode, stdout, stderr } = await run(process.execPath, ['--import', 'tsx', `${SNIPPETS}/${file}`], env);
      expect(exitCode, `exited by itself with code 0 (null: killed at ${RUN_TIMEOUT_MS} ms)\n${stdout}\n${stderr}`).to.equal(0);
      const expected = join(REPO, SNIPPETS, file.replace(/\.[cm]?[jt]s$/, '.out.txt'));
      if (existsSync(expected)) expect(stdout).to.equal(readFileSync(expected, 'utf8'));
    });
  }
});
