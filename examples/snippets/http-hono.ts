import { freePort } from './support/free-port.js';

// The docs' code serves on PORT: a free one for this run.
process.env.PORT = String(await freePort());

// docs:begin
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import { RollingRateLimiter } from 'rolling-window-limiter';
import { rateLimit } from 'rolling-window-limiter/hono';

// In memory here; with `client: redis` every process on that Redis shares the limit.
const limiter = new RollingRateLimiter({ namespace: 'api', interval: '1m', maxInInterval: 5, countBlocked: false });

const app = new Hono()
  // The client IP as Node's adapter reports it; on Bun use `getConnInfo` of 'hono/bun', on Deno of 'hono/deno'.
  .use('/api/*', rateLimit({ limiter, connInfo: getConnInfo }))
  .get('/api/hello', (c) => c.json({ hello: 'world', remaining: c.get('rateLimit').actionsRemaining }));

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) });
// docs:end

const response = await fetch(`http://127.0.0.1:${process.env.PORT}/api/hello`);
console.log(response.status, await response.text());
process.exit(0); // the server above would keep the process running
