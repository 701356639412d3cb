// RollingWindowThrottlerGuard with two named throttlers on one route, in Nest
// applications on Express and on Fastify: two applications share one real
// redis-server (each on its own connection) or one storage in memory. Every
// request is one script call (ThrottlerGuard makes one per throttler), the
// throttlers decide together (a request one of them refuses is counted by
// none, read back from the store), and the headers and the 429 are
// ThrottlerGuard's for the same decisions. Time comes from an injected clock.

import { Controller, Get } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule, type ThrottlerOptions } from '@nestjs/throttler';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import sinon from 'sinon';
import { escapeIdentifier } from '../../../src/core/identity.js';
import { RollingWindowThrottlerGuard, RollingWindowThrottlerStorage } from '../../../src/integrations/nestjs/index.js';
import { HIT_LOG_SCRIPT } from '../../../src/http/stores/hit-log/hit-log-script.js';
import { commandsDuring } from '../../support/command-stats.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
import { TestClock } from '../../support/test-clock.js';
import { startApp, type Platform, type RunningApp } from './nest-apps.js';

@Controller()
class PingController {
  @Get('ping')
  ping(): string {
    return 'pong';
  }
}

const namespaces = uniqueNamespaces('nest-throttler-guard');

/** 2 per second without a block, and 3 per minute blocking for the minute (ThrottlerGuard asks 'second' first: the shorter ttl). */
const THROTTLERS: ThrottlerOptions[] = [
  { name: 'second', ttl: 1_000, limit: 2, blockDuration: 0 },
  { name: 'minute', ttl: 60_000, limit: 3 },
];

/** Two applications guarded by `guard`, whose throttlers count in `storages` (one each, or one shared). */
async function startApps(
  platforms: readonly Platform[],
  storages: readonly RollingWindowThrottlerStorage[],
  guard: typeof ThrottlerGuard,
): Promise<RunningApp[]> {
  return Promise.all(
    platforms.map((platform, i) =>
      startApp(platform, {
        imports: [ThrottlerModule.forRoot({ throttlers: THROTTLERS, storage: storages[i] as RollingWindowThrottlerStorage })],
        controllers: [PingController],
        providers: [{ provide: APP_GUARD, useClass: guard }],
      }),
    ),
  );
}

/** What a test reads from a response: the status, every rate-limit header (names as ThrottlerGuard spells them), the body. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const SPELLING = new Map(
  ['second', 'minute']
    .flatMap((name) => ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After'].map((header) => `${header}-${name}`))
    .map((name) => [name.toLowerCase(), name]),
);

/** One request (bounded by a 10 s timeout), and its answer. */
async function send(app: RunningApp): Promise<Answer> {
  const response = await fetch(`${app.url}/ping`, { signal: AbortSignal.timeout(10_000) });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    const spelled = SPELLING.get(name);
    if (spelled !== undefined) headers[spelled] = value;
  });
  return { status: response.status, headers, body: await response.text() };
}

/** The headers of an admitted request: per throttler, its remaining requests and the seconds until its count changes. */
function admitted([secondLeft, secondReset]: [number, number], [minuteLeft, minuteReset]: [number, number]): Record<string, string> {
  return {
    'X-RateLimit-Limit-second': '2',
    'X-RateLimit-Remaining-second': String(secondLeft),
    'X-RateLimit-Reset-second': String(secondReset),
    'X-RateLimit-Limit-minute': '3',
    'X-RateLimit-Remaining-minute': String(minuteLeft),
    'X-RateLimit-Reset-minute': String(minuteReset),
  };
}

/** At each moment (ms after the start, on the shared clock), one request to the app given, answered as expected. */
type Step = readonly [atMs: number, app: 0 | 1, status: number, headers: Record<string, string>];

