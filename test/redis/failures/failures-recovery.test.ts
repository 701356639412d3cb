// More failures on a real Redis, beyond the policies (failures.test.ts):
//   - clients configured the way users often do (ioredis's offline queue,
//     `maxRetriesPerRequest: null`, node-redis's default reconnect strategy)
//     still settle within `timeout` while Redis is down, and recover;
//   - script modes recover transparently when Redis forgets the script
//     (SCRIPT FLUSH, a restart), deciding exactly as a fresh reference
//     model, and nothing acknowledged before the restart is lost (the server
//     runs with `appendfsync always`; on ioredis the server is even SIGKILLed);
//   - a user whose ACL forbids EVAL/EVALSHA gets a StoreError that says so on
//     the first call of a script mode, and can still use the MULTI mode.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { KeyBuilder } from '../../../src/core/identity.js';
import { DECIDE_SCRIPT } from '../../../src/redis/decide/decide-script.js';
import type { RedisScript } from '../../../src/redis/scripts/redis-script.js';
import { RateLimiterStack, RollingRateLimiter, StoreError, TimeoutError, isRateLimiterError } from '../../../src/index.js';
import {
  connectIORedis,
  connectNodeRedis5,
  errorOf,
  reportSettle,
  retryUntil,
  settle,
  valueOf,
  type Settled,
  type TestConnection,
} from '../../support/fault-injection.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { ReferenceLimiter } from '../../support/reference-model.js';
import { RECORDS_FROM } from '../../support/redis-keys.js';
import { startRedisServer, type RedisServer } from '../../support/redis-server.js';
import { TestClock } from '../../support/test-clock.js';

const TIMEOUT_MS = 200;
const MARGIN_MS = 250;
const namespaces = uniqueNamespaces('failures-recovery');

type Connect = (url: string, auth?: { username: string; password: string }) => Promise<TestConnection>;
const CLIENTS: readonly { name: string; connect: Connect }[] = [
  { name: 'ioredis', connect: (url, auth) => connectIORedis(url, { ...auth }) },
  { name: 'node-redis 5', connect: (url, auth) => connectNodeRedis5(url, { ...auth }) },
];

/** An admin ioredis client that lives through outages quietly. */
function adminClient(url: string): Redis {
  const admin = new Redis(url, { lazyConnect: true });
  admin.on('error', () => {});
  return admin;
}

describe('clients configured as users often do, while Redis is stopped', function () {
  this.timeout(20_000);
  const configs: readonly { name: string; connect: (url: string) => Promise<TestConnection> }[] = [
    { name: 'ioredis enableOfflineQueue: true', connect: (url) => connectIORedis(url, { enableOfflineQueue: true }) },
    { name: 'ioredis maxRetriesPerRequest: null', connect: (url) => connectIORedis(url, { maxRetriesPerRequest: null }) },
    { name: 'ioredis enableOfflineQueue: false', connect: (url) => connectIORedis(url, { enableOfflineQueue: false }) },
    { name: 'node-redis 5 default reconnect', connect: (url) => connectNodeRedis5(url) },
    { name: 'node-redis 5 disableOfflineQueue: true', connect: (url) => connectNodeRedis5(url, { disableOfflineQueue: true }) },
  ];
  let server: RedisServer;
  const connections: TestConnection[] = [];
  const limiters: RollingRateLimiter[] = [];

  before(async () => {
    server = await startRedisServer();
    for (const config of configs) {
      const connection = await config.connect(server.url);
      connections.push(connection);
      limiters.push(
        new RollingRateLimiter({ client: connection.client, namespace: namespaces.next(), interval: 60_000, maxInInterval: 2, timeout: TIMEOUT_MS }),
      );
    }
  });
  after(async () => {
    for (const connection of connections) await connection.close();
    await server?.stop();
  });

  /** One limit() per configuration, in turn: each must reject with our error within the timeout plus the margin. */
  async function expectEachSettles(moment: string): Promise<void> {
    for (const [i, config] of configs.entries()) {
      const settled = await settle(() => (limiters[i] as RollingRateLimiter).limit(`${moment}:${i}`));
      reportSettle([config.name, `stopped ${moment}`, 'throw'], [settled], ['limit']);
      const error = errorOf(settled, `${config.name}: limit()`);
      expect(isRateLimiterError(error), String(error)).to.equal(true);
      expect(error).to.satisfy((e: unknown) => e instanceof TimeoutError || (e instanceof StoreError && e.cause instanceof Error));
      expect(settled.ms, config.name).to.be.below(TIMEOUT_MS + MARGIN_MS);
    }
  }

  it('every limiter decides from Redis before the outage', async () => {
    for (const limiter of limiters) expect(await limiter.limitWithInfo('before')).to.deep.include({ blocked: false, actionsRemaining: 1 });
  });

  it('every configuration settles within the timeout right after Redis stops', async () => {
    await server.stop();
    await expectEachSettles('at once');
  });

  it('and still 1.5 s into the outage, once the reconnect backoff has grown', async () => {
    await sleep(1_500);
    await expectEachSettles('for 1.5 s');
  });

  it('after a restart on the same port, the same limiters decide from Redis again', async () => {
    await server.restart();
    await Promise.all(
      limiters.map(async (limiter, i) => {
        const name = configs[i]?.name ?? '';
        await retryUntil(`${name} recovers`, async () => ((await limiter.wouldLimit('probe')) === false ? true : undefined));
        const infos = [await limiter.limitWithInfo('after'), await limiter.limitWithInfo('after'), await limiter.limitWithInfo('after')];
        expect(
          infos.map((info) => [info.blocked, info.storeFailure]),
          name,
        ).to.deep.equal([
          [false, undefined],
          [false, undefined],
          [true, undefined],
        ]);
      }),
    );
  });
});

