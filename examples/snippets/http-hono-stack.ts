import { Redis } from 'ioredis';
import { freePort } from './support/free-port.js';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
process.env.PORT = String(await freePort()); // the docs' code serves on PORT: a free one for this run

// docs:begin stack
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';
import { rateLimit } from 'rolling-window-limiter/hono';

const perSecond = new RollingRateLimiter({ client: redis, namespace: 'api:second', interval: '1s', maxInInterval: 5, countBlocked: false });
const perMinute = new RollingRateLimiter({ client: redis, namespace: 'api:minute', interval: '1m', maxInInterval: 100, countBlocked: false });

const app = new Hono()
  .use('/api/*', rateLimit({ limiter: new RateLimiterStack([perSecond, perMinute]), connInfo: getConnInfo }))
  .get('/api/hello', (c) => c.json({ remaining: c.get('rateLimit').actionsRemaining }));
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) });
// docs:end

// docs:begin on-error
import { isRateLimiterError } from 'rolling-window-limiter';

app.onError((error, c) => (isRateLimiterError(error) ? c.json({ error: 'rate_limiter_unavailable' }, 503) : c.text('error', 500)));
// docs:end

const response = await fetch(`http://127.0.0.1:${process.env.PORT}/api/hello`);
console.log(response.status, await response.text());
await redis.quit();
process.exit(0); // the server above would keep the process running
