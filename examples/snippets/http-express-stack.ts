// docs:begin
import express from 'express';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';
import { rateLimit } from 'rolling-window-limiter/express';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
redis.on('error', (error) => console.error(`Redis: ${error.message}`));

// An API quota: blocked requests do not count, so a client that waits Retry-After gets in.
const perSecond = new RollingRateLimiter({ client: redis, namespace: 'api:second', interval: '1s', maxInInterval: 5, countBlocked: false });
const perMinute = new RollingRateLimiter({ client: redis, namespace: 'api:minute', interval: '1m', maxInInterval: 100, countBlocked: false });

const app = express();
app.set('trust proxy', 1); // behind one reverse proxy; otherwise every client shares the proxy's IP
app.use(
  '/api',
  rateLimit({
    limiter: new RateLimiterStack([perSecond, perMinute]),
    policyName: ({ index }) => ['per-second', 'per-minute'][index] ?? 'quota', // default: the namespaces
  }),
);
app.get('/api/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(Number(process.env.PORT ?? 3000));
// docs:end

// Six requests in a second: the sixth is refused by the per-second tier.
await new Promise((listening) => server.once('listening', listening));
const address = server.address();
const port = typeof address === 'object' && address !== null ? address.port : 3000;
for (let request = 1; request <= 6; request++) {
  const response = await fetch(`http://127.0.0.1:${port}/api/hello`);
  if (response.status === 429) console.log(response.status, response.headers.get('ratelimit-policy'), await response.text());
}
server.close();
await redis.quit();
