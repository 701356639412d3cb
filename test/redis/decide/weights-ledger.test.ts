// The running sums of a cost tier's weights on Redis (the decide, undo and
// settle scripts): beside each record's cost, `live` (the records stamped
// after `pastAt`, the latest cutoff an attempt weighed, so that W(S) reads no
// record kept for calls in flight) and `anon` (the records without an action
// id, which the flood bound trims from the oldest). After every step of random schedules (costs, action ids, retries,
// undo, settle up and down, dry runs, clear, calls late and out of stamp
// order, countBlocked either way) each sum equals what the key's records
// add up to. Then what the sums buy, counted in records and Redis commands
// rather than time: a hot id hammering with the default cost of 1 keeps the
// key at the budget's records, and each blocked attempt runs a handful of
// commands however large the budget.

import { expect } from 'chai';
import { KeyBuilder, recordWeightsKey } from '../../../src/core/identity.js';
import { RollingRateLimiter } from '../../../src/index.js';
import { commandCalls } from '../../support/command-stats.js';
import { useIORedisClient } from '../../support/ioredis-client.js';
import { recordCount, RECORDS_FROM } from '../../support/redis-keys.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { SeededRandom } from '../../support/random.js';
import { TestClock } from '../../support/test-clock.js';

const SUMS = new Set(['live', 'anon', 'pastAt']);
const isAction = (member: string): boolean => member.startsWith('+') || member.startsWith('-');

