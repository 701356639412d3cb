// One namespace, one horizon (docs/semantics.md, "Bounds and shared namespaces"), on real Redis: every limiter that
// writes a namespace forgets at the longest horizon any of them gave the key (its mark), whichever clock and
// timeout each has, so that a call in flight finds what it must count; and two rules that would misread each
// other's records (a limit of actions and a budget of cost) are told apart at the first decision that meets the
// other's key, with an error naming both, that fails that decision alone.
//
// Each limiter here has a client of its own, as limiters in other processes have: the in-process registry of
// namespaces sees none of them. Stamps are read from the limiters' clocks or from the store, never from when an
// await resumed.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { localMicroseconds } from '../../src/core/clock.js';
import { RollingRateLimiter, StoreError, type RollingRateLimiterOptions } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useIORedisClient } from '../support/ioredis-client.js';
import { SeededRandom } from '../support/random.js';
import { keyOf, RECORDS_FROM } from '../support/redis-keys.js';

describe('one namespace, one horizon: limiters with other clocks and timeouts on one namespace (real Redis)', function () {
  this.timeout(60_000);
  const connection = useIORedisClient();
  const namespaces = uniqueNamespaces('one-horizon');
  const clients: Redis[] = [];
  /** A client of its own, as a limiter in another process has. */
  const another = (): Redis => {
    const client = new Redis(connection.url);
    clients.push(client);
    return client;
  };
  after(async () => {
    await Promise.all(clients.map((client) => client.quit()));
  });

  /** Redis's clock, in microseconds. */
  const redisMicroseconds = async (): Promise<number> => {
    const [seconds, micros] = await connection.client.time();
    return Number(seconds) * 1e6 + Number(micros);
  };

  for (const neighbour of ['a 100 ms timeout', "clock: 'redis'"] as const) {
    it(`a call 1.05 s in flight of a 2 s timeout still counts what a neighbour with ${neighbour} would have pruned`, async () => {
      const namespace = namespaces.next();
      const rules = { namespace, interval: 1_000, maxInInterval: 2 } as const;
      let lateNow = 0;
      const late = new RollingRateLimiter({ ...rules, client: another(), timeout: 2_000, clock: () => lateNow });
      // Two actions 100 ms apart fill the window, stamped 1.25 s before the neighbour's attempt.
      const neighbourAt = neighbour === "clock: 'redis'" ? await redisMicroseconds() : Date.UTC(2026, 0, 1) * 1000;
      const t0 = neighbourAt - 1_250_000;
      lateNow = t0;
      expect(await late.limit('user')).to.equal(false);
      lateNow = t0 + 100_000;
      expect(await late.limit('user')).to.equal(false);
      // The neighbour's window holds neither: admitted. It keeps them for the longest horizon a writer gave the key
      // (0.4.3 forgot them: at its now - interval on Redis's clock, at now - interval - 100 ms with the short timeout).
      const options: Partial<RollingRateLimiterOptions> = neighbour === "clock: 'redis'" ? { clock: 'redis' } : { timeout: 100, clock: () => neighbourAt };
      const other = new RollingRateLimiter({ ...rules, client: another(), ...options });
      expect(await other.limit('user')).to.equal(false);
      // A call stamped 200 ms after the first action, in flight until now: its window holds both actions.
      lateNow = t0 + 200_000;
      expect(await late.limitWithInfo('user')).to.include({ blocked: true, blockedDueToCount: true });
      const key = keyOf(namespace, 'user');
      // The key's mark holds the longest horizon (interval + timeout: 3,000 ms), and so does its TTL.
      expect(await connection.client.zscore(key, '#count')).to.equal('3000');
      expect(await connection.client.pttl(key)).to.be.above(2_000);
    });
  }

  it("a key written by a limiter with a 100 ms timeout outlives it: a neighbour's call with a 2 s timeout, late 0.8 s, finds its record", async () => {
    const namespace = namespaces.next();
    const rules = { namespace, interval: 1_000, maxInInterval: 1 } as const;
    const short = new RollingRateLimiter({ ...rules, client: another(), timeout: 100 });
    const t0 = localMicroseconds();
    expect(await short.limit('user')).to.equal(false);
    // Past the short limiter's window and timeout (0.4.3 let the key expire at 1.1 s, and its first neighbour
    // admitted a second action in the window), within every limiter's least time in flight (2 s).
    await sleep(1_300);
    const long = new RollingRateLimiter({ ...rules, client: another(), timeout: 2_000, clock: () => t0 + 500_000 });
    expect(await long.limitWithInfo('user')).to.include({ blocked: true, blockedDueToCount: true });
  });

  it('a rolling switch from the local clock to Redis clock, with late calls: 0 over-admissions', async function () {
    this.timeout(120_000);
    const seed = Number(process.env.SEED ?? Date.now() % 1_000_000);
    const random = new SeededRandom(seed);
    const namespace = namespaces.next();
    const interval = 150;
    const rules = { namespace, interval, maxInInterval: 3, countBlocked: false } as const;
    // The old deployment (local clock, calls late by `delayUs`), and the new one beside it: Redis's clock, or shorter
    // timeouts, each forgetting at its own horizon in 0.4.3.
    let delayUs = 0;
    const old = new RollingRateLimiter({ ...rules, client: another(), timeout: 2_000, clock: () => localMicroseconds() - delayUs });
    const neighbours = [
      new RollingRateLimiter({ ...rules, client: another(), clock: 'redis' }),
      new RollingRateLimiter({ ...rules, client: another(), clock: 'redis', timeout: 100 }),
      new RollingRateLimiter({ ...rules, client: another(), timeout: 50 }),
    ];
    const key = keyOf(namespace, 'hot');
    // Every record the key ever held (countBlocked: false: each one an admission), by its member.
    const admitted = new Map<string, number>();
    const call = async (limiter: RollingRateLimiter): Promise<void> => {
      await limiter.limit('hot');
      const records = await connection.client.zrangebyscore(key, RECORDS_FROM, '+inf', 'WITHSCORES');
      for (let j = 0; j < records.length; j += 2) admitted.set(records[j] as string, Number(records[j + 1]));
    };
    for (let round = 0; round < 30; round += 1) {
      // A burst on the old deployment's clock fills a window.
      delayUs = 0;
      const burstAt = localMicroseconds();
      for (let i = random.int(1, 4); i > 0; i -= 1) await call(old);
      // Some time later, the new deployment decides: its window has left the burst behind.
      await sleep(random.int(0, 2 * interval));
      for (let i = random.int(0, 2); i > 0; i -= 1) await call(random.pick(neighbours));
      // A call of the old deployment stamped inside the burst's window, in flight until now (well within 2 s).
      delayUs = Math.max(0, localMicroseconds() - burstAt - random.int(0, interval * 1_000));
      await call(old);
    }
    const stamps = [...admitted.values()].sort((a, b) => a - b);
    let over = 0;
    for (let i = 0; i < stamps.length; i += 1) {
      let inWindow = 0;
      for (let j = i; j >= 0 && (stamps[j] as number) > (stamps[i] as number) - interval * 1000; j -= 1) inWindow += 1;
      if (inWindow > rules.maxInInterval) over += 1;
    }
    expect(stamps.length, `seed ${seed}: admissions seen`).to.be.above(30);
    expect(over, `seed ${seed}: windows over maxInInterval among ${stamps.length} admissions`).to.equal(0);
  });

  for (const first of ['actions', 'cost'] as const) {
    it(`a limit of actions and a budget of cost on one namespace: the ${first === 'actions' ? 'budget' : 'limit of actions'} meets the other's key with an error naming both, and fails alone`, async () => {
      const namespace = namespaces.next();
      const actions = new RollingRateLimiter({ client: another(), namespace, interval: 60_000, maxInInterval: 5, circuitBreaker: { failureThreshold: 2 } });
      const budget = new RollingRateLimiter({
        client: another(),
        namespace,
        interval: 60_000,
        maxCostInInterval: 1_000,
        circuitBreaker: { failureThreshold: 2 },
      });
      const [writer, reader] = first === 'actions' ? [actions, budget] : [budget, actions];
      expect(await writer.limit('user', first === 'cost' ? { cost: 10 } : undefined)).to.equal(false);
      const options = first === 'actions' ? { cost: 10 } : undefined;
      for (let i = 0; i < 5; i += 1) {
        const error = await reader.limit('user', options).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, `call ${i}`).to.be.instanceOf(StoreError);
        expect((error as StoreError).code).to.equal('NAMESPACE_CONFLICT');
        expect((error as Error).message)
          .to.include('maxCostInInterval')
          .and.to.include('maxInInterval');
      }
      // Nothing locked: the writer still decides on the id, and the reader on another id (its circuit stayed closed).
      expect(await writer.limit('user', first === 'cost' ? { cost: 10 } : undefined)).to.equal(false);
      expect(await reader.limitWithInfo('someone-else', options)).to.include({ blocked: false });
    });
  }
});

