// @RateLimit with RollingWindowGuard in Nest applications on Express and on
// Fastify: the double click refused by the least gap, an exact rolling
// window, the signed-in user as the key (set by an auth guard that runs
// first), else the client IP, and the Express middleware's headers and 429.
// Two applications share one real redis-server (each on its own connection),
// or each keeps its limits in memory; time comes from an injected clock, so
// every admission is decided at an exact moment.

import { Controller, Get, Post, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createDefaultKey } from '../../../src/integrations/nestjs/guard-options.js';
import { RateLimit, RollingWindowGuard, type RollingWindowGuardOptions } from '../../../src/integrations/nestjs/index.js';
import { uniqueNamespaces } from '../../support/namespaces.js';
import { useRedis, type UsedRedis } from '../../support/redis-server.js';
import { TestClock } from '../../support/test-clock.js';
import { send, startApp, type Platform, type RunningApp } from './nest-apps.js';

/** Signs in the user named by the `x-user` header, as an auth guard (Passport's, say) leaves `request.user`. */
class HeaderAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; user?: { id: string } }>();
    const name = request.headers['x-user'];
    if (name !== undefined) request.user = { id: name };
    return true;
  }
}

@Controller('orders')
class OrdersController {
  /** At most 3 orders in any 10 s, at least 1 s apart. */
  @RateLimit({ interval: '10s', maxInInterval: 3, minDifference: '1s' })
  @Post()
  create(): string {
    return 'ordered';
  }

  @Get()
  list(): string {
    return 'unlimited';
  }
}

const namespaces = uniqueNamespaces('nest-guard');
const POLICY = '"OrdersController.create";q=3;w=10';

/** At each moment (ms after the start, on the shared clock), one POST to the app given, as the user given. */
type Step = readonly [atMs: number, app: 0 | 1, user: string | undefined, status: number, headers: Record<string, string>];

const SCHEDULE: Step[] = [
  [0, 0, 'alice', 201, { 'RateLimit-Policy': POLICY, RateLimit: '"OrdersController.create";r=0;t=1' }],
  // The double click: 500 ms later, on the other app. Refused by the gap, and counted (countBlocked).
  [500, 1, 'alice', 429, { 'RateLimit-Policy': POLICY, RateLimit: '"OrdersController.create";r=0;t=1', 'Retry-After': '1' }],
  [1_500, 0, 'alice', 201, { 'RateLimit-Policy': POLICY, RateLimit: '"OrdersController.create";r=0;t=9' }],
  // Three in the window (0, 0.5 s, 1.5 s): refused until 0.5 s leaves it, 10.5 s.
  [2_500, 1, 'alice', 429, { 'RateLimit-Policy': POLICY, RateLimit: '"OrdersController.create";r=0;t=8', 'Retry-After': '8' }],
  // Another user, and a client without one (keyed by its IP): limits of their own.
  [2_600, 0, 'bob', 201, { 'RateLimit-Policy': POLICY, RateLimit: '"OrdersController.create";r=0;t=1' }],
  [2_700, 1, undefined, 201, { 'RateLimit-Policy': POLICY, RateLimit: '"OrdersController.create";r=0;t=1' }],
  // Exactly when Retry-After said: the window (0.5 s, 10.5 s] holds 1.5 s and 2.5 s.
  [10_500, 0, 'alice', 201, { 'RateLimit-Policy': POLICY, RateLimit: '"OrdersController.create";r=0;t=1' }],
];

async function run(apps: readonly RunningApp[], clock: TestClock, steps: readonly Step[]): Promise<void> {
  const start = clock.now;
  const seen: Step[] = [];
  for (const [atMs, app, user] of steps) {
    clock.now = start + Math.round(atMs * 1000);
    const answer = await send(`${(apps[app] as RunningApp).url}/orders`, { method: 'POST', headers: user === undefined ? {} : { 'x-user': user } });
    seen.push([atMs, app, user, answer.status, answer.headers]);
    if (answer.status === 429)
      expect(JSON.parse(answer.body)).to.deep.equal({ error: 'rate_limited', retryAfterSeconds: Number(answer.headers['Retry-After']) });
  }
  expect(seen).to.deep.equal(steps);
}

/** Two applications of `platforms`, each guarded app-wide by the auth guard, then its own RollingWindowGuard. */
function startApps(platforms: readonly [Platform, Platform], options: readonly [RollingWindowGuardOptions, RollingWindowGuardOptions]): Promise<RunningApp[]> {
  return Promise.all(
    platforms.map((platform, i) =>
      startApp(platform, {
        controllers: [OrdersController],
        providers: [
          { provide: APP_GUARD, useClass: HeaderAuthGuard },
          { provide: APP_GUARD, useValue: new RollingWindowGuard(options[i]) },
        ],
      }),
    ),
  );
}

