// The library under Bun, as a user's code imports it: the packed package is
// installed in a throwaway project (see test/support/packed-package.ts), and
// the Bun binary of the `bun` dev dependency runs the behavioural contract
// (test/runtimes/bun/contract.ts: memory, and ioredis, iovalkey, node-redis 5
// and Valkey GLIDE on a redis-server it starts on loopback) with mocha's API,
// every import of src/index.js resolved to the installed package. Also: Bun's
// own RedisClient is told apart from the clients the library serves; and
// rolling-window-limiter/hono on Bun.serve, two Bun processes on one Redis.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { join } from 'node:path';
import { get, type Seen } from '../http/http-helpers.js';
import { startChild } from '../support/child-process.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { cleanEnv, REPO, run } from '../support/packed-package.js';
import { keyOf } from '../support/redis-keys.js';
import { useRedis, type UsedRedis } from '../support/redis-server.js';
import { useRuntimeProject, type RuntimeProject } from '../support/runtime-binary.js';
import {
  admissionsUnder,
  CHILD_LIMIT_MS,
  LIMIT,
  setClock,
  startServer,
  startServers,
  stopServers,
  THREE_PER_FOUR_SECONDS,
  WINDOW_MS,
  type ServerProcess,
} from '../http/hono/server-processes.js';

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

  it('passes the contract with the installed package: memory, ioredis, iovalkey, node-redis 5 and Valkey GLIDE (with batch: true), and refuses Bun’s RedisClient', async () => {
    const args = ['--preload', './test/runtimes/bun/built-package.ts', 'test/runtimes/bun/run-mocha.ts', 'test/runtimes/bun/contract.ts'];
    const { binary, directory } = project();
    const output = await run(binary.path, args, REPO, { env: cleanEnv({ RWL_CONSUMER_DIR: directory }), timeoutMs: 200_000 });
    const line = output.split('\n').find((candidate) => candidate.startsWith('RESULT '));
    expect(line, `the runner's closing line, in:\n${output.slice(-3000)}`).to.be.a('string');
    const result = JSON.parse((line as string).slice('RESULT '.length)) as BunResult;
    expect(result.runtime).to.equal(`bun ${binary.version}`);
    expect(result.library, 'the library came from the installed package').to.equal(
      join(directory, 'node_modules', 'rolling-window-limiter', 'dist', 'esm', 'index.js'),
    );
    expect(result).to.include({ failures: 0, pending: 0 });
    expect(result.passes).to.be.above(300);
    expect(result.suites).to.include.members([
      'RollingRateLimiter contract on the in-memory store',
      'RateLimiterStack contract on the in-memory store',
      'real Redis through ioredis 5 (standalone)',
      'real Redis through iovalkey (standalone)',
      'real Redis through node-redis 5 (standalone)',
      'real Redis through Valkey GLIDE 2 GlideClient (standalone)',
      'Bun’s built-in RedisClient',
    ]);
  });

  it('tells Bun’s RedisClient apart from ioredis, iovalkey and node-redis clients', async () => {
    const output = await run(project().binary.path, ['test/runtimes/bun/bun-client-detection.ts'], REPO);
    expect(JSON.parse(output)).to.deep.equal({ bun: true, ioredis: false, iovalkey: false, nodeRedis: false, object: false });
  });

  describeHonoOnBun(project);
});

/**
 * A server process's first line (Bun: test/runtimes/bun/hono-server.ts; Node: test/http/hono/hono-servers.ts): the
 * Hono app's ports on 127.0.0.1 and ::1; under Bun, where the library and its `/hono` entry were loaded from.
 */
interface Ports {
  readonly hono4: number;
  readonly hono6: number;
  readonly library?: string;
  readonly hono?: string;
}

type Server = ServerProcess<Ports>;

/**
 * rolling-window-limiter/hono on Bun.serve, keyed by `getConnInfo` of
 * 'hono/bun': two Bun processes share one redis-server, and a Node process
 * (@hono/node-server, the same middleware from src/) on a namespace of its
 * own answers every step too, so that each Bun answer is compared with
 * Node's. Every process's limiter clock is set by the test before each step.
 */
