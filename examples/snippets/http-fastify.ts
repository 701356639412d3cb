// docs:begin
import Fastify from 'fastify';
import fastifyRateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { rollingWindowStore } from 'rolling-window-limiter/fastify';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
redis.on('error', (error) => console.error(`Redis: ${error.message}`));

const fastify = Fastify({ trustProxy: '10.0.0.2' }); // the reverse proxy's address: request.ip is the client's
await fastify.register(fastifyRateLimit, {
  max: 100,
  timeWindow: '1 minute',
  store: rollingWindowStore({ client: redis }),
});
fastify.get('/api/hello', async () => ({ hello: 'world' }));
await fastify.listen({ port: Number(process.env.PORT ?? 3000) });
// docs:end

const response = await fastify.inject({ url: '/api/hello' });
console.log(response.statusCode, response.headers['x-ratelimit-remaining'], response.body);
await fastify.close();
await redis.quit();
