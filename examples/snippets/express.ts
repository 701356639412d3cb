import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
// docs:begin
import express from 'express';
import { Redis } from 'ioredis';
import { RollingRateLimiter } from 'rolling-window-limiter';
import { rateLimit } from 'rolling-window-limiter/express';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

const app = express();
app.set('trust proxy', 1); // behind one reverse proxy; otherwise every client shares the proxy's IP
app.use(
  '/api',
  rateLimit({
    // An API quota: a refused request does not count, so a client that waits Retry-After gets in.
    limiter: new RollingRateLimiter({ client: redis, namespace: 'api', interval: '1m', maxInInterval: 2, countBlocked: false }),
  }),
);
app.get('/api/hello', (_req, res) => {
  res.json({ hello: 'world' });
});
const server = app.listen(Number(process.env.PORT ?? 3000)); // try: curl -i localhost:3000/api/hello
// docs:end

await once(server, 'listening');
const { port } = server.address() as AddressInfo;
for (let request = 1; request <= 3; request++) {
  const response = await fetch(`http://127.0.0.1:${port}/api/hello`);
  console.log(response.status, await response.text());
}
server.close();
await redis.quit();
