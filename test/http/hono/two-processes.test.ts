// rolling-window-limiter/hono over real HTTP on @hono/node-server: two server
// processes (test/http/hono/hono-servers.ts) share one real redis-server, and
// the test sends a schedule to both in turn, setting both processes' limiter
// clock before each step, so that every admission is exact: the store's
// timestamps are the clock's, whenever the requests happened to run. Each
// process also serves the Express middleware on its own namespace and the same
// clock; at every step both answer the same request the same way.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { startChild } from '../../support/child-process.js';
import { keyOf } from '../../support/redis-keys.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
import { get, type Seen } from '../http-helpers.js';
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
} from './server-processes.js';

const namespaces = uniqueNamespaces('hono');

interface Ports {
  readonly hono4: number;
  readonly hono6: number;
  readonly express: number;
}

type Server = ServerProcess<Ports>;

const startNodeServer = (name: string, redisUrl: string, namespace: string): Promise<Server> =>
  startServer<Ports>(name, startChild('../http/hono/hono-servers.ts', [redisUrl, namespace, String(WINDOW_MS), String(LIMIT)], CHILD_LIMIT_MS));

/** What is compared between the frameworks: a 200's content type is the route's own, a 429's the middleware's. */
const answer = (seen: Seen): Partial<Seen> => (seen.status === 200 ? { ...seen, contentType: null } : seen);

describe('rolling-window-limiter/hono on @hono/node-server, two processes on one Redis', function () {
  this.timeout(60_000);
  let redis: UsedRedis | undefined;
  let reader: Redis | undefined;
  const servers: Server[] = [];
  let namespace = '';

  before(async () => {
    redis = await useRedis();
    reader = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    namespace = namespaces.next('site');
    await startServers([startNodeServer('A', redis.url, namespace), startNodeServer('B', redis.url, namespace)], servers);
  });

  after(async () => {
    await stopServers(servers);
    await reader?.quit();
    await redis?.stop();
  });

  /** The admission times (ms after T0) the store holds for a limiter's id, read from Redis. */
  const admissions = (suffix: string, id: string): Promise<number[]> => admissionsUnder(reader, keyOf(`${namespace}:${suffix}`, id));

  it('admits an exact rolling window across both processes, answering as the Express middleware does', async () => {
    const [a, b] = servers;
    if (a === undefined || b === undefined) throw new Error('no servers');
    const schedule = THREE_PER_FOUR_SECONDS.map(([atMs, index, status]) => [atMs, index === 0 ? a : b, status] as const);
    const printed: string[] = [];
    const blocked: Seen[] = [];
    for (const [atMs, server, status] of schedule) {
      await setClock(servers, atMs);
      const fromHono = await get(`http://127.0.0.1:${server.ports.hono4}/`);
      const fromExpress = await get(`http://127.0.0.1:${server.ports.express}/`);
      printed.push(`    ${String(atMs).padStart(8)} ms  ${server.name}  ${fromHono.status}  ${JSON.stringify(fromHono.headers)}`);
      expect(fromHono.status, `${server.name} at ${atMs} ms`).to.equal(status);
      expect(answer(fromHono), `the Express middleware, ${server.name} at ${atMs} ms`).to.deep.equal(answer(fromExpress));
      if (status === 429) blocked.push(fromHono);
    }
    console.log(`      rolling-window-limiter/hono, ${LIMIT} per ${WINDOW_MS / 1000} s, processes A and B:\n${printed.join('\n')}`);

    expect(
      blocked.map((seen) => seen.headers['Retry-After']),
      'waits: 1 µs, then 2 s twice, rounded up',
    ).to.deep.equal(['1', '2', '2']);
    expect(blocked[1]?.headers).to.deep.equal({ 'RateLimit-Policy': '"api";q=3;w=4', RateLimit: '"api";r=0;t=2', 'Retry-After': '2' });
    expect(JSON.parse(blocked[1]?.body ?? '')).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: 2 });
    // The store holds the admitted requests only (countBlocked: false), at the clock's times, under the client IP:
    // those of the window, and the two of 2 s that left it, kept `timeout` (2 s) longer for calls in flight.
    expect(await admissions('hono', '127.0.0.1'), 'admitted by the Hono middleware').to.deep.equal([2_000, 2_000, 4_000, 6_000, 6_000]);
    expect(await admissions('express', '127.0.0.1'), 'admitted by the Express middleware').to.deep.equal([2_000, 2_000, 4_000, 6_000, 6_000]);
  });

  it('keys a client on ::1 by its /56 with the adapter getConnInfo', async () => {
    const [a, b] = servers;
    if (a === undefined || b === undefined) throw new Error('no servers');
    await setClock(servers, 60_000);
    const seen = [];
    for (const server of [a, b, a, b]) seen.push((await get(`http://[::1]:${server.ports.hono6}/`)).status);
    expect(seen).to.deep.equal([200, 200, 200, 429]);
    expect(await admissions('hono', '::/56')).to.deep.equal([60_000, 60_000, 60_000]);
  });

  it('keys IPv6 clients by their /56 through connInfo, and IPv4-mapped addresses as IPv4, across both processes', async () => {
    const [a, b] = servers;
    if (a === undefined || b === undefined) throw new Error('no servers');
    await setClock(servers, 120_000);
    const statuses = async (addresses: readonly string[]): Promise<number[]> => {
      const seen: number[] = [];
      for (const [i, address] of addresses.entries()) {
        const server = i % 2 === 0 ? a : b;
        seen.push((await get(`http://127.0.0.1:${server.ports.hono4}/`, { 'x-test-address': address })).status);
      }
      return seen;
    };
    const sameSubnet = ['2001:db8:aa:bb01::1', '2001:db8:aa:bb02::2', '2001:db8:aa:bbff:1:2:3:4', '2001:db8:aa:bb10::9'];
    expect(await statuses(sameSubnet), sameSubnet.join(', ')).to.deep.equal([200, 200, 200, 429]);
    expect(await statuses(['2001:db8:aa:cc00::1']), 'another /56 is another client').to.deep.equal([200]);
    expect(await admissions('hono', '2001:db8:aa:bb00::/56')).to.have.lengthOf(3);
    const v4 = ['203.0.113.7', '::ffff:203.0.113.7', '203.0.113.7', '::ffff:203.0.113.7'];
    expect(await statuses(v4), v4.join(', ')).to.deep.equal([200, 200, 200, 429]);
    expect(await admissions('hono', '203.0.113.7')).to.deep.equal([120_000, 120_000, 120_000]);
  });
});