function describeHonoOnBun(project: () => RuntimeProject): void {
  describe('rolling-window-limiter/hono on Bun.serve, two Bun processes on one Redis', () => {
    const namespaces = uniqueNamespaces('bun-hono');
    let redis: UsedRedis | undefined;
    let reader: Redis | undefined;
    const servers: Server[] = [];
    let namespace = '';

    before(async function () {
      this.timeout(60_000);
      redis = await useRedis();
      reader = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      namespace = namespaces.next('site');
      const { binary, directory } = project();
      const args = [redis.url, namespace, String(WINDOW_MS), String(LIMIT)];
      const onBun = { command: [binary.path, '--preload', './test/runtimes/bun/built-package.ts'], env: cleanEnv({ RWL_CONSUMER_DIR: directory }) } as const;
      await startServers(
        [
          startServer<Ports>('A', startChild('../runtimes/bun/hono-server.ts', args, CHILD_LIMIT_MS, onBun)),
          startServer<Ports>('B', startChild('../runtimes/bun/hono-server.ts', args, CHILD_LIMIT_MS, onBun)),
          startServer<Ports>(
            'Node',
            startChild('../http/hono/hono-servers.ts', [redis.url, `${namespace}-node`, String(WINDOW_MS), String(LIMIT)], CHILD_LIMIT_MS),
          ),
        ],
        servers,
      );
    });

    after(async () => {
      await stopServers(servers);
      await reader?.quit();
      await redis?.stop();
    });

    const admissions = (id: string): Promise<number[]> => admissionsUnder(reader, keyOf(namespace, id));
    const named = (name: string): Server => {
      const server = servers.find((candidate) => candidate.name === name);
      if (server === undefined) throw new Error(`no server ${name}`);
      return server;
    };

    it('serves the installed package’s entries, and admits an exact rolling window across both processes, answering as on Node', async () => {
      const [a, b, node] = [named('A'), named('B'), named('Node')];
      const installed = join(project().directory, 'node_modules', 'rolling-window-limiter', 'dist', 'esm');
      for (const server of [a, b]) {
        expect(server.ports).to.include({ library: join(installed, 'index.js'), hono: join(installed, 'http', 'hono', 'hono-middleware.js') });
      }
      const schedule = THREE_PER_FOUR_SECONDS.map(([atMs, index, status]) => [atMs, index === 0 ? a : b, status] as const);
      const blocked: Seen[] = [];
      for (const [atMs, server, status] of schedule) {
        await setClock(servers, atMs);
        const onBun = await get(`http://127.0.0.1:${server.ports.hono4}/`);
        const onNode = await get(`http://127.0.0.1:${node.ports.hono4}/`);
        expect(onBun.status, `${server.name} at ${atMs} ms`).to.equal(status);
        if (status === 429) blocked.push(onBun);
        else expect(onBun.contentType, `c.text’s own, ${server.name} at ${atMs} ms`).to.match(/^text\/plain; ?charset=utf-8$/i);
        // A 200's content type is the runtime's default for c.text (spelled differently by each), a 429's the middleware's.
        const answer = (seen: Seen): Seen => (seen.status === 200 ? { ...seen, contentType: null } : seen);
        expect(answer(onBun), `as on Node, ${server.name} at ${atMs} ms`).to.deep.equal(answer(onNode));
      }
      expect(
        blocked.map((seen) => seen.headers['Retry-After']),
        'waits: 1 µs, then 2 s twice, rounded up',
      ).to.deep.equal(['1', '2', '2']);
      expect(blocked[1]?.headers).to.deep.equal({ 'RateLimit-Policy': '"api";q=3;w=4', RateLimit: '"api";r=0;t=2', 'Retry-After': '2' });
      expect(JSON.parse(blocked[1]?.body ?? '')).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 2 });
      // The store holds the admitted requests only (countBlocked: false), at the clock's times, under the client IP:
      // those of the window, and the two of 2 s kept `timeout` (2 s) longer for calls in flight.
      expect(await admissions('127.0.0.1')).to.deep.equal([2_000, 2_000, 4_000, 6_000, 6_000]);
    });

    it('keys a client on ::1 by its /56 through getConnInfo of hono/bun', async () => {
      const [a, b] = [named('A'), named('B')];
      await setClock(servers, 60_000);
      const seen = [];
      for (const server of [a, b, a, b]) seen.push((await get(`http://[::1]:${server.ports.hono6}/`)).status);
      expect(seen).to.deep.equal([200, 200, 200, 429]);
      expect(await admissions('::/56')).to.deep.equal([60_000, 60_000, 60_000]);
    });
  });
}
