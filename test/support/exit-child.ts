// A small program that uses a limiter the way an application would and then
// simply returns, without process.exit(): test/redis/failures/failures-exit.test.ts
// runs it as `node --unhandled-rejections=strict --import tsx exit-child.ts
// <scenario> <url>` and checks that the process exits by itself, with code 0.
// It prints one JSON line with what it saw, then ends its work.
//
// Scenarios:
//   memory                          an in-memory limiter
//   ioredis-quit <url>              a Redis limiter on ioredis; client.quit() at the end
//   node-redis-close <url>          a Redis limiter on node-redis 5; client.close() at the end
//   ioredis-unreachable-noretry <url>       nothing listens at <url>; `onStoreError: 'allow'`; retryStrategy () => null
//   ioredis-unreachable-disconnect <url>    same, default reconnect; client.disconnect() at the end
//   node-redis-unreachable-noreconnect <url> same on node-redis 5 with `reconnectStrategy: false`
//   node-redis-unreachable-destroy <url>     same on node-redis 5, default reconnect; client.destroy() at the end

import { Redis } from 'ioredis';
import { createClient } from 'redis5';
import { RollingRateLimiter, type RateLimitInfo } from '../../src/index.js';

const [scenario = '', url = ''] = process.argv.slice(2);
const RULES = { interval: 60_000, maxInInterval: 2, timeout: 300 } as const;

/** Three attempts on one id: what each returned, and which policy stood in if the store failed. */
async function attempts(limiter: RollingRateLimiter): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const info: RateLimitInfo = await limiter.limitWithInfo('user');
    seen.push(`${info.blocked ? 'blocked' : 'allowed'}${info.storeFailure ? ` (${info.storeFailure.policy}: ${info.storeFailure.error.name})` : ''}`);
  }
  return seen;
}

async function main(): Promise<string[]> {
  const namespace = `test:exit-child:${process.pid}`;
  switch (scenario) {
    case 'memory':
      return attempts(new RollingRateLimiter(RULES));
    case 'ioredis-quit': {
      const client = new Redis(url);
      const seen = await attempts(new RollingRateLimiter({ ...RULES, client, namespace }));
      await client.quit();
      return seen;
    }
    case 'node-redis-close': {
      const client = createClient({ url });
      client.on('error', () => {});
      await client.connect();
      const seen = await attempts(new RollingRateLimiter({ ...RULES, client, namespace }));
      await client.close();
      return seen;
    }
    case 'ioredis-unreachable-noretry':
    case 'ioredis-unreachable-disconnect': {
      const noRetry = scenario === 'ioredis-unreachable-noretry';
      const client = new Redis(url, noRetry ? { retryStrategy: () => null } : {});
      client.on('error', () => {});
      const seen = await attempts(new RollingRateLimiter({ ...RULES, client, namespace, onStoreError: 'allow' }));
      if (!noRetry) client.disconnect();
      return seen;
    }
    case 'node-redis-unreachable-noreconnect': {
      const client = createClient({ url, socket: { reconnectStrategy: false } });
      client.on('error', () => {});
      await client.connect().catch(() => undefined); // refused: the client is closed, and stays closed
      return attempts(new RollingRateLimiter({ ...RULES, client, namespace, onStoreError: 'allow' }));
    }
    case 'node-redis-unreachable-destroy': {
      const client = createClient({ url });
      client.on('error', () => {});
      // With the default strategy connect() retries until it succeeds: an application would not await it.
      const connecting = client.connect().catch(() => undefined);
      const seen = await attempts(new RollingRateLimiter({ ...RULES, client, namespace, onStoreError: 'allow' }));
      client.destroy();
      await connecting;
      return seen;
    }
    default:
      throw new Error(`unknown scenario ${JSON.stringify(scenario)}`);
  }
}

const seen = await main();
process.stdout.write(`${JSON.stringify({ scenario, seen })}\n`);
