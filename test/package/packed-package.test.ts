// The package as users get it. `npm pack` (whose `prepack` builds dist/) makes
// the tarball; throwaway projects in temp directories install it offline
// (`npm install --offline <tarball>`: it has no dependencies) and use it:
//   - a CommonJS project (require) and an ES module project (import): a real
//     in-memory limit, `rolling-window-limiter/express` limiting real HTTP
//     requests on node:http, with Express not installed, and the stores of
//     `rolling-window-limiter/express-rate-limit` and `/fastify` counting in
//     memory without either library installed, and `/hono` making its
//     middleware (and refusing one without a key) with Hono not installed;
//   - TypeScript projects with `moduleResolution: node16` (an ES module and a
//     .cts CommonJS file) and `moduleResolution: bundler`: type-checked by this
//     repository's tsc against the installed .d.ts files (skipLibCheck off),
//     including test/types/public-api.ts rewritten to import the package by
//     name, then compiled and run, with a Hono app limited by `/hono`.
// Also: the tarball holds dist/esm and dist/cjs (every file package.json names
// among them; no maps, tests or build info), README.md, CHANGELOG.md, LICENSE
// and package.json, and nothing else; its version is the CHANGELOG's newest
// release, under an empty [Unreleased]. Temp directories are removed afterwards.

import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { installedProject, packedTarball, REPO, run } from '../support/packed-package.js';

const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The file names in a .tgz made by `npm pack` (ustar, with pax headers for long names). */
function tarballEntries(file: string): string[] {
  const tar = gunzipSync(readFileSync(file));
  const names: string[] = [];
  let paxPath: string | undefined;
  for (let offset = 0; offset + 512 <= tar.length;) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start: number, length: number): string => header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const body = tar.subarray(offset + 512, offset + 512 + size);
    if (type === 'x') {
      paxPath = /\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1];
    } else {
      const prefix = field(345, 155);
      const name = paxPath ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
      if (type === '0' || type === '') names.push(name);
      paxPath = undefined;
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return names.sort();
}

