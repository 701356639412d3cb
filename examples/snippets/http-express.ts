// docs:begin express
import express from 'express';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from 'rolling-window-limiter';
import { rateLimit } from 'rolling-window-limiter/express';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
redis.on('error', (error) => console.error(`Redis: ${error.message}`));
const perSecond = new RollingRateLimiter({ client: redis, namespace: 'api:second', interval: '1s', maxInInterval: 5, countBlocked: false });
const perMinute = new RollingRateLimiter({ client: redis, namespace: 'api:minute', interval: '1m', maxInInterval: 100, countBlocked: false });

const app = express();
app.use(
  '/api',
  rateLimit({
    limiter: new RateLimiterStack([perSecond, perMinute]),
    key: (req) => req.get('x-api-key'), // default: the client IP (req.ip)
    policyName: ({ index }) => ['per-second', 'per-minute'][index] ?? 'quota', // default: each limiter's namespace
  }),
);
app.get('/api/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(Number(process.env.PORT ?? 3000));
// docs:end

const api = new RateLimiterStack([perSecond, perMinute]);
// docs:begin on-limited
rateLimit({
  limiter: api,
  onLimited: (_req, res, _next, info) => {
    res.type('application/problem+json').json({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Too Many Requests',
      status: 429,
      'violated-policies': info.tiers.filter((tier) => tier.blocked).map((tier) => tier.namespace),
    });
  },
});
// docs:end

// docs:begin on-error
import type { ErrorRequestHandler } from 'express';
import { isRateLimiterError } from 'rolling-window-limiter';

const onError: ErrorRequestHandler = (error, _req, res, next) => {
  if (isRateLimiterError(error)) {
    res.status(503).set('Retry-After', '1').json({ error: 'rate_limiter_unavailable' });
    return;
  }
  next(error);
};
app.use(onError);
// docs:end

// docs:begin trust-proxy
app.set('trust proxy', 1); // one reverse proxy (nginx, a cloud load balancer) sets X-Forwarded-For
// docs:end

await new Promise((listening) => server.once('listening', listening));
const address = server.address();
const port = typeof address === 'object' && address !== null ? address.port : 3000;
for (let request = 1; request <= 6; request++) {
  const response = await fetch(`http://127.0.0.1:${port}/api/hello`, { headers: { 'x-api-key': 'key-1' } });
  if (request === 6) console.log(response.status, response.headers.get('ratelimit'));
}
server.close();
await redis.quit();
