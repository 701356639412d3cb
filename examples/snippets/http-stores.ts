import fastifyRateLimit from '@fastify/rate-limit';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { RollingWindowStore } from 'rolling-window-limiter/express-rate-limit';
import { rollingWindowStore } from 'rolling-window-limiter/fastify';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const app = express();

// docs:begin express-rate-limit
// One prefix per rateLimit() on a client: a second store with the same prefix on the same client is refused.
app.use(
  '/api',
  rateLimit({
    windowMs: 60_000,
    limit: 100,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: new RollingWindowStore({ client: redis, prefix: 'api:' }),
  }),
);
app.use(
  '/login',
  rateLimit({
    windowMs: 60_000,
    limit: 5,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    store: new RollingWindowStore({ client: redis, prefix: 'login:' }),
  }),
);
// docs:end

// docs:begin fastify
const fastify = Fastify({ trustProxy: '10.0.0.2' }); // your proxy's address (a number of hops is not trusted by Fastify 5)
await fastify.register(fastifyRateLimit, { max: 100, timeWindow: '1 minute', store: rollingWindowStore({ client: redis }) });
// docs:end

fastify.get('/hello', async () => ({ hello: 'world' }));
const response = await fastify.inject({ url: '/hello' });
console.log(response.statusCode, response.headers['x-ratelimit-remaining']);
await fastify.close();
await redis.quit();
