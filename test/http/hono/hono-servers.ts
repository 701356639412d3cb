// A child process for test/http/hono/two-processes.test.ts: one site's
// process, rate-limited on the Redis at the given URL, serving
//   - a Hono app on @hono/node-server with rolling-window-limiter/hono, keyed
//     by connInfo, on 127.0.0.1 (`hono4`) and on ::1 (`hono6`), and
//   - an Express app with rolling-window-limiter/express (`express`), on 127.0.0.1,
// both with limiters on one clock the parent sets: each `now <microseconds>`
// line on stdin sets it and is answered `ok`. The connInfo is the adapter's
// own `getConnInfo`, except that a request with `x-test-address` is taken to
// come from that address (as an adapter would report a client that has it).
//
// Started with test/support/child-process.ts: args [redisUrl, namespace, windowMs, limit].
// Prints `{"hono4":port,"hono6":port,"express":port}` once it serves; closes
// everything and exits when stdin ends.

import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import express from 'express';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../../src/index.js';
import { rateLimit as expressRateLimit } from '../../../src/http/express/express-middleware.js';
import { rateLimit } from '../../../src/http/hono/hono-middleware.js';
import { followClockCommands } from '../../support/clock-commands.js';

const [redisUrl = '', namespace = 'hono', windowText, limitText] = process.argv.slice(2);
let now = 0;
const limiterFor = (suffix: string): RollingRateLimiter =>
  // The mode the HTTP guide recommends for an API; the clock is the parent's.
  new RollingRateLimiter({
    client,
    namespace: `${namespace}:${suffix}`,
    interval: Number(windowText),
    maxInInterval: Number(limitText),
    countBlocked: false,
    clock: () => now,
  });

const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
client.on('error', () => undefined); // failures reach the requests; the tests read them there

const hono = new Hono();
hono.use(
  rateLimit({
    limiter: limiterFor('hono'),
    policyName: () => 'api',
    connInfo: (c) => {
      const address = c.req.header('x-test-address');
      return address === undefined ? getConnInfo(c) : { remote: { address } };
    },
  }),
);
hono.get('/', (c) => c.text('ok'));

const app = express();
app.use(expressRateLimit({ limiter: limiterFor('express'), policyName: () => 'api' }));
app.get('/', (_req, res) => void res.type('text/plain').send('ok'));

function listen(server: ServerType): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => resolve((server.address() as AddressInfo).port));
  });
}

const servers: ServerType[] = [
  serve({ fetch: hono.fetch, hostname: '127.0.0.1', port: 0 }),
  serve({ fetch: hono.fetch, hostname: '::1', port: 0 }),
  app.listen(0, '127.0.0.1'),
];
const [hono4, hono6, expressPort] = await Promise.all(servers.map(listen));
console.log(JSON.stringify({ hono4, hono6, express: expressPort }));

followClockCommands(
  (microseconds) => {
    now = microseconds;
  },
  () => {
    for (const server of servers) {
      if ('closeAllConnections' in server) server.closeAllConnections();
      server.close();
    }
    void client.quit().finally(() => process.exit(0));
  },
);
