// Queue consumers on real Redis: several workers, each with its own
// connection, share one upload quota through waitUntilAllowed. All the work
// gets done, and never faster than the limit.

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../src/index.js';
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
      const uploadedAt: number[] = [];
      const worker = async (connection: Redis): Promise<void> => {
        const limiter = new RollingRateLimiter({ client: connection, namespace, interval: 1000, maxInInterval: 10, countBlocked });
        for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
          await limiter.waitUntilAllowed('seller-1', { maxWaitMs: 20_000 });
          uploadedAt.push(performance.now());
        }
      };
      const started = performance.now();
      await Promise.all(connections.map(worker));
      const elapsed = performance.now() - started;
      expect(uploadedAt).to.have.length(40);
      // Any window a little shorter than the interval (less a round trip of slack) holds at most 10 admissions.
      for (const at of uploadedAt) expect(uploadedAt.filter((other) => other > at - 980 && other <= at).length).to.be.at.most(10);
      expect(elapsed).to.be.at.least(3000);
      console.log(`      countBlocked ${String(countBlocked)}: 40 uploads by 8 workers in ${Math.round(elapsed)} ms (the limit allows 3000 ms at best)`);
    });
  }
});
