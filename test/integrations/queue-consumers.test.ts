// Queue consumers on real Redis: several workers, each with its own
// connection, share one upload quota through waitUntilAllowed. All the work
// gets done, and never faster than the limit. The admission times checked are
// the limiter's own (each worker's limiter reads an injected clock, and the
// last reading before an admission is the admitted attempt's timestamp), not
// the moments the workers woke up: a loaded machine may resume an `await` late.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../src/index.js';
import { localMicroseconds } from '../../src/core/clock.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useRedis } from '../support/redis-server.js';

describe('queue consumers waiting on real Redis', () => {
  let redis: Awaited<ReturnType<typeof useRedis>>;
  const connections: Redis[] = [];
  const namespaces = uniqueNamespaces('queue');
  before(async () => {
    redis = await useRedis();
    for (let i = 0; i < 8; i += 1) connections.push(new Redis(redis.url));
  });
  after(async () => {
    await Promise.all(connections.map((connection) => connection.quit()));
    await redis?.stop();
  });

  for (const countBlocked of [false, true]) {
    it(`8 workers upload 40 products through 10 per second, all done, never faster (countBlocked: ${String(countBlocked)})`, async function () {
      this.timeout(30_000);
      const namespace = namespaces.next();
      const queue = Array.from({ length: 40 }, (_, i) => `product-${i}`);
      /** The admitted attempts' timestamps, in microseconds. */
      const admittedAtUs: number[] = [];
      const worker = async (connection: Redis): Promise<void> => {
        // A worker waits for one upload at a time, so its clock's last reading is its admitted attempt's time.
        let lastReadUs = 0;
        const clock = (): number => (lastReadUs = localMicroseconds());
        const limiter = new RollingRateLimiter({ client: connection, namespace, interval: 1000, maxInInterval: 10, countBlocked, clock });
        for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
          await limiter.waitUntilAllowed('seller-1', { maxWaitMs: 20_000 });
          admittedAtUs.push(lastReadUs);
        }
      };
      await Promise.all(connections.map(worker));
      expect(admittedAtUs).to.have.length(40);
      // Every window of the interval, (t - 1 s, t], holds at most 10 admissions: exactly the limit, no slack.
      const busiest = Math.max(...admittedAtUs.map((at) => admittedAtUs.filter((other) => other > at - 1_000_000 && other <= at).length));
      expect(busiest, 'admissions in the busiest 1000 ms window').to.be.at.most(10);
      const spanMs = (Math.max(...admittedAtUs) - Math.min(...admittedAtUs)) / 1000;
      expect(spanMs, 'first to last admission').to.be.at.least(3000);
      console.log(
        `      countBlocked ${String(countBlocked)}: 40 uploads by 8 workers, admitted over ${Math.round(spanMs)} ms (the limit allows 3000 ms at best), at most ${busiest} in any 1000 ms`,
      );
    });
  }
});
