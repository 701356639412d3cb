// RollingWindowThrottlerStorage under @nestjs/throttler's own ThrottlerGuard,
// in Nest applications on Express and on Fastify: two applications share one
// real redis-server (each with its own connection, as two processes would),
// or one storage in memory, and requests go to both in turn. Time comes from
// an injected clock that the storages share, so every admission is read from
// the store at an exact moment, to the microsecond: the rolling window's
// edges, the block, and the window still deciding after the block.

import { Controller, Get } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule, type ThrottlerOptions } from '@nestjs/throttler';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RollingWindowThrottlerStorage } from '../../../src/integrations/nestjs/index.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
import { TestClock } from '../../support/test-clock.js';
import { send, startApp, type Answer, type Platform, type RunningApp } from './nest-apps.js';

@Controller()
class PingController {
  @Get('ping')
  ping(): string {
    return 'pong';
  }
}

const namespaces = uniqueNamespaces('nest-throttler');

/** Two applications of `platforms` whose ThrottlerGuard counts in `storages` (one each, or one shared). */
async function startApps(
  platforms: readonly [Platform, Platform],
  storages: readonly [RollingWindowThrottlerStorage, RollingWindowThrottlerStorage],
  throttlers: ThrottlerOptions[],
): Promise<RunningApp[]> {
  return Promise.all(
    platforms.map((platform, i) =>
      startApp(platform, {
        imports: [ThrottlerModule.forRoot({ throttlers, storage: storages[i] as RollingWindowThrottlerStorage })],
        controllers: [PingController],
        providers: [{ provide: APP_GUARD, useClass: ThrottlerGuard }],
      }),
    ),
  );
}

/** At each moment (ms after the start, on the shared clock), one request to the app given, answered as expected. */
type Step = readonly [atMs: number, app: 0 | 1, status: number, headers: Record<string, string>];

async function run(apps: readonly RunningApp[], clock: TestClock, steps: readonly Step[]): Promise<void> {
  const start = clock.now;
  const seen: [number, number, number, Record<string, string>][] = [];
  for (const [atMs, app] of steps) {
    clock.now = start + Math.round(atMs * 1000);
    const answer: Answer = await send(`${(apps[app] as RunningApp).url}/ping`);
    seen.push([atMs, app, answer.status, answer.headers]);
  }
  expect(seen).to.deep.equal(steps);
}