describe('budgets under abuse: weights that cannot be trusted are counted again (real Redis)', function () {
  this.timeout(30_000);
  const connection = useIORedisClient();
  const namespaces = uniqueNamespaces('abused-weights');
  const t0 = Date.UTC(2026, 0, 1) * 1000;

  const budgetOf = (now: { at: number }): RollingRateLimiter =>
    new RollingRateLimiter({ client: connection.client, namespace: namespaces.next(), interval: 60_000, maxCostInInterval: 100, clock: () => now.at });

  const corruptions: [string, (client: Redis, weights: string) => Promise<unknown>][] = [
    ['deleted (a cleanup script, an evicting server)', (client, weights) => client.del(weights)],
    ['without its live sum', (client, weights) => client.hdel(weights, 'live')],
    ['with a live sum that is not a number', (client, weights) => client.hset(weights, 'live', 'lots')],
    ['with a pastAt of 0 (no stamp)', (client, weights) => client.hset(weights, 'pastAt', '0', 'live', '0')],
  ];
  for (const [what, corrupt] of corruptions) {
    it(`a weights hash ${what} admits nothing more in the window, and the id decides exactly once it has passed`, async () => {
      const now = { at: t0 };
      const budget = budgetOf(now);
      expect(await budget.limit('user', { cost: 60 })).to.equal(false);
      now.at += 1_000_000;
      expect(await budget.limit('user', { cost: 40 })).to.equal(false);
      const key = keyOf(budget.namespace, 'user');
      await corrupt(connection.client, `${key}:c`);
      // 0.4.3 trusted what was left: 100 more admitted in the same window (200 in every later one for a lost total).
      for (let i = 0; i < 5; i += 1) {
        now.at += 1_000_000;
        expect(await budget.limit('user', { cost: 20 }), `attempt ${i}`).to.equal(true);
      }
      // Past the window and every call in flight: the budget is whole again, and exact.
      now.at += 63_000_000;
      expect(await budget.limitWithInfo('user', { cost: 100 })).to.include({ blocked: false, costRemaining: 0 });
      expect(await budget.limit('user', { cost: 1 })).to.equal(true);
    });
  }

  it('a pastAt in the future does not lock the id out: the sums are counted again, exactly', async () => {
    const now = { at: t0 };
    const budget = budgetOf(now);
    expect(await budget.limit('user', { cost: 50 })).to.equal(false);
    await connection.client.hset(`${keyOf(budget.namespace, 'user')}:c`, 'pastAt', String(t0 + 86_400_000_000));
    now.at += 1_000_000;
    expect(await budget.limitWithInfo('user', { cost: 50 })).to.include({ blocked: false, costRemaining: 0 });
    expect(await budget.limit('user', { cost: 1 })).to.equal(true);
    now.at += 62_000_000;
    expect(await budget.limitWithInfo('user', { cost: 50 })).to.include({ blocked: false, costRemaining: 50 });
  });

  it('settlements at any size leave every other id deciding, and the circuit closed', async () => {
    const now = { at: t0 };
    const budget = new RollingRateLimiter({
      client: connection.client,
      namespace: namespaces.next(),
      interval: 60_000,
      maxCostInInterval: 1_000,
      clock: () => now.at,
      onStoreError: 'allow',
      circuitBreaker: { failureThreshold: 2 },
    });
    expect(await budget.limit('mallory', { cost: 1, actionId: 'call' })).to.equal(false);
    for (const cost of [Number.MAX_SAFE_INTEGER, 2 ** 53 - 2, 1_001]) {
      const error = await budget.settle('mallory', 'call', cost).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, `settle to ${cost}`).to.be.instanceOf(RangeError);
    }
    // 0.4.3 accepted both, failed every later decision on mallory's key, and opened the circuit for everyone.
    const decided = [
      await budget.limitWithInfo('mallory', { cost: 999 }),
      await budget.limitWithInfo('alice', { cost: 1_000 }),
      await budget.limitWithInfo('alice', { cost: 1_000 }),
    ];
    expect(decided.map((info) => info.blocked)).to.deep.equal([false, false, true]);
    expect(decided.map((info) => info.storeFailure)).to.deep.equal([undefined, undefined, undefined]);
  });
});
