// An Express API limited per API key by two tiers: at most 3 requests per
// second and 20 per minute, in the mode an API quota wants: blocked requests
// do not count (`countBlocked: false`) and there is no gap rule, so a client
// that waits what Retry-After says is admitted. In memory by default; with
// REDIS_URL set, every process on that Redis shares the limits.
//
//   npx tsx examples/express-api.ts               serve on PORT (default 3000)
//   curl -i -H 'x-api-key: demo' localhost:3000/api/hello
//   npx tsx examples/express-api.ts --self-test   start on a free port, send a few requests to itself, print, exit

import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { RateLimiterStack, RollingRateLimiter } from '../src/index.js';
import { rateLimit } from '../src/http/express/express-middleware.js';

const redisUrl = process.env.REDIS_URL;
const client = redisUrl === undefined || redisUrl === '' ? undefined : new Redis(redisUrl, { maxRetriesPerRequest: 1 });
client?.on('error', () => undefined); // failures reach the limiter's calls (and so Express's error handler)
const store = client === undefined ? {} : { client, timeout: 500 };

const perSecond = new RollingRateLimiter({ ...store, namespace: 'example-api:second', interval: '1s', maxInInterval: 3, countBlocked: false });
const perMinute = new RollingRateLimiter({ ...store, namespace: 'example-api:minute', interval: '1m', maxInInterval: 20, countBlocked: false });
const api = new RateLimiterStack([perSecond, perMinute]);

/** The limiter's id for an API key: a digest, so that no key is stored in Redis in clear. */
const idOf = (apiKey: string): string => createHash('sha256').update(apiKey).digest('base64url').slice(0, 22);

const app = express();
// Behind a reverse proxy, also: app.set('trust proxy', 1)  (only matters when limiting by req.ip)
app.use('/api', (req, res, next) => {
  if (req.get('x-api-key') === undefined) res.status(401).json({ error: 'missing_api_key' });
  else next();
});
app.use(
  '/api',
  rateLimit({
    limiter: api,
    key: (req) => idOf(req.get('x-api-key') ?? ''),
    policyName: ({ index }) => ['per-second', 'per-minute'][index] ?? `tier-${index}`,
  }),
);
app.get('/api/hello', (_req, res) => {
  res.json({ hello: 'world' });
});

async function selfTest(baseUrl: string): Promise<boolean> {
  const apiKey = `self-test-${randomBytes(6).toString('hex')}`;
  const statuses: number[] = [];
  for (let i = 1; i <= 5; i++) {
    const response = await fetch(`${baseUrl}/api/hello`, { headers: { 'x-api-key': apiKey }, signal: AbortSignal.timeout(5_000) });
    statuses.push(response.status);
    const shown = ['RateLimit-Policy', 'RateLimit', 'Retry-After'].flatMap((name) => {
      const value = response.headers.get(name);
      return value === null ? [] : [`${name}: ${value}`];
    });
    console.log(`request ${i}: ${response.status}  ${shown.join('  |  ')}  ${await response.text()}`);
  }
  const anonymous = await fetch(`${baseUrl}/api/hello`, { signal: AbortSignal.timeout(5_000) });
  console.log(`without x-api-key: ${anonymous.status}  ${await anonymous.text()}`);
  await api.clear(idOf(apiKey));
  return statuses[0] === 200 && statuses.includes(429) && statuses.every((status) => status === 200 || status === 429) && anonymous.status === 401;
}

async function main(): Promise<void> {
  const testing = process.argv.includes('--self-test');
  const server = testing ? app.listen(0, '127.0.0.1') : app.listen(Number(process.env.PORT ?? 3000));
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  const where = client === undefined ? 'in memory (set REDIS_URL to use Redis)' : 'on Redis';
  console.log(`Listening on http://127.0.0.1:${port}, limits ${where}: 3 per second and 20 per minute per API key`);
  if (!testing) return;

  try {
    const passed = await selfTest(`http://127.0.0.1:${port}`);
    console.log(passed ? 'self-test passed' : 'self-test FAILED');
    if (!passed) process.exitCode = 1;
  } finally {
    server.closeAllConnections();
    server.close();
    await client?.quit().catch(() => client.disconnect());
  }
}

main().catch((error: unknown) => {
  console.error(`The example failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
  void client?.quit().catch(() => client.disconnect());
});
