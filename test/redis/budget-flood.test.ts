// A flood of blocked requests on a budget through the Express middleware, on real Redis (docs/semantics.md, "Bounds
// and shared namespaces"): every request gets an action id of its own (so that its handler can settle it), and
// blocked attempts count. The ids the middleware makes are single-use, so a blocked request is recorded as one
// without an id and the flood bound trims it: the key, its companion and its weights stay at a few times
// maxCostInInterval / cost records, and the work Redis does per request stays flat from the first thousand
// requests to the last. (0.4.3 kept every blocked request's record: 3,000 records, 3,005 weights after 3,000
// requests, and Redis time per call growing linearly.) The work is counted in commands the scripts run, which a
// loaded machine does not change; Redis's time per call is in docs/benchmarks.md.

import { expect } from 'chai';
import express from 'express';
import { RollingRateLimiter } from '../../src/index.js';
import { rateLimit } from '../../src/http/express/express-middleware.js';
import { actionRecordsKey, recordWeightsKey } from '../../src/core/identity.js';
import { serve, type RunningServer } from '../http/http-helpers.js';
import { useIORedisClient } from '../support/ioredis-client.js';
import { uniqueNamespaces } from '../support/namespaces.js';
import { keyOf, recordCount } from '../support/redis-keys.js';

/** Commands the scripts ran, by name, from INFO commandstats (the calls themselves left out). */
function commandsRun(stats: string): number {
  let total = 0;
  for (const match of stats.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) {
    if (!['evalsha', 'eval', 'info', 'config', 'script', 'ping', 'client', 'hello', 'select'].includes(match[1] as string)) total += Number(match[2]);
  }
  return total;
}

describe('a flood of blocked requests on a budget through the Express middleware (real Redis)', function () {
  this.timeout(180_000);
  const connection = useIORedisClient();
  const namespaces = uniqueNamespaces('budget-flood');
  let server: RunningServer | undefined;
  after(async () => {
    await server?.close();
  });

  it('10,000 requests of cost 10 on a budget of 1,000: bounded records, and the same work per request from the first thousand to the last', async () => {
    const budget = 1_000;
    const cost = 10;
    const limiter = new RollingRateLimiter({ client: connection.client, namespace: namespaces.next(), interval: 60_000, maxCostInInterval: budget });
    const app = express();
    app.use(rateLimit({ limiter, cost }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    server = await serve(app);
    const url = `${server.url}/`;
    const key = keyOf(limiter.namespace, '127.0.0.1');
    const thousands: { commands: number; records: number; actions: number; weights: number }[] = [];
    const statuses = new Map<number, number>();
    await connection.client.config('RESETSTAT');
    let before = 0;
    for (let thousand = 0; thousand < 10; thousand += 1) {
      for (let batch = 0; batch < 1_000; batch += 20) {
        const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(url)));
        for (const answer of answers) {
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          await answer.arrayBuffer();
        }
      }
      const ran = commandsRun(await connection.client.info('commandstats'));
      thousands.push({
        commands: (ran - before) / 1_000,
        records: await recordCount(connection.client, key),
        actions: await connection.client.zcard(actionRecordsKey(key)),
        weights: await connection.client.hlen(recordWeightsKey(key)),
      });
      before = commandsRun(await connection.client.info('commandstats'));
    }
    expect(statuses.get(200), 'admitted: the budget').to.equal(budget / cost);
    expect(statuses.get(429), 'blocked: the rest').to.equal(10_000 - budget / cost);
    const bound = 3 * (budget / cost);
    for (const [i, { records, actions, weights }] of thousands.entries()) {
      expect(records, `records after ${i + 1},000 requests`).to.be.at.most(bound);
      expect(actions, `the companion after ${i + 1},000 requests: the admitted actions`).to.be.at.most(budget / cost);
      expect(weights, `weights after ${i + 1},000 requests`).to.be.at.most(bound + 5);
    }
    const first = (thousands[0] as { commands: number }).commands;
    const last = (thousands[9] as { commands: number }).commands;
    expect(last, `commands per request: ${thousands.map(({ commands }) => commands.toFixed(1)).join(', ')}`).to.be.at.most(1.5 * first);
  });
});