describe('a cost tier on Redis: the running sums of its weights', function () {
  this.timeout(120_000);
  const connection = useIORedisClient();
  const namespaces = uniqueNamespaces('weights-ledger');

  /** Each sum of the weights of `key` against its records: a description of every difference (none: []). */
  const disagreements = async (key: string): Promise<string[]> => {
    const client = connection.client;
    const weights = await client.hgetall(recordWeightsKey(key));
    // The key's records, without its horizon mark (below every stamp).
    const scored = await client.zrangebyscore(key, RECORDS_FROM, '+inf', 'WITHSCORES');
    const records = new Map<string, number>();
    for (let j = 0; j < scored.length; j += 2) records.set(scored[j]!, Number(scored[j + 1]));
    const found: string[] = [];
    const fields = Object.keys(weights).filter((name) => !SUMS.has(name));
    for (const name of fields) if (!records.has(name)) found.push(`a weight for ${name}, which the key does not hold`);
    for (const member of records.keys()) if (weights[member] === undefined) found.push(`no weight for ${member}`);
    if (fields.length === 0 && records.size === 0) return found;
    const weightOf = (member: string): number => Number(weights[member] ?? 0);
    const sum = (members: Iterable<string>): number => [...members].reduce((total, member) => total + weightOf(member), 0);
    const expectSum = (name: string, value: number): void => {
      if (Number(weights[name] ?? 0) !== value) found.push(`${name} ${weights[name]}, the records ${value}`);
    };
    const pastAt = weights.pastAt === undefined ? -Infinity : Number(weights.pastAt);
    expectSum('live', sum([...records].filter(([, stamp]) => stamp > pastAt).map(([member]) => member)));
    expectSum('anon', sum([...records.keys()].filter((member) => !isAction(member))));
    return found;
  };

  for (const batch of [false, true]) {
    it(`equal the records after every step of 40 random schedules${batch ? ' (batch: true)' : ''}`, async () => {
      const seed = Date.now() % 1_000_000;
      const random = new SeededRandom(seed);
      let steps = 0;
      for (let schedule = 0; schedule < 40; schedule += 1) {
        const clock = new TestClock();
        const max = random.int(3, 40);
        const limiter = new RollingRateLimiter({
          client: connection.client,
          namespace: namespaces.next(),
          interval: random.pick([500, 1_000, 3_000]),
          maxCostInInterval: max,
          ...(random.chance(0.3) ? { minDifference: 50 } : {}),
          countBlocked: random.chance(0.5),
          timeout: 2_000,
          batch,
          clock: clock.read,
        });
        const key = new KeyBuilder(limiter.namespace).keyFor('user');
        const actionIds: string[] = [];
        for (let step = 0; step < 60; step += 1) {
          // Mostly forward, sometimes a call stamped up to the timeout earlier (late, out of stamp order).
          const late = random.chance(0.15) ? random.int(1, 1_900) * 1000 : 0;
          clock.advanceUs(random.int(0, 400) * 1000);
          clock.now -= late;
          const cost = random.int(1, Math.max(1, Math.floor(max / 3)));
          const roll = random.next();
          const what: string[] = [];
          if (roll < 0.45) {
            const actionId = random.chance(0.5) ? (random.chance(0.3) && actionIds.length > 0 ? random.pick(actionIds) : `a${step}`) : undefined;
            if (actionId !== undefined && !actionIds.includes(actionId)) actionIds.push(actionId);
            what.push(`limit cost ${cost}${actionId === undefined ? '' : ` action ${actionId}`}`);
            await limiter.limit('user', { cost, ...(actionId === undefined ? {} : { actionId }) });
          } else if (roll < 0.65) {
            // A burst, as concurrent callers send it (one script call with batch: true).
            what.push(`burst of 5 at cost ${cost}`);
            await Promise.all(Array.from({ length: 5 }, () => limiter.limit('user', { cost })));
          } else if (roll < 0.75 && actionIds.length > 0) {
            const actionId = random.pick(actionIds);
            const used = random.pick([0, 1, cost, max]);
            what.push(`settle ${actionId} to ${used}`);
            await limiter.settle('user', actionId, used);
          } else if (roll < 0.83 && actionIds.length > 0) {
            const actionId = random.pick(actionIds);
            what.push(`undo ${actionId}`);
            await limiter.undo('user', actionId);
          } else if (roll < 0.97) {
            what.push(`dry run cost ${cost}`);
            await limiter.wouldLimit('user', { cost });
          } else {
            what.push('clear');
            await limiter.clear('user');
          }
          clock.now += late;
          steps += 1;
          expect(await disagreements(key), `seed ${seed}, schedule ${schedule}, step ${step}: ${what.join(', ')}`).to.deep.equal([]);
        }
      }
      expect(steps).to.equal(40 * 60);
    });
  }

  it('weights lost beside records (an upgrade from 0.5, which kept them under another key) are recounted: each record weighs the budget', async () => {
    const clock = new TestClock();
    const limiter = new RollingRateLimiter({
      client: connection.client,
      namespace: namespaces.next(),
      interval: 1_000,
      maxCostInInterval: 100,
      clock: clock.read,
    });
    const key = new KeyBuilder(limiter.namespace).keyFor('user');
    await limiter.limit('user', { cost: 7 });
    clock.advanceMs(10);
    await limiter.limit('user', { cost: 5, actionId: 'job' });
    await connection.client.del(recordWeightsKey(key));
    clock.advanceMs(10);
    // Two records without a weight: each the whole budget, so nothing fits until they have left the window (the
    // blocked attempt is recorded: countBlocked).
    expect(await limiter.wouldLimitWithInfo('user', { cost: 1 })).to.include({ blocked: true, costRemaining: 0 });
    expect(await limiter.limitWithInfo('user', { cost: 1 })).to.include({ blocked: true });
    expect(await disagreements(key)).to.deep.equal([]);
    expect(await connection.client.hgetall(recordWeightsKey(key))).to.include({ live: '201', anon: '101' });
    clock.advanceMs(1_000);
    expect(await limiter.limitWithInfo('user', { cost: 100 })).to.include({ blocked: false, costRemaining: 0 });
    expect(await disagreements(key)).to.deep.equal([]);
  });

  it('a hot id hammering a budget of 20,000 with attempts of 1: the key holds the budget, and a blocked attempt runs a few commands', async () => {
    const clock = new TestClock();
    const budget = 20_000;
    const limiter = new RollingRateLimiter({
      client: connection.client,
      namespace: namespaces.next(),
      interval: 60_000,
      maxCostInInterval: budget,
      clock: clock.read,
    });
    const key = new KeyBuilder(limiter.namespace).keyFor('user');
    // The budget admitted, a microsecond apart, then 1.5 times as many attempts blocked and recorded.
    for (let sent = 0; sent < budget * 2.5; sent += 500) {
      await Promise.all(
        Array.from({ length: 500 }, () => {
          clock.advanceUs(1);
          return limiter.limit('user', { cost: 1 });
        }),
      );
    }
    // The newest budget's worth of records without an action id, and nothing older (before the running sums the flood
    // bound ran once the key held twice what it last kept: up to 40,016 here).
    expect(await recordCount(connection.client, key)).to.equal(budget);
    const attempts = 50;
    await connection.client.config('RESETSTAT');
    for (let j = 0; j < attempts; j += 1) {
      clock.advanceUs(1);
      const info = await limiter.limitWithInfo('user', { cost: 1 });
      expect(info.blocked).to.equal(true);
      // The oldest record leaves the window first; the wait is exact.
      expect(info.millisecondsUntilAllowed).to.be.within(59_900, 60_000);
    }
    const stats = await connection.client.info('commandstats');
    const reads = ['zrange', 'zrangebyscore', 'hmget', 'hget', 'zcount'].reduce((sum, command) => sum + commandCalls(stats, command), 0);
    // Each blocked attempt: its weights' sums, its window's count and forget, the flood bound's and the wait's first
    // chunks (before the running sums a wait walked the records recorded since the last trim: thousands, in chunks).
    expect(reads / attempts).to.be.at.most(12);
    expect(await recordCount(connection.client, key)).to.equal(budget);
  });
});