/** What every JavaScript consumer runs: two attempts in memory, then two HTTP requests through the middleware. */
function consumerScript(load: string): string {
  return `${load}
const { createServer } = http;

async function main() {
  const limiter = new RollingRateLimiter({ interval: 60_000, maxInInterval: 1 });
  const first = await limiter.limit('user');
  const second = await limiter.limitWithInfo('user');

  const app = rateLimit({ limiter: new RollingRateLimiter({ namespace: 'http', interval: 60_000, maxInInterval: 1 }) });
  const server = createServer((req, res) =>
    app(req, res, (error) => {
      res.statusCode = error ? 500 : 200;
      res.end(error ? String(error) : 'ok');
    }),
  );
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = 'http://127.0.0.1:' + server.address().port + '/';
  const responses = [];
  for (let i = 0; i < 2; i++) {
    const response = await fetch(url);
    responses.push({ status: response.status, policy: response.headers.get('ratelimit-policy'), retryAfter: response.headers.get('retry-after') });
  }
  server.close();
  const store = new RollingWindowStore();
  store.init({ windowMs: 60_000, limit: 1 });
  const hits = [(await store.increment('ip')).totalHits, (await store.increment('ip')).totalHits];
  const FastifyStore = rollingWindowStore();
  const fastifyHits = await new Promise((resolve, reject) => new FastifyStore({}).incr('ip', (error, result) => (error ? reject(error) : resolve(result.current)), 60_000, 1));
  const hono = { middleware: typeof honoRateLimit({ limiter, key: () => 'k' }), refused: false };
  try {
    honoRateLimit({ limiter });
  } catch (error) {
    hono.refused = error instanceof TypeError && /needs \`key\`.*\`connInfo\`/.test(error.message);
  }
  console.log(JSON.stringify({ first, second: second.blocked, wait: second.millisecondsUntilAllowed, responses, isError: typeof isRateLimiterError, hits, fastifyHits, hono }));
}
main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;
}

/** What the `moduleResolution: node` consumer compiles: every subpath, typed. */
const TYPESCRIPT_NODE10 = `import { rateLimit } from 'rolling-window-limiter/express';
import { RollingWindowStore, type ClientRateLimitInfo } from 'rolling-window-limiter/express-rate-limit';
import { rollingWindowStore, type RollingWindowFastifyStoreClass } from 'rolling-window-limiter/fastify';
import { rateLimit as honoRateLimit } from 'rolling-window-limiter/hono';

const store: RollingWindowStore = new RollingWindowStore({ prefix: 'x:' });
const Fastify: RollingWindowFastifyStoreClass = rollingWindowStore();
const info: ClientRateLimitInfo | undefined = undefined;
void info;
console.log(JSON.stringify({ middleware: typeof rateLimit, prefix: store.prefix, fastify: typeof Fastify, hono: typeof honoRateLimit }));
`;

/** What the TypeScript consumers run (their types are the point; this proves the emitted code runs too). */
const TYPESCRIPT_MAIN = `import { RateLimiterStack, RollingRateLimiter, type StackRateLimitInfo } from 'rolling-window-limiter';
import { createRateLimitHeaders, retryAfterSeconds } from 'rolling-window-limiter/express';
import { RollingWindowStore, type ClientRateLimitInfo } from 'rolling-window-limiter/express-rate-limit';
import { rollingWindowStore, type RollingWindowFastifyStoreClass } from 'rolling-window-limiter/fastify';
import { rateLimit as honoRateLimit } from 'rolling-window-limiter/hono';
import { Hono } from 'hono';

const ercStore = new RollingWindowStore({ prefix: 'api:' });
ercStore.init({ windowMs: 60_000, limit: 5 });
const counted: ClientRateLimitInfo = await ercStore.increment('ip');
const FastifyStore: RollingWindowFastifyStoreClass = rollingWindowStore({ namespace: 'api:' });
void new FastifyStore({});
export function neverCalled(): RollingRateLimiter {
  // @ts-expect-error: a duration string carries its unit
  return new RollingRateLimiter({ interval: '60', maxInInterval: 1 });
}
void new RollingRateLimiter({ interval: '1m', maxInInterval: 1, minDifference: '500ms' });
void counted;

const perMinute = new RollingRateLimiter({ namespace: 'minute', interval: 60_000, maxInInterval: 2 });
const every3s = new RollingRateLimiter({ namespace: '3s', interval: 3_000, maxInInterval: 1 });
const stack = new RateLimiterStack([perMinute, every3s]);
const blocked: boolean = await perMinute.limit('user');
const info: StackRateLimitInfo = await stack.limitWithInfo('other');
const headers: Record<string, string> = createRateLimitHeaders(stack)(info);
const app = new Hono().use(honoRateLimit({ limiter: every3s, key: () => 'hono' }));
app.get('/', (c) => c.text(String(c.get('rateLimit').actionsRemaining)));
const hono = [(await app.request('/')).status, (await app.request('/')).status];
console.log(JSON.stringify({ blocked, stackBlocked: info.blocked, tiers: info.tiers.length, headers, retry: retryAfterSeconds(1), hono }));
`;

/** A CommonJS TypeScript file of the node16 project: it resolves the package's `require` types. */
const TYPESCRIPT_CTS = `import { RollingRateLimiter, isRateLimiterError, type RateLimitInfo } from 'rolling-window-limiter';
import { rateLimit } from 'rolling-window-limiter/express';
import { RollingWindowStore } from 'rolling-window-limiter/express-rate-limit';
import { rollingWindowStore } from 'rolling-window-limiter/fastify';

void new RollingWindowStore();
void rollingWindowStore();

const limiter = new RollingRateLimiter({ interval: 1_000, maxInInterval: 1 });
const attempt: Promise<RateLimitInfo> = limiter.limitWithInfo('user');
// @ts-expect-error: limit resolves a boolean
const wrong: Promise<string> = limiter.limit('user');
void wrong;
attempt.then((info) => console.log(JSON.stringify({ blocked: info.blocked, middleware: typeof rateLimit({ limiter }), guard: isRateLimiterError(new Error('x')) })));
`;

describe('the packed package, installed in throwaway projects', function () {
  this.timeout(180_000);

  let root = '';
  let tarball = '';
  const links: string[] = [];

  before(async function () {
    root = mkdtempSync(join(tmpdir(), 'rwl-packed-'));
    tarball = await packedTarball();
    setups = startSetups();
  });

  after(async () => {
    if (setups) await Promise.allSettled(Object.values(setups)); // nothing still writes in the temp directory
    for (const link of links) if (existsSync(link)) unlinkSync(link); // the links to this repo's @types, before anything is removed
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** A project directory with a package.json, the tarball installed offline, and optionally this repo's @types linked in. */
  async function project(name: string, manifest: object, files: Record<string, string>, { types = false } = {}): Promise<string> {
    const directory = await installedProject(root, name, manifest, tarball);
    if (types) {
      // @types/node, @types/express and Hono as a user's project would have them, without installing anything.
      for (const name of ['@types', 'hono']) {
        const link = join(directory, 'node_modules', name);
        symlinkSync(join(REPO, 'node_modules', name), link, 'dir');
        links.push(link);
      }
    }
    for (const [file, text] of Object.entries(files)) writeFileSync(join(directory, file), text);
    return directory;
  }

  function expectConsumerOutput(output: string): void {
    const result = JSON.parse(output) as {
      first: boolean;
      second: boolean;
      wait: number;
      responses: { status: number; policy: string | null; retryAfter: string | null }[];
      isError: string;
      hits: number[];
      fastifyHits: number;
      hono: { middleware: string; refused: boolean };
    };
    expect(result.hits, 'the express-rate-limit store counts').to.deep.equal([1, 2]);
    expect(result.fastifyHits, 'the @fastify/rate-limit store counts').to.equal(1);
    expect(result.hono, 'the Hono middleware is made, and refused without a key').to.deep.equal({ middleware: 'function', refused: true });
    expect(result.first, 'first attempt allowed').to.equal(false);
    expect(result.second, 'second attempt blocked').to.equal(true);
    expect(result.wait).to.be.within(59_000, 60_000);
    expect(result.isError).to.equal('function');
    expect(result.responses.map((response) => response.status)).to.deep.equal([200, 429]);
    expect(result.responses[0]?.policy).to.equal('"http";q=1;w=60');
    expect(result.responses[1]?.retryAfter).to.match(/^(59|60)$/);
  }

  /** The type tests of test/types/public-api.ts, importing the installed package instead of src/. */
  function publicApiTypeTests(): string {
    const source = readFileSync(join(REPO, 'test/types/public-api.ts'), 'utf8');
    const rewritten = source
      .replace("from '../../src/index.js'", "from 'rolling-window-limiter'")
      .replace("from '../../src/http/express/express-middleware.js'", "from 'rolling-window-limiter/express'");
    expect(rewritten, 'both imports of test/types/public-api.ts are rewritten').to.not.match(/\.\.\/\.\.\/src\//);
    return rewritten;
  }

  const tsconfig = (compilerOptions: object, include: string[]): string =>
    JSON.stringify({
      compilerOptions: { target: 'ES2022', lib: ['ES2023'], strict: true, skipLibCheck: false, types: ['node'], outDir: 'out', ...compilerOptions },
      include,
    });

  it('holds dist/, README.md, CHANGELOG.md, LICENSE and package.json, and nothing else', () => {
    const entries = tarballEntries(tarball);
    const outside = entries.filter((entry) => !entry.startsWith('package/dist/'));
    expect(outside).to.deep.equal(['package/CHANGELOG.md', 'package/LICENSE', 'package/README.md', 'package/package.json']);
    const entryFiles = [
      'index',
      'http/express/express-middleware',
      'http/stores/express-rate-limit-store',
      'http/stores/fastify-store',
      'http/hono/hono-middleware',
      'integrations/nestjs/index',
      'integrations/otel/index',
    ];
    for (const file of entryFiles.flatMap((entry) => [`${entry}.js`, `${entry}.d.ts`])) {
      expect(entries, `dist/esm/${file}`).to.include(`package/dist/esm/${file}`);
      expect(entries, `dist/cjs/${file}`).to.include(`package/dist/cjs/${file}`);
    }
    // Every file package.json points at (exports, typesVersions, main, module, types) is in the tarball.
    const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as Record<string, unknown>;
    const targets = (value: unknown): string[] =>
      typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(targets) : [];
    const named = targets([manifest['exports'], manifest['typesVersions'], manifest['main'], manifest['module'], manifest['types']]);
    expect(named.length).to.be.above(30);
    for (const file of named) expect(entries, file).to.include(`package/${file.replace(/^\.\//, '')}`);
    expect(entries).to.include('package/dist/cjs/package.json');
    expect(
      entries.filter((entry) => !/^package\/dist\/(esm|cjs)\//.test(entry) && entry.startsWith('package/dist/')),
      'only dist/esm and dist/cjs',
    ).to.deep.equal([]);
    expect(entries.filter((entry) => /\.test\.|\/test\/|\/src\/|\/bench\/|\/examples\/|\.map$|\.tsbuildinfo$|\.tgz$/.test(entry))).to.deep.equal([]);
  });

  it("is the CHANGELOG's newest release, with an empty Unreleased section on top", async () => {
    // Read from an installed copy: what a user finds in node_modules.
    const installed = join(await setup('cjs'), 'node_modules', 'rolling-window-limiter');
    const { version } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string };
    const changelog = readFileSync(join(installed, 'CHANGELOG.md'), 'utf8');
    const headings = [...changelog.matchAll(/^## (.*)$/gm)].map((match) => match[1]);
    expect(headings[0], 'the first heading').to.equal('[Unreleased]');
    expect(
      changelog.slice(changelog.indexOf('## [Unreleased]') + '## [Unreleased]'.length, changelog.indexOf(`## ${headings[1]}`)).trim(),
      'nothing unreleased',
    ).to.equal('');
    const releases = headings.slice(1).map((heading) => /^\[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$/.exec(heading ?? ''));
    expect(releases.every(Boolean), `release headings read "## [x.y.z] - YYYY-MM-DD": ${headings.join(' | ')}`).to.equal(true);
    expect(`${releases[0]?.[1]}.${releases[0]?.[2]}.${releases[0]?.[3]}`, "package.json's version").to.equal(version);
    const order = releases.map((release) => [Number(release?.[1]), Number(release?.[2]), Number(release?.[3])] as const);
    for (let i = 1; i < order.length; i++) {
      const [newer, older] = [order[i - 1], order[i]];
      const newerFirst = newer && older && (newer[0] - older[0] || newer[1] - older[1] || newer[2] - older[2]) > 0;
      expect(newerFirst, `${headings[i]} comes after ${headings[i + 1]}`).to.equal(true);
      expect((releases[i - 1]?.[4] ?? '') >= (releases[i]?.[4] ?? ''), `${headings[i]} is dated no earlier than ${headings[i + 1]}`).to.equal(true);
    }
  });

  /**
   * The four projects, installed (and the TypeScript ones compiled) side by side: the installs and the type
   * checks are most of the time this takes. Each test awaits its own, so a failure is reported where it belongs.
   */
  type Setups = Record<'cjs' | 'esm' | 'node16' | 'bundler' | 'node10', Promise<string>>;
  let setups: Setups | undefined;
  function setup(name: keyof Setups): Promise<string> {
    if (setups === undefined) throw new Error('the projects were not set up: see the before hook');
    return setups[name];
  }
  function startSetups(): Setups {
    const compiled = async (installed: Promise<string>): Promise<string> => {
      const directory = await installed;
      await run(process.execPath, [TSC, '-p', 'tsconfig.json'], directory);
      return directory;
    };
    const started = {
      cjs: project(
        'cjs-consumer',
        { type: 'commonjs' },
        {
          'index.js': consumerScript(
            "const http = require('node:http');\nconst { RollingRateLimiter, isRateLimiterError } = require('rolling-window-limiter');\nconst { rateLimit } = require('rolling-window-limiter/express');\n" +
              "const { RollingWindowStore } = require('rolling-window-limiter/express-rate-limit');\nconst { rollingWindowStore } = require('rolling-window-limiter/fastify');\nconst { rateLimit: honoRateLimit } = require('rolling-window-limiter/hono');",
          ),
        },
      ),
      esm: project(
        'esm-consumer',
        { type: 'module' },
        {
          'index.js': consumerScript(
            "import http from 'node:http';\nimport { RollingRateLimiter, isRateLimiterError } from 'rolling-window-limiter';\nimport { rateLimit } from 'rolling-window-limiter/express';\n" +
              "import { RollingWindowStore } from 'rolling-window-limiter/express-rate-limit';\nimport { rollingWindowStore } from 'rolling-window-limiter/fastify';\nimport { rateLimit as honoRateLimit } from 'rolling-window-limiter/hono';",
          ),
        },
      ),
      node16: compiled(
        project(
          'ts-node16-consumer',
          { type: 'module' },
          {
            'tsconfig.json': tsconfig({ module: 'node16', moduleResolution: 'node16' }, ['main.ts', 'legacy.cts', 'public-api.ts']),
            'main.ts': TYPESCRIPT_MAIN,
            'legacy.cts': TYPESCRIPT_CTS,
            'public-api.ts': publicApiTypeTests(),
          },
          { types: true },
        ),
      ),
      bundler: compiled(
        project(
          'ts-bundler-consumer',
          { type: 'module' },
          {
            'tsconfig.json': tsconfig({ module: 'esnext', moduleResolution: 'bundler' }, ['main.ts', 'public-api.ts']),
            'main.ts': TYPESCRIPT_MAIN,
            'public-api.ts': publicApiTypeTests(),
          },
          { types: true },
        ),
      ),
      // The classic `moduleResolution: node` reads no `exports`: the subpaths' types come from `typesVersions`.
      node10: compiled(
        project(
          'ts-node10-consumer',
          { type: 'commonjs' },
          {
            'tsconfig.json': tsconfig({ module: 'commonjs', moduleResolution: 'node', ignoreDeprecations: '6.0' }, ['main.ts']),
            'main.ts': TYPESCRIPT_NODE10,
          },
          { types: true },
        ),
      ),
    };
    // Reported by the test that awaits each one, not as an unhandled rejection meanwhile.
    for (const promise of Object.values(started)) promise.catch(() => {});
    return started;
  }

  it('works from CommonJS (require)', async () => {
    const directory = await setup('cjs');
    expect(existsSync(join(directory, 'node_modules', 'express')), 'Express is not installed').to.equal(false);
    expect(existsSync(join(directory, 'node_modules', 'hono')), 'Hono is not installed').to.equal(false);
    expectConsumerOutput(await run(process.execPath, ['index.js'], directory));
  });

  it('works from an ES module (import)', async () => {
    expectConsumerOutput(await run(process.execPath, ['index.js'], await setup('esm')));
  });

  it('type-checks and runs in TypeScript with moduleResolution node16 (ESM and a .cts file)', async () => {
    const directory = await setup('node16');
    const main = JSON.parse(await run(process.execPath, ['out/main.js'], directory)) as {
      blocked: boolean;
      stackBlocked: boolean;
      tiers: number;
      headers: Record<string, string>;
    };
    expect(main).to.deep.include({ blocked: false, stackBlocked: false, tiers: 2, hono: [200, 429] });
    expect(main.headers['RateLimit-Policy']).to.equal('"minute";q=2;w=60, "3s";q=1;w=3');
    expect(JSON.parse(await run(process.execPath, ['out/legacy.cjs'], directory))).to.deep.equal({ blocked: false, middleware: 'function', guard: false });
  });

  it('type-checks and runs in TypeScript with moduleResolution node (node10), through typesVersions', async () => {
    expect(JSON.parse(await run(process.execPath, ['out/main.js'], await setup('node10')))).to.deep.equal({
      middleware: 'function',
      prefix: 'x:',
      fastify: 'function',
      hono: 'function',
    });
  });

  it('type-checks and runs in TypeScript with moduleResolution bundler', async () => {
    const main = JSON.parse(await run(process.execPath, ['out/main.js'], await setup('bundler'))) as { blocked: boolean; tiers: number };
    expect(main).to.deep.include({ blocked: false, tiers: 2, hono: [200, 429] });
  });
});
