// The docs' Next.js snippets in a real Next.js app, built and started as a
// user's is: examples/snippets/edge-nextjs-proxy.ts as Next.js 16's proxy.ts
// (on Node.js) and examples/snippets/edge-nextjs-middleware.ts as
// middleware.ts (on the edge runtime, in Next.js's own sandbox, which makes
// every Node.js API it lacks throw). The app (test/runtimes/next-app/) is
// copied to a temp directory whose node_modules links to this repository's
// next, react, react-dom and @upstash/redis and holds the packed package
// (test/support/packed-package.ts); `next build`, then `next start` on a free
// loopback port, with @upstash/redis pointed at the Upstash-REST-compatible
// test endpoint on 127.0.0.1. Telemetry is off, and the app loads no font or
// anything else from the network. The Redis behind the endpoint evicts keys
// (allkeys-lru), so that the limiter warns at its first call: on Node.js with
// process.emitWarning, which Next.js's edge runtime has throw, and where that
// must not become an unhandled rejection.

import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreeLoopbackPort, LOOPBACK_HOST } from '../support/free-port.js';
import { cleanEnv, packedTarball, REPO, run } from '../support/packed-package.js';
import { startUpstashRestEndpoint, type UpstashRestEndpoint } from '../support/upstash-rest-endpoint.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { versionOf } from './web/runtimes.js';

const FIXTURE = join(import.meta.dirname, 'next-app');
const SNIPPETS = join(REPO, 'examples', 'snippets');
const NEXT = join(REPO, 'node_modules', 'next', 'dist', 'bin', 'next');
/** What the app's node_modules links to in this repository's. */
const LINKED = ['next', 'react', 'react-dom', '@upstash/redis'];
const BUILD_TIMEOUT_MS = 180_000;
const READY_TIMEOUT_MS = 30_000;

/** The environment of `next build` and `next start`: no telemetry, NODE_ENV left to Next.js. */
function nextEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = cleanEnv({ NEXT_TELEMETRY_DISABLED: '1', ...extra });
  delete env.NODE_ENV;
  delete env.NODE_OPTIONS;
  return env;
}

/** Makes the app in a temp directory with `snippet` as `file`; returns its directory. */
function makeApp(root: string, name: string, snippet: string, file: string, libraryTarball: string): Promise<string> {
  const app = join(root, name);
  cpSync(FIXTURE, app, { recursive: true });
  cpSync(join(SNIPPETS, snippet), join(app, file));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }, null, 2));
  for (const name of LINKED) {
    mkdirSync(join(app, 'node_modules', name, '..'), { recursive: true });
    symlinkSync(join(REPO, 'node_modules', name), join(app, 'node_modules', name), 'dir');
  }
  const library = join(app, 'node_modules', 'rolling-window-limiter');
  mkdirSync(library);
  return run('tar', ['-xzf', libraryTarball, '-C', library, '--strip-components=1'], app).then(() => app);
}