/** One throttler: 2 per minute, a refusal blocks for 30 s. Exact to the microsecond, across both apps. */
const BLOCKING: ThrottlerOptions[] = [{ name: 'default', ttl: 60_000, limit: 2, blockDuration: 30_000 }];
const BLOCKING_SCHEDULE: Step[] = [
  [0, 0, 200, { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset': '60' }],
  [36_000, 1, 200, { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '24' }],
  // Over the limit 1 µs before the first request leaves: refused, not counted, blocked for 30 s.
  [59_999.999, 0, 429, { 'Retry-After': '30' }],
  [89_999.998, 1, 429, { 'Retry-After': '1' }],
  // The block is over; the window (29.999999 s, 89.999999 s] holds one request (36 s): admitted.
  [89_999.999, 0, 200, { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '7' }],
  // @nestjs/throttler's own storage starts afresh after a block; the rolling window still holds 36 s and 89.999999 s.
  [95_999.999, 1, 429, { 'Retry-After': '30' }],
  [125_999.999, 0, 200, { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '24' }],
];

/** Two named throttlers, each on its own key: 1 per second without a block, 3 per minute (blocking for the minute). */
const NAMED: ThrottlerOptions[] = [
  { name: 'second', ttl: 1_000, limit: 1, blockDuration: 0 },
  { name: 'minute', ttl: 60_000, limit: 3 },
];
const NAMED_SCHEDULE: Step[] = [
  [0, 0, 200, { 'X-RateLimit-Remaining-second': '0', 'X-RateLimit-Remaining-minute': '2' }],
  // ThrottlerGuard asks the throttlers in turn and stops at the first that refuses: 'minute' is not counted.
  [999.999, 1, 429, { 'Retry-After-second': '1' }],
  [1_000, 0, 200, { 'X-RateLimit-Remaining-second': '0', 'X-RateLimit-Remaining-minute': '1' }],
  [2_000, 1, 200, { 'X-RateLimit-Remaining-second': '0', 'X-RateLimit-Remaining-minute': '0' }],
  // 'second' admits (and counts) this one; 'minute' refuses and blocks for its ttl.
  [3_000, 0, 429, { 'X-RateLimit-Remaining-second': '0', 'Retry-After-minute': '60' }],
  [62_999.999, 1, 429, { 'X-RateLimit-Remaining-second': '0', 'Retry-After-minute': '1' }],
  // 'second' still holds 62.999999 s; 'minute' is no longer blocked, and did not count the requests it refused.
  [63_000, 0, 429, { 'Retry-After-second': '1' }],
  [64_000, 1, 200, { 'X-RateLimit-Remaining-second': '0', 'X-RateLimit-Remaining-minute': '2' }],
];

describe('RollingWindowThrottlerStorage under ThrottlerGuard', function () {
  this.timeout(60_000);

  describe('two applications on one real Redis', () => {
    let redis: UsedRedis | undefined;
    const clients: Redis[] = [];
    let apps: RunningApp[] = [];

    before(async () => {
      redis = await useRedis();
    });
    afterEach(async () => {
      await Promise.all(apps.map((app) => app.close()));
      apps = [];
      await Promise.all(clients.splice(0).map((client) => client.quit()));
    });
    after(async () => {
      await redis?.stop();
    });

    /** Two storages, each on its own connection to the shared server, with one namespace and the shared clock. */
    function storages(clock: TestClock): [RollingWindowThrottlerStorage, RollingWindowThrottlerStorage] {
      const namespace = namespaces.next();
      const make = (): RollingWindowThrottlerStorage => {
        const client = new Redis((redis as UsedRedis).url);
        clients.push(client);
        return new RollingWindowThrottlerStorage({ client, namespace, clock: clock.read });
      };
      return [make(), make()];
    }

    for (const platforms of [
      ['express', 'express'],
      ['fastify', 'fastify'],
      ['express', 'fastify'],
    ] as const) {
      it(`admits exactly on a rolling window and honours blockDuration (${platforms.join(' + ')})`, async () => {
        const clock = new TestClock();
        apps = await startApps(platforms, storages(clock), BLOCKING);
        await run(apps, clock, BLOCKING_SCHEDULE);
      });
    }

    it('counts each named throttler on its own key', async () => {
      const clock = new TestClock();
      apps = await startApps(['express', 'fastify'], storages(clock), NAMED);
      await run(apps, clock, NAMED_SCHEDULE);
    });
  });

  describe('in memory (one storage shared by two applications)', () => {
    let apps: RunningApp[] = [];
    afterEach(async () => {
      await Promise.all(apps.map((app) => app.close()));
      apps = [];
    });

    it('admits exactly on a rolling window and honours blockDuration', async () => {
      const clock = new TestClock();
      const storage = new RollingWindowThrottlerStorage({ clock: clock.read });
      apps = await startApps(['express', 'fastify'], [storage, storage], BLOCKING);
      await run(apps, clock, BLOCKING_SCHEDULE);
    });

    it('counts each named throttler on its own key', async () => {
      const clock = new TestClock();
      const storage = new RollingWindowThrottlerStorage({ clock: clock.read });
      apps = await startApps(['express', 'fastify'], [storage, storage], NAMED);
      await run(apps, clock, NAMED_SCHEDULE);
    });
  });

  describe('its answers and options', () => {
    it("answers in ThrottlerGuard's units: seconds, rounded up", async () => {
      const clock = new TestClock();
      const storage = new RollingWindowThrottlerStorage({ clock: clock.read });
      expect(await storage.increment('k', 1_500, 1, 2_500, 'default')).to.deep.equal({ totalHits: 1, timeToExpire: 2, isBlocked: false, timeToBlockExpire: 0 });
      clock.advanceMs(1);
      expect(await storage.increment('k', 1_500, 1, 2_500, 'default')).to.deep.equal({ totalHits: 2, timeToExpire: 2, isBlocked: true, timeToBlockExpire: 3 });
      expect(await storage.increment('k', 1_500, 1, 2_500, 'other'), 'another throttler, another key').to.include({ totalHits: 1, isBlocked: false });
    });

    it('refuses unknown options and bad values, naming them', async () => {
      expect(() => new RollingWindowThrottlerStorage({ prefix: 'x' } as never)).to.throw(TypeError, /Unknown option `prefix`/);
      expect(() => new RollingWindowThrottlerStorage({ namespace: 1 } as never)).to.throw(TypeError, /`namespace`/);
      const storage = new RollingWindowThrottlerStorage();
      let error: unknown;
      await storage.increment('k', 0, 1, 0, 'default').catch((caught: unknown) => (error = caught));
      expect(error).to.be.instanceOf(RangeError).with.property('message').that.matches(/`ttl`/);
    });
  });
});