describe('script modes when Redis forgets the script', function () {
  this.timeout(20_000);
  let server: RedisServer;
  let dir: string;
  let admin: Redis;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rwl-aof-'));
    server = await startRedisServer({ extraArgs: ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] });
    admin = adminClient(server.url);
    expect(await admin.config('GET', 'appendfsync')).to.deep.equal(['appendfsync', 'always']);
  });
  after(async () => {
    admin?.disconnect();
    await server?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const rules = { interval: 60_000, maxInInterval: 3, minDifference: 100, countBlocked: false } as const;
  const reference = (): ReferenceLimiter =>
    new ReferenceLimiter({ intervalMs: rules.interval, maxInInterval: rules.maxInInterval, minDifferenceMs: rules.minDifference, countBlocked: false });
  const scriptCached = async (script: RedisScript): Promise<boolean> => ((await admin.script('EXISTS', script.sha1)) as number[])[0] === 1;

  // How Redis goes down: a crash (SIGKILL: no shutdown, only what the AOF holds survives) on ioredis; a
  // graceful restart on node-redis 5, because node-redis 5.9.0 (installed here) can hang for good after a
  // SIGKILL: its immediate reconnect may land in the dying server's accept backlog, the socket is reset
  // during the handshake, and the client still reports isReady with a dead socket (redis/node-redis#3104,
  // fixed in redis 5.11.0). The limiter then times out on every call, as it should, but never recovers.
  const outages: Record<string, { what: string; bringDown(): void }> = {
    ioredis: { what: 'a crash (SIGKILL) and restart', bringDown: () => process.kill(server.pid as number, 'SIGKILL') },
    'node-redis 5': { what: 'a restart (SIGTERM)', bringDown: () => undefined },
  };

  for (const { name, connect } of CLIENTS) {
    describe(name, () => {
      let connection: TestConnection;
      before(async () => {
        connection = await connect(server.url);
      });
      after(async () => connection?.close());
      const outage = outages[name] as (typeof outages)[string];

      it('recovers from SCRIPT FLUSH before every call, deciding exactly as a fresh reference', async () => {
        const clock = new TestClock();
        const limiter = new RollingRateLimiter({ ...rules, client: connection.client, namespace: namespaces.next('flush'), clock: clock.read });
        const model = reference();
        for (let step = 0; step < 24; step += 1) {
          await admin.script('FLUSH');
          clock.advanceMs([0, 40, 60, 150, 20_000][step % 5] as number);
          const dryRun = step % 4 === 3;
          const actual = dryRun ? await limiter.wouldLimitWithInfo('user') : await limiter.limitWithInfo('user');
          expect(actual, `step ${step}`).to.deep.equal(dryRun ? model.peek('user', clock.now) : model.attempt('user', clock.now));
        }
        await admin.script('FLUSH');
        await limiter.limitWithInfo('user');
        expect(await scriptCached(DECIDE_SCRIPT), 'the EVAL fallback loaded the decide script again').to.equal(true);
      });

      it(`recovers from ${outage.what}, and loses nothing that was acknowledged`, async () => {
        const clock = new TestClock(Date.now() * 1000); // keys expire in real time: keep the clock near it
        const namespace = namespaces.next('crash');
        const limiter = new RollingRateLimiter({ ...rules, client: connection.client, namespace, clock: clock.read, timeout: 2_000 });
        const model = reference();
        const step = async (what: string, advanceMs: number): Promise<boolean> => {
          clock.advanceMs(advanceMs);
          const info = await limiter.limitWithInfo('user');
          expect(info, what).to.deep.equal(model.attempt('user', clock.now));
          return info.blocked;
        };
        const before = [await step('1st', 0), await step('2nd', 150), await step('3rd', 150), await step('4th: full', 150)];
        expect(before).to.deep.equal([false, false, false, true]);
        const key = new KeyBuilder(namespace).keyFor('user');
        expect(await admin.zcount(key, RECORDS_FROM, '+inf')).to.equal(3);

        outage.bringDown();
        await server.restart(); // stops the server if it still runs, and starts it again on the same port
        expect(await admin.zcount(key, RECORDS_FROM, '+inf'), 'every acknowledged action survived').to.equal(3);
        expect(await scriptCached(DECIDE_SCRIPT), 'a restarted Redis has no scripts').to.equal(false);
        await retryUntil(`${name} reconnects`, async () => ((await connection.ping(1_000)) ? true : undefined)).catch((error: unknown) => {
          throw new Error(`${String(error)} (${connection.describe()})`, { cause: error });
        });

        expect(await step('after the restart: still full', 150)).to.equal(true);
        expect(await scriptCached(DECIDE_SCRIPT), 'loaded again by the EVAL fallback').to.equal(true);
        expect(await step('the first action leaves the window', 60_000 - 600)).to.equal(false);
        expect(await step('full again', 100)).to.equal(true);
        // Three in the window; the first action, out of it, is kept `timeout` longer for calls still in flight.
        expect(await admin.zcount(key, `(${clock.now - 60_000_000}`, '+inf')).to.equal(3);
        expect(await admin.zcount(key, RECORDS_FROM, '+inf')).to.equal(4);
      });
    });
  }
});

