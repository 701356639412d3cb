// A child process for the HTTP integration tests (test/http/stores/two-processes.test.ts):
// one web server, on 127.0.0.1 and a free port, rate-limited on the Redis at
// the given URL by this library's Express middleware (`express`), by
// express-rate-limit with RollingWindowStore, or by @fastify/rate-limit with
// rollingWindowStore. Several of these share one Redis, as the processes of
// one site do.
//
// Started with `fork(thisFile, [kind, redisUrl, prefix, windowMs, limit], { execArgv: ['--import', 'tsx'] })`.
// Says `{ type: 'listening', port }` once it serves; exits when the parent
// disconnects (or on SIGTERM), closing the server and the Redis client.

import { Redis } from 'ioredis';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import type { AddressInfo } from 'node:net';
import { RollingRateLimiter } from '../../../src/index.js';
import { rateLimit as rollingRateLimit } from '../../../src/http/express/express-middleware.js';
import { RollingWindowStore } from '../../../src/http/stores/express-rate-limit-store.js';
import { rollingWindowStore } from '../../../src/http/stores/fastify-store.js';

const [kind, redisUrl, prefix = 'rl:', windowText, limitText] = process.argv.slice(2);
const windowMs = Number(windowText);
const limit = Number(limitText);

/** What the parent hears from this process. */
export type StoreServerMessage = { readonly type: 'listening'; readonly port: number } | { readonly type: 'error'; readonly error: string };

async function main(): Promise<() => Promise<void>> {
  const client = new Redis(redisUrl ?? '', { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined); // failures reach the requests; the tests read them there
  if (kind === 'express' || kind === 'express-rate-limit') {
    const app = express();
    app.set('trust proxy', 1); // the tests send X-Forwarded-For as a proxy would
    if (kind === 'express') {
      // The mode the HTTP guide recommends for an API.
      const limiter = new RollingRateLimiter({ client, namespace: prefix, interval: windowMs, maxInInterval: limit, countBlocked: false });
      app.use(rollingRateLimit({ limiter, policyName: () => 'api' }));
    } else {
      app.use(rateLimit({ windowMs, limit, standardHeaders: 'draft-8', legacyHeaders: false, store: new RollingWindowStore({ client, prefix }) }));
    }
    app.get('/', (_req, res) => {
      res.type('text/plain').send('ok');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port } satisfies StoreServerMessage);
    return async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await client.quit();
    };
  }
  if (kind === 'fastify') {
    const fastify = Fastify({ trustProxy: '127.0.0.1' }); // the tests play the proxy, on loopback
    // The plugin groups IPv6 clients (the store counts the key it is handed): by /56, as express-rate-limit does.
    await fastify.register(fastifyRateLimit, { max: limit, timeWindow: windowMs, ipv6Subnet: 56, store: rollingWindowStore({ client, namespace: prefix }) });
    fastify.get('/', async () => 'ok');
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    process.send?.({ type: 'listening', port: (fastify.server.address() as AddressInfo).port } satisfies StoreServerMessage);
    return async () => {
      await fastify.close();
      await client.quit();
    };
  }
  throw new Error(`unknown kind ${String(kind)}`);
}

main().then(
  (close) => {
    let closing = false;
    const exit = (): void => {
      if (closing) return;
      closing = true;
      void close().finally(() => process.exit(0));
    };
    process.on('disconnect', exit);
    process.on('SIGTERM', exit);
  },
  (error: unknown) => {
    process.send?.({ type: 'error', error: String(error) } satisfies StoreServerMessage);
    process.exit(1);
  },
);
