// docs:begin
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { Redis } from 'ioredis';
import { RollingWindowStore } from 'rolling-window-limiter/express-rate-limit';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
redis.on('error', (error) => console.error(`Redis: ${error.message}`));

const app = express();
app.set('trust proxy', 1);
app.use(
  rateLimit({
    windowMs: 60_000,
    limit: 100,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: new RollingWindowStore({ client: redis, prefix: 'api:' }), // prefix: one per rateLimit on a shared client
  }),
);
// docs:end

import { send } from './support/send.js';

app.get('/', (_req, res) => {
  res.send('hello');
});
console.log(await send(app, 'GET', '/'));
await redis.quit();