describe('a Redis user without EVAL/EVALSHA permission', function () {
  this.timeout(20_000);
  let server: RedisServer;
  let admin: Redis;
  before(async () => {
    server = await startRedisServer();
    admin = adminClient(server.url);
    expect(await admin.call('ACL', 'SETUSER', 'limited', 'on', '>secret', '~*', '+@all', '-eval', '-evalsha', '-evalsha_ro', '-eval_ro')).to.equal('OK');
  });
  after(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  for (const { name, connect } of CLIENTS) {
    describe(name, () => {
      let connection: TestConnection;
      before(async () => {
        connection = await connect(server.url, { username: 'limited', password: 'secret' });
      });
      after(async () => connection?.close());

      const expectMissingPermission = (settled: Settled<unknown>, what: string): void => {
        const error = errorOf(settled, what);
        expect(error, what).to.be.instanceOf(StoreError);
        const { message, code, cause } = error as StoreError;
        expect(code).to.equal('ERR_RATE_LIMITER_STORE');
        expect(message).to.include('EVALSHA/EVAL').and.to.include('ACL SETUSER <user> +evalsha +eval').and.to.include('countBlocked: true');
        expect(cause).to.be.instanceOf(Error);
        expect((cause as Error).message).to.match(/^NOPERM/);
        expect(settled.ms, 'refused at once, not timed out').to.be.below(1_000);
      };

      it('rejects the first limit() of a countBlocked: false limiter with a StoreError naming EVALSHA/EVAL and the ACL fix', async () => {
        const limiter = new RollingRateLimiter({
          client: connection.client,
          namespace: namespaces.next('acl'),
          interval: 60_000,
          maxInInterval: 2,
          countBlocked: false,
        });
        expectMissingPermission(await settle(() => limiter.limit('user')), 'limit()');
        const redisClock = new RollingRateLimiter({
          client: connection.client,
          namespace: namespaces.next('acl'),
          interval: 60_000,
          maxInInterval: 2,
          clock: 'redis',
        });
        expectMissingPermission(await settle(() => redisClock.limit('user')), "clock: 'redis' limit()");
        const stack = new RateLimiterStack([
          limiter,
          new RollingRateLimiter({ client: connection.client, namespace: namespaces.next('acl'), interval: 1_000, maxInInterval: 1 }),
        ]);
        expectMissingPermission(await settle(() => stack.limit('user')), 'stack.limit()');
        // Every call of a script store is a script, dry runs included.
        expectMissingPermission(await settle(() => limiter.wouldLimit('user')), 'wouldLimit()');
      });

      it("with onStoreError: 'allow', the refusal is a store failure like any other: allowed, with the StoreError in storeFailure", async () => {
        const limiter = new RollingRateLimiter({
          client: connection.client,
          namespace: namespaces.next('acl'),
          interval: 60_000,
          maxInInterval: 2,
          countBlocked: false,
          onStoreError: 'allow',
        });
        const info = valueOf(await settle(() => limiter.limitWithInfo('user')), 'limitWithInfo()');
        expect(info.blocked).to.equal(false);
        expect(info.storeFailure?.policy).to.equal('allow');
        expect(info.storeFailure?.error.message).to.include('EVALSHA/EVAL');
      });

      it('serves a limiter with useScript: false (countBlocked: true, a local clock), which needs only plain commands', async () => {
        const limiter = new RollingRateLimiter({
          client: connection.client,
          namespace: namespaces.next('acl'),
          interval: 60_000,
          maxInInterval: 2,
          useScript: false,
        });
        const results = [await limiter.limit('user'), await limiter.limit('user'), await limiter.limit('user')];
        expect(results).to.deep.equal([false, false, true]);
        expect(await limiter.wouldLimitWithInfo('user')).to.deep.include({ blocked: true, blockedDueToCount: true, actionsRemaining: 0 });
        await limiter.clear('user');
        expect(await limiter.wouldLimit('user')).to.equal(false);
      });
    });
  }
});