const SCHEDULE: Step[] = [
  [0, 0, 200, admitted([1, 1], [2, 60])],
  [500, 1, 200, admitted([0, 1], [1, 60])],
  // 'second' refuses: nothing counts it ('minute' neither, as under ThrottlerGuard, which stops there).
  [999.999, 0, 429, { 'Retry-After-second': '1' }],
  [1_500, 1, 200, admitted([1, 1], [0, 59])],
  // 'minute' refuses and blocks for its ttl; 'second' admits but does not count it (ThrottlerGuard's would have).
  [2_000, 0, 429, { 'X-RateLimit-Limit-second': '2', 'X-RateLimit-Remaining-second': '1', 'X-RateLimit-Reset-second': '1', 'Retry-After-minute': '60' }],
  // So 'second' still holds one request (under ThrottlerGuard it would hold two, and refuse); 'minute' is blocked.
  [2_200, 1, 429, { 'X-RateLimit-Limit-second': '2', 'X-RateLimit-Remaining-second': '1', 'X-RateLimit-Reset-second': '1', 'Retry-After-minute': '60' }],
];
/** After SCHEDULE: the block is over, and 'minute' counted none of the requests refused. */
const AFTER_BLOCK: Step = [62_000, 0, 200, admitted([1, 1], [2, 60])];
/** When SCHEDULE's last request was sent, ms after the start. */
const LAST_MS = 2_200;
/** What each throttler's log holds after SCHEDULE, in ms after the start: the admitted requests only (those 'second' still keeps). */
const RECORDED = { second: [1_500], minute: [0, 500, 1_500] };

const BODY = JSON.stringify({ statusCode: 429, message: 'ThrottlerException: Too Many Requests' });

/** Sends the steps at their moments, `during` wrapped around each request; returns what was answered, as the steps are written. */
async function run(
  apps: readonly RunningApp[],
  clock: TestClock,
  start: number,
  steps: readonly Step[],
  during: (send: () => Promise<void>) => Promise<void>,
): Promise<Step[]> {
  const seen: Step[] = [];
  for (const [atMs, app] of steps) {
    clock.now = start + Math.round(atMs * 1000);
    await during(async () => {
      const answer = await send(apps[app] as RunningApp);
      if (answer.status === 429) expect(answer.body).to.equal(BODY);
      seen.push([atMs, app, answer.status, answer.headers]);
    });
  }
  return seen;
}

