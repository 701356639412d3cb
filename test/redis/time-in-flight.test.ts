// Calls in flight (docs/semantics.md, "Time in flight"): a call is stamped in
// the caller and may reach Redis later, after a stall or behind other calls,
// and out of stamp order. On every Redis path a decision stays exact for every
// call Redis runs within `timeout` of its stamp. Two deterministic schedules:
//
// - a stall: Redis paused (CLIENT PAUSE from another connection) for longer
//   than the interval, while an attempt stamped inside an admitted action's
//   window waits; before, the key had expired when it ran, and it was admitted;
// - a reordering: an attempt held behind a blocking command on its connection
//   while a later-stamped attempt on another connection runs first; before,
//   the later one forgot the records the earlier one still had to count.
//
// Stamps are read from the limiters' clocks, never from when an await resumed.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { localMicroseconds } from '../../src/core/clock.js';
import { RollingRateLimiter, type RollingRateLimiterOptions } from '../../src/index.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useIORedisClient } from '../support/ioredis-client.js';

/** The Redis paths a limiter decides by, as options. */
const PATHS: { readonly name: string; readonly options: Partial<RollingRateLimiterOptions> }[] = [
  { name: 'the decide script', options: {} },
  { name: 'the decide script, countBlocked: false', options: { countBlocked: false } },
  { name: 'batch: true', options: { batch: true } },
  { name: 'the MULTI path (useScript: false)', options: { useScript: false } },
];

describe('time in flight: calls that reach Redis late or out of stamp order', function () {
  this.timeout(60_000);
  const connection = useIORedisClient();
  const namespaces = uniqueNamespaces('in-flight');
  const others: Redis[] = [];
  const connect = (): Redis => {
    const client = new Redis(connection.url);
    others.push(client);
    return client;
  };
  after(async () => {
    await Promise.all(others.map((client) => client.quit()));
  });

  for (const path of PATHS) {
    it(`${path.name}: an attempt stamped inside an action's window is blocked though Redis paused longer than the interval`, async () => {
      const stamps: number[] = [];
      const limiter = new RollingRateLimiter({
        client: connection.client,
        namespace: namespaces.next(),
        interval: 1000,
        maxInInterval: 1,
        timeout: 10_000,
        ...path.options,
        clock: () => {
          const now = localMicroseconds();
          stamps.push(now);
          return now;
        },
      });
      expect(await limiter.limitWithInfo('user')).to.include({ blocked: false });
      // Paused from another connection for 1.5 intervals; the attempt is stamped now and runs when Redis resumes.
      await connect().call('CLIENT', 'PAUSE', '1500', 'ALL');
      const stalled = await limiter.limitWithInfo('user');
      const [admittedAt, stalledAt] = stamps as [number, number];
      expect(stalledAt - admittedAt, "the second attempt is stamped inside the first one's window").to.be.below(1_000_000);
      expect(stalled).to.include({ blocked: true, blockedDueToCount: true });
    });

    it(`${path.name}: an attempt held behind a blocking command still counts what a later-stamped attempt found first`, async () => {
      const namespace = namespaces.next();
      const rules = { namespace, interval: 10_000, maxInInterval: 2, timeout: 10_000, ...path.options };
      let heldNow = 0;
      let firstNow = 0;
      const held = connect();
      const heldLimiter = new RollingRateLimiter({ ...rules, client: held, clock: () => heldNow });
      const first = new RollingRateLimiter({ ...rules, client: connect(), clock: () => firstNow });
      const t0 = Date.UTC(2026, 0, 1) * 1000;
      // Two actions at t0 and t0 + 1 µs fill the window.
      heldNow = t0;
      expect(await heldLimiter.limit('user')).to.equal(false);
      heldNow = t0 + 1;
      expect(await heldLimiter.limit('user')).to.equal(false);
      // Stamped 1 ms before the first action leaves the window: it must be blocked. Its connection is busy for
      // 300 ms with a BLPOP, so it reaches Redis after an attempt stamped 3 ms later (when both actions have left
      // that one's window) on another connection.
      const blocking = held.blpop('in-flight:nothing', 0.3);
      heldNow = t0 + 10_000_000 - 1000;
      const order: string[] = [];
      const late = heldLimiter.limitWithInfo('user').then((info) => {
        order.push('late');
        return info;
      });
      firstNow = t0 + 10_000_000 + 2000;
      const early = await first.limitWithInfo('user');
      order.push('early');
      const [lateInfo] = await Promise.all([late, blocking]);
      expect(order, 'the later-stamped attempt ran first').to.deep.equal(['early', 'late']);
      expect(early).to.include({ blocked: false });
      // Its window (t0 - 1 ms, t0 + 10 s - 1 ms] holds both actions (and the attempt that arrived first shares a
      // window with it): admitting it would make three.
      expect(lateInfo).to.include({ blocked: true, blockedDueToCount: true });
    });
  }
});
