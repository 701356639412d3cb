// A server process for test/runtimes/bun.test.ts, run under Bun with the
// built-package.ts preload (so both imports of src/ below are the installed
// package's entries): a Hono app on Bun.serve, rate-limited by
// rolling-window-limiter/hono keyed by `getConnInfo` of 'hono/bun', on the
// Redis at the given URL through ioredis, served on 127.0.0.1 (`hono4`) and on
// ::1 (`hono6`), as test/http/hono/hono-servers.ts does on Node. The limiter's clock is the parent's: each
// `now <microseconds>` line on stdin sets it and is answered `ok`.
//
// Args: [redisUrl, namespace, windowMs, limit]. Prints
// `{"hono4":port,"hono6":port,"library":path,"hono":path}` once it serves; stops
// both servers, quits Redis and exits when stdin ends.

import { Hono } from 'hono';
import { getConnInfo } from 'hono/bun';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from '../../../src/index.js';
import { rateLimit } from '../../../src/http/hono/hono-middleware.js';
import { HONO_ENTRY, LIBRARY_ENTRY } from './built-package.js';
import { followClockCommands } from '../../support/clock-commands.js';

interface BunServer {
  readonly port: number;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
interface BunServe {
  serve(options: { hostname: string; port: number; fetch: (request: Request, server: BunServer) => Response | Promise<Response> }): BunServer;
}
const bun = (globalThis as unknown as { Bun?: BunServe }).Bun;
if (bun === undefined) throw new Error('test/runtimes/bun/hono-server.ts runs under Bun');

const [redisUrl = '', namespace = 'bun-hono', windowText, limitText] = process.argv.slice(2);
let now = 0;
const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
client.on('error', () => undefined); // failures reach the requests; the test reads them there
// The mode the HTTP guide recommends for an API; the clock is the parent's.
const limiter = new RollingRateLimiter({
  client,
  namespace,
  interval: Number(windowText),
  maxInInterval: Number(limitText),
  countBlocked: false,
  clock: () => now,
});

const app = new Hono();
app.use(rateLimit({ limiter, policyName: () => 'api', connInfo: getConnInfo }));
app.get('/', (c) => c.text('ok'));

const servers = ['127.0.0.1', '::1'].map((hostname) => bun.serve({ hostname, port: 0, fetch: app.fetch }));
console.log(JSON.stringify({ hono4: servers[0]?.port, hono6: servers[1]?.port, library: LIBRARY_ENTRY, hono: HONO_ENTRY }));

followClockCommands(
  (microseconds) => {
    now = microseconds;
  },
  () => {
    void Promise.all(servers.map((server) => server.stop(true)))
      .then(() => client.quit())
      .finally(() => process.exit(0));
  },
);