describe('@RateLimit with RollingWindowGuard', function () {
  this.timeout(60_000);
  let apps: RunningApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.map((app) => app.close()));
    apps = [];
  });

  describe('two applications on one real Redis', () => {
    let redis: UsedRedis | undefined;
    const clients: Redis[] = [];
    before(async () => {
      redis = await useRedis();
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.quit()));
    });
    after(async () => {
      await redis?.stop();
    });

    /** Guard options for two apps: each its own connection to the shared server, one namespace, the shared clock. */
    function shared(clock: TestClock): [RollingWindowGuardOptions, RollingWindowGuardOptions] {
      const namespace = namespaces.next();
      const make = (): RollingWindowGuardOptions => {
        const client = new Redis((redis as UsedRedis).url);
        clients.push(client);
        return { client, namespace, clock: clock.read };
      };
      return [make(), make()];
    }

    for (const platforms of [
      ['express', 'express'],
      ['fastify', 'fastify'],
      ['express', 'fastify'],
    ] as const) {
      it(`refuses the double click and admits exactly on a rolling window, per user (${platforms.join(' + ')})`, async () => {
        const clock = new TestClock();
        apps = await startApps(platforms, shared(clock));
        await run(apps, clock, SCHEDULE);
      });
    }
  });

  describe('in memory', () => {
    for (const platform of ['express', 'fastify'] as const) {
      it(`decides the same schedule on one application (${platform})`, async () => {
        const clock = new TestClock();
        apps = await startApps([platform, platform], [{ clock: clock.read }, { clock: clock.read }]);
        const app = apps[0] as RunningApp;
        await run([app, app], clock, SCHEDULE);
      });
    }

    it('leaves a handler without a rule alone: no limit, no headers', async () => {
      apps = await startApps(['express', 'fastify'], [{}, {}]);
      for (const app of apps) {
        for (let i = 0; i < 5; i += 1) expect(await send(`${app.url}/orders`)).to.deep.include({ status: 200, headers: {}, body: 'unlimited' });
      }
    });

    it('writes the legacy headers with headers: both', async () => {
      const clock = new TestClock();
      apps = await startApps(
        ['fastify', 'express'],
        [
          { clock: clock.read, headers: 'both' },
          { clock: clock.read, headers: 'both' },
        ],
      );
      for (const app of apps) {
        const { headers } = await send(`${app.url}/orders`, { method: 'POST' });
        expect(headers).to.include({ 'RateLimit-Policy': POLICY, 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1' });
      }
    });
  });

  describe('its options', () => {
    it('keys by the signed-in user, else by the client IP (IPv6 by its /56, IPv4-mapped as IPv4)', () => {
      const key = createDefaultKey(56);
      expect(key({ user: { id: 42 }, ip: '203.0.113.7' })).to.equal('user:42');
      expect(key({ user: { id: '' }, ip: '203.0.113.7' })).to.equal('ip:203.0.113.7');
      expect(key({ user: null, ip: '2001:db8:aa:bb01::1' })).to.equal('ip:2001:db8:aa:bb00::/56');
      expect(key({ ip: '::ffff:203.0.113.7' })).to.equal('ip:203.0.113.7');
      expect(key({ socket: { remoteAddress: '[2001:db8::1]:443' } })).to.equal('ip:2001:db8::/56');
      expect(createDefaultKey(false)({ ip: '2001:db8::1' })).to.equal('ip:2001:db8::1');
      expect(key({})).to.equal(undefined);
      expect(() => key({ ip: 'not-an-ip' })).to.throw(TypeError, /not an IP address/);
    });

    it('refuses unknown options and bad values at once, naming them', () => {
      expect(() => new RollingWindowGuard({ limiter: 1 } as never)).to.throw(TypeError, /Unknown option `limiter`/);
      expect(() => new RollingWindowGuard({ ipv6Subnet: 16 })).to.throw(RangeError, /`ipv6Subnet`/);
      expect(() => new RollingWindowGuard({ clock: 'wall' as never })).to.throw(RangeError, /`clock`/);
      expect(() => RateLimit({ interval: '1s', maxInInterval: 0 })).to.throw(RangeError, /`maxInInterval`/);
      expect(() => RateLimit({ interval: '1s', maxInInterval: 1, minDifference: '2s' })).to.throw(RangeError, /`minDifference`/);
      expect(() => RateLimit({ interval: '1s', maxInInterval: 1, every: 1 } as never)).to.throw(TypeError, /Unknown option `every`/);
    });
  });
});
