// The three HTTP integrations over real HTTP: this library's Express
// middleware, and its stores for express-rate-limit and @fastify/rate-limit.
// For each, two server processes (test/http/stores/store-server.ts) share one real
// redis-server, and a client sends a short schedule to both in turn. The
// schedule tells an exact rolling window from a fixed one: after the first
// request of a window has aged out, but not the ones after it, a fixed window
// has started afresh and lets two requests through, the rolling window only
// one. Each run prints its statuses and rate-limit headers.

import { fork, type ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
import { get, type Seen } from '../http-helpers.js';
import type { StoreServerMessage } from './store-server.js';

const SERVER_PATH = fileURLToPath(new URL('./store-server.ts', import.meta.url));
const WINDOW_MS = 4_000;
const LIMIT = 3;
/** Longest wait for a server process to listen. */
const START_TIMEOUT_MS = 30_000;
/** Grace given to a server to exit by itself before it is SIGKILLed. */
const EXIT_GRACE_MS = 3_000;

const namespaces = uniqueNamespaces('http-store');

/** Every server forked here and not yet exited; SIGKILLed by PID if the test process exits first. */
const liveServers = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of liveServers) child.kill('SIGKILL'); // that child's own PID
});

interface StoreServer {
  readonly url: string;
  stop(): Promise<void>;
}

type Kind = 'express' | 'express-rate-limit' | 'fastify';

async function startServer(kind: Kind, redisUrl: string, prefix: string): Promise<StoreServer> {
  const child = fork(SERVER_PATH, [kind, redisUrl, prefix, String(WINDOW_MS), String(LIMIT)], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  liveServers.add(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      liveServers.delete(child);
      resolve();
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} server ${child.pid} did not listen within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    child.on('message', (message: StoreServerMessage) => {
      clearTimeout(timer);
      if (message.type === 'listening') resolve(message.port);
      else reject(new Error(`${kind} server ${child.pid}: ${message.error}`));
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${kind} server ${child.pid} exited before it listened`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url: `http://127.0.0.1:${port}/`, stop };
}

/** One line of the printed schedule. */
function line(at: number, server: string, seen: Seen): string {
  const headers = Object.entries(seen.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join(' | ');
  return `    ${(at / 1000).toFixed(1).padStart(4)} s  ${server}  ${seen.status}  ${headers}`;
}

const TITLES: Record<Kind, string> = {
  express: 'rolling-window-limiter/express',
  'express-rate-limit': 'express-rate-limit with RollingWindowStore',
  fastify: '@fastify/rate-limit with rollingWindowStore',
};

for (const kind of ['express', 'express-rate-limit', 'fastify'] as const) {
  describe(`${TITLES[kind]}, two processes on one Redis`, function () {
    this.timeout(60_000);
    let redis: UsedRedis | undefined;
    let servers: StoreServer[] = [];

    before(async () => {
      redis = await useRedis();
      const prefix = `${namespaces.next(kind)}:`;
      servers = await Promise.all([startServer(kind, redis.url, prefix), startServer(kind, redis.url, prefix)]);
    });

    after(async () => {
      await Promise.allSettled(servers.map((server) => server.stop()));
      await redis?.stop();
    });

    it('counts an exact rolling window across both processes', async () => {
      const [a, b] = servers;
      if (a === undefined || b === undefined) throw new Error('no servers');
      const client = { 'x-forwarded-for': '198.51.100.20' };
      const printed: string[] = [];
      const started = performance.now();
      const send = async (server: StoreServer, name: string): Promise<Seen> => {
        const seen = await get(server.url, client);
        printed.push(line(performance.now() - started, name, seen));
        return seen;
      };
      const sleepUntil = async (at: number): Promise<void> => {
        const left = at - (performance.now() - started);
        if (left > 0) await delay(left);
      };

      const first = await send(a, 'A');
      const firstDone = performance.now() - started; // the first hit was recorded before this
      await sleepUntil(firstDone + WINDOW_MS / 2);
      const second = await send(b, 'B');
      const third = await send(a, 'A');
      // The first hit has left the window; the second and third have not (they leave 2 s later).
      await sleepUntil(firstDone + WINDOW_MS + 400);
      const fourth = await send(b, 'B');
      const fifth = await send(a, 'A');
      console.log(`      ${TITLES[kind]}, ${LIMIT} per ${WINDOW_MS / 1000} s, processes A and B:\n${printed.join('\n')}`);

      expect(
        [first, second, third].map((seen) => seen.status),
        'three fit the window, whichever process answers',
      ).to.deep.equal([200, 200, 200]);
      if (kind !== 'express') {
        // The library's own middleware leaves `t` out while the window has room; the two stores' hosts give it.
        const firstReset = kind === 'fastify' ? first.headers['X-RateLimit-Reset'] : /t=(\d+)/.exec(first.headers.RateLimit ?? '')?.[1];
        expect(firstReset, 'a fresh hit resets in the whole window, 4 s, not a second more').to.equal(String(WINDOW_MS / 1000));
      }
      expect(fourth.status, 'the oldest hit has left: one slot').to.equal(200);
      expect(fifth.status, 'a fixed window would have started afresh at 4 s and let this through too').to.equal(429);
      const retryAfter = Number(fifth.headers['Retry-After']);
      expect(retryAfter, `until the second hit leaves, about 1.6 s: ${JSON.stringify(fifth.headers)}`).to.be.within(1, 2);
    });

    it('keys IPv6 clients by their /56, and IPv4-mapped addresses as IPv4', async () => {
      const [a, b] = servers;
      if (a === undefined || b === undefined) throw new Error('no servers');
      const from = (address: string) => ({ 'x-forwarded-for': address });
      const statuses = async (server: StoreServer, address: string): Promise<number> => (await get(server.url, from(address))).status;
      // Four addresses of one /56, through both processes: one client, three requests allowed.
      const sameSubnet = ['2001:db8:aa:bb01::1', '2001:db8:aa:bb02::2', '2001:db8:aa:bbff:1:2:3:4', '2001:db8:aa:bb10::9'];
      const seen = [];
      for (const [i, address] of sameSubnet.entries()) seen.push(await statuses(i % 2 === 0 ? a : b, address));
      expect(seen, sameSubnet.join(', ')).to.deep.equal([200, 200, 200, 429]);
      expect(await statuses(a, '2001:db8:aa:cc00::1'), 'another /56 is another client').to.equal(200);
      // An IPv4 client, as itself and as an IPv4-mapped IPv6 address: one client.
      const v4 = ['203.0.113.7', '::ffff:203.0.113.7', '203.0.113.7', '::ffff:203.0.113.7'];
      const v4Seen = [];
      for (const [i, address] of v4.entries()) v4Seen.push(await statuses(i % 2 === 0 ? a : b, address));
      expect(v4Seen, v4.join(', ')).to.deep.equal([200, 200, 200, 429]);
    });
  });
}