describe('RollingWindowThrottlerGuard', function () {
  this.timeout(60_000);
  let apps: RunningApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()));
    apps = [];
  });

  describe('two applications on one real Redis', () => {
    let redis: UsedRedis | undefined;
    let admin: Redis | undefined;
    const clients: Redis[] = [];

    before(async () => {
      redis = await useRedis();
      admin = new Redis(redis.url);
      await admin.script('LOAD', HIT_LOG_SCRIPT.lua); // so that no request pays a NOSCRIPT retry
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.quit()));
    });
    after(async () => {
      await admin?.quit();
      await redis?.stop();
    });

    /** Two storages, each on its own connection to the shared server, with one namespace and the shared clock. */
    function storages(clock: TestClock, namespace = namespaces.next()): RollingWindowThrottlerStorage[] {
      return [0, 1].map(() => {
        const client = new Redis((redis as UsedRedis).url);
        clients.push(client);
        return new RollingWindowThrottlerStorage({ client, namespace, clock: clock.read });
      });
    }

    /** Counts the script calls of each request (EVALSHA and EVAL; MULTI too, which none should send). */
    function counting(calls: number[]): (send: () => Promise<void>) => Promise<void> {
      return async (send) => {
        const counts = await commandsDuring(admin as Redis, send);
        calls.push(counts.evalsha + counts.eval + counts.multi);
      };
    }

    /** Each throttler's log in the namespace, in ms after `start`. */
    async function logs(namespace: string, start: number): Promise<Record<string, number[]>> {
      const found: Record<string, number[]> = {};
      for (const key of await (admin as Redis).keys(`${escapeIdentifier(namespace)}:*`)) {
        if (key.endsWith(':rules') || key.endsWith(':block')) continue;
        const name = /"(second|minute)"/.exec(key)?.[1] as string;
        const scores = await (admin as Redis).zrange(key, 0, -1, 'WITHSCORES');
        found[name] = scores.filter((_, i) => i % 2 === 1).map((score) => (Number(score) - start) / 1000);
      }
      return found;
    }

    for (const platforms of [
      ['express', 'fastify'],
      ['fastify', 'express'],
    ] as const) {
      it(`decides both throttlers in one script call per request, together (${platforms.join(' + ')})`, async () => {
        const clock = new TestClock();
        const namespace = namespaces.next();
        apps = await startApps(platforms, storages(clock, namespace), RollingWindowThrottlerGuard);
        const calls: number[] = [];
        expect(await run(apps, clock, clock.now, SCHEDULE, counting(calls))).to.deep.equal(SCHEDULE);
        expect(calls, 'script calls per request').to.deep.equal(SCHEDULE.map(() => 1));
        expect(await logs(namespace, clock.now - LAST_MS * 1000)).to.deep.equal(RECORDED);
        expect(await run(apps, clock, clock.now - LAST_MS * 1000, [AFTER_BLOCK], counting(calls))).to.deep.equal([AFTER_BLOCK]);
      });
    }

    it('where ThrottlerGuard makes one script call per throttler, and counts the request a later throttler refuses', async () => {
      const clock = new TestClock();
      const namespace = namespaces.next();
      apps = await startApps(['express', 'fastify'], storages(clock, namespace), ThrottlerGuard);
      const calls: number[] = [];
      const seen = await run(apps, clock, clock.now, SCHEDULE, counting(calls));
      expect(calls, 'script calls per request').to.deep.equal([2, 2, 1, 2, 2, 1]);
      expect(seen[4]?.[3], 'the request minute refuses').to.deep.equal({
        'X-RateLimit-Limit-second': '2',
        'X-RateLimit-Remaining-second': '0',
        'X-RateLimit-Reset-second': '1',
        'Retry-After-minute': '60',
      });
      expect(seen[5]?.[3], "counted by 'second'").to.deep.equal({ 'Retry-After-second': '1' });
      expect(await logs(namespace, clock.now - LAST_MS * 1000)).to.deep.equal({ second: [1_500, 2_000], minute: [0, 500, 1_500] });
    });
  });

  describe('in memory (one storage shared by two applications)', () => {
    it('decides both throttlers in one storage call per request, together', async () => {
      const clock = new TestClock();
      const storage = new RollingWindowThrottlerStorage({ clock: clock.read });
      const together = sinon.spy(storage, 'incrementAll');
      const apart = sinon.spy(storage, 'increment');
      apps = await startApps(['express', 'fastify'], [storage, storage], RollingWindowThrottlerGuard);
      const start = clock.now;
      const calls: number[] = [];
      const counting = async (send: () => Promise<void>): Promise<void> => {
        const before = together.callCount;
        await send();
        calls.push(together.callCount - before);
      };
      expect(await run(apps, clock, start, [...SCHEDULE, AFTER_BLOCK], counting)).to.deep.equal([...SCHEDULE, AFTER_BLOCK]);
      expect(calls).to.deep.equal([...SCHEDULE, AFTER_BLOCK].map(() => 1));
      expect(apart.callCount, 'increment, once per throttler').to.equal(0);
      expect(together.firstCall.args[0].map(({ throttlerName, ttl, limit, blockDuration }) => [throttlerName, ttl, limit, blockDuration])).to.deep.equal([
        ['second', 1_000, 2, 0],
        ['minute', 60_000, 3, 60_000],
      ]);
    });

    it('answers as ThrottlerGuard (headers, 429 and body) while their decisions agree', async () => {
      const agreeing = SCHEDULE.slice(0, 4).map(([atMs, app]) => [atMs, app, 0, {}] as Step);
      const answers = [];
      for (const guard of [ThrottlerGuard, RollingWindowThrottlerGuard]) {
        const clock = new TestClock();
        const storage = new RollingWindowThrottlerStorage({ clock: clock.read });
        apps = await startApps(['express', 'fastify'], [storage, storage], guard);
        answers.push(await run(apps, clock, clock.now, agreeing, (send) => send()));
        await Promise.all(apps.splice(0).map((app) => app.close()));
      }
      expect(answers[1]).to.deep.equal(answers[0]);
      expect(answers[1]).to.deep.equal(SCHEDULE.slice(0, 4));
    });

    it('is ThrottlerGuard with any other storage', async () => {
      const clock = new TestClock();
      const storage = new RollingWindowThrottlerStorage({ clock: clock.read });
      const other = { increment: storage.increment.bind(storage) };
      const spy = sinon.spy(other, 'increment');
      const notOurs = other as unknown as RollingWindowThrottlerStorage;
      apps = await startApps(['express', 'fastify'], [notOurs, notOurs], RollingWindowThrottlerGuard);
      expect(await run(apps, clock, clock.now, SCHEDULE.slice(0, 3), (send) => send())).to.deep.equal(SCHEDULE.slice(0, 3));
      expect(spy.callCount, "one per throttler, then the refusing one's").to.equal(5);
    });
  });
});