/** A started `next start`, and what it printed. */
interface NextServer {
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `next start` in `app` on a free loopback port, answering once it answers HTTP. */
async function startNext(app: string, env: NodeJS.ProcessEnv): Promise<NextServer> {
  const port = await findFreeLoopbackPort();
  // Its own process group, so that stop() ends whatever it started too.
  const child: ChildProcess = spawn(process.execPath, [NEXT, 'start', '-H', LOOPBACK_HOST, '-p', String(port)], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));
  const server: NextServer = {
    url: `http://${LOOPBACK_HOST}:${port}`,
    output: () => printed,
    stop: async () => {
      if (!running || child.pid === undefined) return;
      process.kill(-child.pid, 'SIGTERM');
      const timer = setTimeout(() => running && child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (!running) throw new Error(`next start exited:\n${printed}`);
    try {
      // Outside the matcher (/api/:path*): not rate-limited.
      await (await fetch(`${server.url}/`, { signal: AbortSignal.timeout(2_000) })).arrayBuffer();
      return server;
    } catch (error) {
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`next start did not answer within ${READY_TIMEOUT_MS} ms:\n${printed}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

interface Answer {
  readonly status: number;
  readonly remaining: string | null;
  readonly retryAfter: string | null;
  readonly body: string;
}

/** What the app answers the `n`th request of a client in a window of 5: the route's JSON, or the snippet's 429. */
const expected = (n: number): Answer =>
  n < 5
    ? { status: 200, remaining: String(4 - n), retryAfter: null, body: JSON.stringify({ hello: 'world' }) }
    : { status: 429, remaining: null, retryAfter: '10', body: JSON.stringify({ error: 'rate_limited', retryAfter: 10 }) };

/** Orders answers by status, then what remains, so that concurrent requests of one client compare as a set. */
const sorted = (answers: readonly Answer[]): Answer[] => [...answers].sort((a, b) => a.status - b.status || Number(b.remaining) - Number(a.remaining));

describe(`the Next.js snippets in a real Next.js ${versionOf('next')} app (next build, next start)`, function () {
  this.timeout(BUILD_TIMEOUT_MS + 60_000);
  let redis: RedisServer | undefined;
  let endpoint: UpstashRestEndpoint | undefined;
  let root: string | undefined;
  let tarball: string | undefined;

  before(async function () {
    this.timeout(240_000);
    root = mkdtempSync(join(tmpdir(), 'rwl-next-'));
    redis = await startRedisServer({ extraArgs: ['--maxmemory-policy', 'allkeys-lru'] });
    endpoint = await startUpstashRestEndpoint({ redisUrl: redis.url });
    tarball = await packedTarball();
  });

  after(async () => {
    await endpoint?.close();
    await redis?.stop();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  const cases = [
    { snippet: 'edge-nextjs-proxy.ts', file: 'proxy.ts', runtime: 'Node.js', ips: { one: '203.0.113.30', many: '198.51.100.30', others: '192.0.2' } },
    {
      snippet: 'edge-nextjs-middleware.ts',
      file: 'middleware.ts',
      runtime: 'the edge runtime',
      ips: { one: '203.0.113.40', many: '198.51.100.40', others: '192.0.3' },
    },
  ] as const;

  for (const { snippet, file, runtime, ips } of cases) {
    it(`${snippet} as ${file}, on ${runtime}: 5 per 10 s per client IP, sequential and 20 concurrent requests, none a 500`, async () => {
      const app = await makeApp(root!, file.replace('.ts', ''), snippet, file, tarball!);
      const buildStarted = performance.now();
      await run(process.execPath, [NEXT, 'build'], app, { env: nextEnv(), timeoutMs: BUILD_TIMEOUT_MS });
      const buildMs = performance.now() - buildStarted;

      // The file runs where the snippet says: Next.js lists an edge middleware in middleware-manifest.json, a Node.js one in functions-config-manifest.json.
      const manifest = (name: string): Record<string, Record<string, unknown>> =>
        JSON.parse(readFileSync(join(app, '.next', 'server', name), 'utf8')) as Record<string, Record<string, unknown>>;
      const onEdge = Object.keys(manifest('middleware-manifest.json').middleware ?? {});
      const onNode = manifest('functions-config-manifest.json').functions?.['/_middleware'] as { runtime?: string } | undefined;
      if (file === 'middleware.ts') expect({ onEdge, onNode: onNode?.runtime }, 'where it runs').to.deep.equal({ onEdge: ['/'], onNode: undefined });
      else expect({ onEdge, onNode: onNode?.runtime }, 'where it runs').to.deep.equal({ onEdge: [], onNode: 'nodejs' });

      const server = await startNext(app, nextEnv({ UPSTASH_REDIS_REST_URL: endpoint!.url, UPSTASH_REDIS_REST_TOKEN: endpoint!.token }));
      const requestsStarted = performance.now();
      try {
        const request = async (ip: string): Promise<Answer> => {
          const response = await fetch(`${server.url}/api/hello`, { headers: { 'x-forwarded-for': `${ip}, 10.0.0.1` }, signal: AbortSignal.timeout(10_000) });
          const header = (name: string): string | null => response.headers.get(name);
          return { status: response.status, remaining: header('X-RateLimit-Remaining'), retryAfter: header('Retry-After'), body: await response.text() };
        };
        const says = (what: string): string => `${what}; next start printed:\n${server.output().slice(-4000)}`;

        const sequential: Answer[] = [];
        for (let i = 0; i < 6; i += 1) sequential.push(await request(ips.one));
        expect(sequential, says('sequential requests of one client')).to.deep.equal([0, 1, 2, 3, 4, 5].map(expected));

        // 20 at once: 8 from one client (5 admitted, whichever 5), one from each of 12 others.
        const others = Array.from({ length: 12 }, (_, i) => `${ips.others}.${i + 1}`);
        const concurrent = await Promise.all([...Array.from({ length: 8 }, () => ips.many), ...others].map(request));
        expect(sorted(concurrent.slice(0, 8)), says('8 concurrent requests of one client')).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7].map(expected));
        expect(concurrent.slice(8), says('concurrent requests of 12 other clients')).to.deep.equal(others.map(() => expected(0)));

        // Every concurrent decision reached Redis.
        expect(await request(ips.many), says('the client of 8, once more')).to.deep.equal(expected(8));
        expect(await request(others[0] as string), says('one of the 12, once more')).to.deep.equal(expected(1));
        // The limiter's warning about the evicting Redis: printed on Node.js, and nowhere a Node.js API the edge runtime lacks.
        expect(server.output(), says('the warning')).not.to.match(/unhandledRejection|A Node\.js API is used/);
        if (file === 'proxy.ts') expect(server.output(), says('the warning')).to.include('RATE_LIMITER_EVICTING_POLICY');
        console.log(
          `      next build ${(buildMs / 1000).toFixed(1)} s; 28 requests answered in ${((performance.now() - requestsStarted) / 1000).toFixed(1)} s`,
        );
      } finally {
        await server.stop();
      }
    });
  }
});
