// A Hono API on Node.js (@hono/node-server), limited per client IP to 5
// requests per minute in the mode an API quota wants: blocked requests do not
// count (`countBlocked: false`), so a client that waits what Retry-After says
// is admitted. The code down to `serve(...)` is the README's Hono snippet,
// which test/http/hono/readme-snippet.test.ts keeps equal to it.
//
//   npx tsx examples/hono-api.ts               serve on 127.0.0.1:PORT (default 3000)
//   curl -i localhost:3000/api/hello
//   npx tsx examples/hono-api.ts --self-test   start on a free port, send a few requests to itself, print, exit

import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import { RollingRateLimiter } from '../src/index.js';
import { rateLimit } from '../src/http/hono/hono-middleware.js';

// In memory here; with `client: redis` every process on that Redis shares the limit.
const limiter = new RollingRateLimiter({ namespace: 'api', interval: '1m', maxInInterval: 5, countBlocked: false });

const app = new Hono()
  // The client IP as Node's adapter reports it; on Bun use `getConnInfo` of 'hono/bun', on Deno of 'hono/deno'.
  .use('/api/*', rateLimit({ limiter, connInfo: getConnInfo }))
  .get('/api/hello', (c) => c.json({ hello: 'world', remaining: c.get('rateLimit').actionsRemaining }));

const testing = process.argv.includes('--self-test');
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: testing ? 0 : Number(process.env.PORT ?? 3000) }, ({ port }) => {
  console.log(`Listening on http://127.0.0.1:${port}: 5 requests per minute per client IP`);
  if (testing) void selfTest(`http://127.0.0.1:${port}`);
});

async function selfTest(baseUrl: string): Promise<void> {
  const statuses: number[] = [];
  try {
    for (let i = 1; i <= 6; i++) {
      const response = await fetch(`${baseUrl}/api/hello`, { signal: AbortSignal.timeout(5_000) });
      statuses.push(response.status);
      const shown = ['RateLimit-Policy', 'RateLimit', 'Retry-After'].flatMap((name) => {
        const value = response.headers.get(name);
        return value === null ? [] : [`${name}: ${value}`];
      });
      console.log(`request ${i}: ${response.status}  ${shown.join('  |  ')}  ${await response.text()}`);
    }
  } finally {
    server.close();
  }
  const passed = statuses.join(',') === '200,200,200,200,200,429';
  console.log(passed ? 'self-test passed' : `self-test FAILED: ${statuses.join(', ')}`);
  if (!passed) process.exitCode = 1;
}
