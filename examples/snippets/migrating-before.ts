import express from 'express';
import { Redis } from 'ioredis';
import { send } from './support/send.js';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const app = express();

// docs:begin
// Before: rolling-rate-limiter 0.4
import { RedisRateLimiter } from 'rolling-rate-limiter';

const limiter = new RedisRateLimiter({ client: redis, namespace: 'rate-limiter', interval: 60_000, maxInInterval: 5 });
app.post('/login', async (req, res) => {
  if (req.ip === undefined || (await limiter.limit(req.ip))) {
    res.status(429).send('Too many requests');
    return;
  }
  res.send('Welcome');
});
// docs:end

console.log(await send(app, 'POST', '/login'));
await redis.quit();
