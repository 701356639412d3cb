// The scores a limiter on the default clock writes to Redis are the wall
// clock's, never ahead of it, however busy the process has been: the clock is
// shared by every limiter of the process, and one that ran ahead would write
// scores in the future and drop other processes' actions early
// (test/soak/local-clock-exactness.test.ts has the in-memory schedules).

import { expect } from 'chai';
import { Redis } from 'ioredis';
import { localMicroseconds } from '../../src/core/clock.js';
import { RollingRateLimiter } from '../../src/index.js';
import { KeyBuilder } from '../../src/core/identity.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { useIORedisClient } from '../support/ioredis-client.js';
import { RECORDS_FROM } from '../support/redis-keys.js';

describe("the 'local' clock's scores on real Redis", function () {
  this.timeout(60_000);
  const connection = useIORedisClient();
  let client: Redis;
  const namespaces = uniqueNamespaces('local-clock');
  before(() => {
    client = connection.client;
  });

  it('after 1.5 million in-memory decisions, a Redis limiter writes scores no later than the wall clock', async () => {
    const busy = new RollingRateLimiter({ interval: 1000, maxInInterval: 10 });
    for (let i = 0; i < 1_500_000; i += 1) await busy.limit(`other-${i % 10_000}`);
    for (let i = 0; i < 1_500_000; i += 1) localMicroseconds();
    for (const countBlocked of [true, false]) {
      const namespace = namespaces.next();
      const limiter = new RollingRateLimiter({ client, namespace, interval: 3000, maxInInterval: 5, countBlocked });
      let admitted = 0;
      for (let i = 0; i < 10; i += 1) if (!(await limiter.limit('shared'))) admitted += 1;
      const wallEndUs = (Date.now() + 1) * 1000;
      const scores = (await client.zrangebyscore(new KeyBuilder(namespace).keyFor('shared'), RECORDS_FROM, '+inf', 'WITHSCORES'))
        .filter((_, i) => i % 2 === 1)
        .map(Number);
      console.log(
        `      countBlocked ${String(countBlocked)}: ${admitted} of 10 admitted; newest score ${wallEndUs - 1 - Math.max(...scores)} µs before the wall clock's millisecond ends`,
      );
      expect(admitted).to.equal(5);
      expect(scores).to.have.length(5);
      for (const score of scores) expect(score, 'a score in the future').to.be.below(wallEndUs);
    }
  });
});
