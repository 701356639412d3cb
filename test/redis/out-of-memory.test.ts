// A Redis at its `maxmemory` under `noeviction` (the policy the limiter asks
// for): Redis refuses every command queued in a MULTI then (EXEC answers
// EXECABORT), reads and deletes alike, but runs a script declared without
// flags whose writes only free memory. So wherever the client runs scripts,
// `undo`, `clear` and the dry runs go through scripts and still work on a full
// server, and do not count toward the circuit breaker. The MULTI path
// (`useScript: false`, redis-mock) has no script to turn to: its calls still
// fail there, as this file shows too. (Attempts are the decide script's own
// business: Redis refuses a script's first write command when it may grow
// memory, and lets every later one through.)

import { expect } from 'chai';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import { CIRCUIT_CHANNEL, RateLimiterStack, RollingRateLimiter, StoreError } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/** What each case limits with: a limiter or a stack, on one client. */
type Limiter = RollingRateLimiter | RateLimiterStack;

const MAX = 3;

/** What the server holds now, in bytes (`used_memory`). */
async function usedMemory(admin: Redis): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))?.[1]);
}

/**
 * Fills the server until a write is refused for want of memory (its maxmemory
 * a megabyte above what it held), then lowers its maxmemory a little below
 * what it holds: the refused write's own bytes left with it, and a small
 * write would otherwise fit again.
 */
async function fillToMaxmemory(admin: Redis): Promise<void> {
  await admin.config('SET', 'maxmemory', String((await usedMemory(admin)) + 1_000_000));
  const value = 'x'.repeat(10_000);
  for (let i = 0; i < 1_000; i += 1) {
    const refused = await admin.set(`filler:${i}`, value).then(
      () => undefined,
      (error: Error) => error.message,
    );
    if (refused !== undefined) {
      expect(refused).to.match(/^OOM /);
      await admin.config('SET', 'maxmemory', String((await usedMemory(admin)) - 100_000));
      return;
    }
  }
  throw new Error('the server never reached its maxmemory');
}

describe('a Redis at its maxmemory under noeviction', function () {
  this.timeout(30_000);
  const namespaces = uniqueNamespaces('oom');
  let server: RedisServer;
  let admin: Redis;
  let ioredis: Redis;
  let nodeRedis: ReturnType<typeof createClient>;
  const circuitChanges: unknown[] = [];
  const onCircuit = (message: unknown): void => void circuitChanges.push(message);

  const ID = 'seller-1';
  const ACTION = 'order-42';
  const breaker = { failureThreshold: 2, cooldown: 60_000 };

  /** The cases, each built before the server fills up, its limit for `ID` used up, one action of it under `ACTION`. */
  const cases: readonly { name: string; build: () => Limiter }[] = [
    {
      name: 'ioredis, one limiter (the decide script)',
      build: () => new RollingRateLimiter({ client: ioredis, namespace: namespaces.next(), interval: 60_000, maxInInterval: MAX, circuitBreaker: breaker }),
    },
    {
      name: 'ioredis, a stack with batch: true',
      build: () =>
        new RateLimiterStack(
          [
            new RollingRateLimiter({ client: ioredis, namespace: namespaces.next('minute'), interval: 60_000, maxInInterval: MAX }),
            new RollingRateLimiter({ client: ioredis, namespace: namespaces.next('hour'), interval: 3_600_000, maxInInterval: 10 * MAX }),
          ],
          { batch: true, circuitBreaker: breaker },
        ),
    },
    {
      name: 'node-redis 5, one limiter with countBlocked: false',
      build: () =>
        new RollingRateLimiter({
          client: nodeRedis,
          namespace: namespaces.next(),
          interval: 60_000,
          maxInInterval: MAX,
          countBlocked: false,
          circuitBreaker: breaker,
        }),
    },
  ];
  const limiters = new Map<string, Limiter>();

  before(async () => {
    server = await startRedisServer({ extraArgs: ['--maxmemory-policy', 'noeviction'] });
    admin = new Redis(server.url);
    ioredis = new Redis(server.url);
    nodeRedis = createClient({ url: server.url });
    await nodeRedis.connect();
    for (const { name, build } of cases) {
      const limiter = build();
      limiters.set(name, limiter);
      expect((await limiter.limitWithInfo(ID, { actionId: ACTION })).blocked, name).to.equal(false);
      for (let i = 1; i < MAX; i += 1) await limiter.limit(ID);
      expect(await limiter.wouldLimit(ID), `${name}: used up`).to.equal(true);
    }
    await fillToMaxmemory(admin);
    subscribe(CIRCUIT_CHANNEL, onCircuit);
  });

  after(async () => {
    unsubscribe(CIRCUIT_CHANNEL, onCircuit);
    admin?.disconnect();
    ioredis?.disconnect();
    nodeRedis?.destroy();
    await server?.stop();
  });

  /** The error of a small write of the admin client (undefined if it is written). */
  const refusedWrite = (): Promise<string | undefined> =>
    admin.set(`${namespaces.next()}:probe`, 'x').then(
      () => undefined,
      (error: Error) => error.message,
    );

  it('refuses a MULTI of reads and deletes alone with EXECABORT, and runs a script without flags that only reads and deletes', async () => {
    const key = `${namespaces.next()}:probe`;
    const multi = await admin
      .multi()
      .zcount(key, '-inf', '+inf')
      .del(key)
      .exec()
      .then(
        () => 'ran',
        (error: Error) => error.message,
      );
    expect(multi).to.match(/^EXECABORT /);
    expect(await admin.eval("redis.call('ZCOUNT', KEYS[1], '-inf', '+inf') return redis.call('DEL', KEYS[1])", 1, key)).to.equal(0);
  });

  for (const { name } of cases) {
    describe(name, () => {
      const limiter = (): Limiter => limiters.get(name) as Limiter;
      it('answers dry runs, undoes an action and clears an id, and the circuit stays closed', async () => {
        const subject = limiter();
        for (let round = 0; round < 3; round += 1) {
          expect(await subject.wouldLimit(ID), 'used up').to.equal(true);
          expect((await subject.wouldLimitWithInfo(ID)).actionsRemaining).to.equal(0);
        }
        expect(await subject.undo(ID, ACTION), 'undone').to.equal(true);
        expect(await subject.undo(ID, ACTION), 'undone once').to.equal(false);
        expect(await subject.wouldLimit(ID), 'the undone action gave its slot back').to.equal(false);
        await subject.clear(ID);
        await subject.clear(ID);
        // The dry run's own attempt takes one.
        expect((await subject.wouldLimitWithInfo(ID)).actionsRemaining, 'cleared').to.equal(MAX - 1);
        expect(circuitChanges, 'circuit changes').to.deep.equal([]);
        expect(await refusedWrite(), 'the server is still full').to.match(/^OOM /);
      });
    });
  }

  describe('useScript: false (the MULTI path)', () => {
    it('still fails its dry runs, undo and clear with EXECABORT: a MULTI is all it has', async () => {
      const limiter = new RollingRateLimiter({
        client: ioredis,
        namespace: namespaces.next(),
        interval: 60_000,
        maxInInterval: MAX,
        useScript: false,
        circuitBreaker: false,
      });
      for (const call of [() => limiter.wouldLimit(ID), () => limiter.undo(ID, ACTION), () => limiter.clear(ID)]) {
        const error = await call().then(
          () => undefined,
          (failure: unknown) => failure,
        );
        expect(error).to.be.instanceOf(StoreError);
        expect(String((error as StoreError).cause)).to.match(/EXECABORT|OOM/);
      }
    });
  });
});
