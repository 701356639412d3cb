// The README's NestJS example, as it is there (with this repository's source
// in place of the package): @nestjs/throttler's two named throttlers counting
// on exact rolling windows, decided together, and @RateLimit refusing a
// double click. On Redis when REDIS_URL is
// set, else in memory. It serves on a free port, sends two orders to itself,
// prints both answers and exits:
//
//   node --import tsx -e "require('./examples/nestjs-api.ts')"
//
// It needs no emitted decorator metadata (tsx and esbuild emit none): its
// classes take nothing in their constructors, and RollingWindowThrottlerGuard
// names what it injects. `npx tsx examples/nestjs-api.ts` prints the same, but
// loads it as an ES module, and tsx then gives @nestjs/throttler (a CommonJS
// package) its own copy of @nestjs/common and @nestjs/core: a request the
// throttlers refuse would be answered 500, not 429 (Nest does not recognize
// the other copy's exception). Loaded with `require`, as above, or compiled by
// tsc (`nest start`) and run by Node, there is one copy. The logger shows
// errors and warnings: with `logger: false` a failed start exits 1 without a word.

import { Controller, Module, Post } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import { RateLimit, RollingWindowGuard, RollingWindowThrottlerGuard, RollingWindowThrottlerStorage } from '../src/integrations/nestjs/index.js';

const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL) : undefined; // undefined: in memory

@Controller('orders')
class OrdersController {
  // A double click is refused: at least 2 s between two orders of a client (the user, else the IP), at most 5 a minute.
  @RateLimit({ interval: '1m', maxInInterval: 5, minDifference: '2s' })
  @Post()
  create(): { ordered: boolean } {
    return { ordered: true };
  }
}

@Module({
  imports: [
    // Every route: at most 5 requests per second and 100 per minute per client, on exact rolling windows,
    // both decided in one Redis round trip by RollingWindowThrottlerGuard.
    ThrottlerModule.forRoot({
      throttlers: [
        { name: 'second', ttl: 1_000, limit: 5 },
        { name: 'minute', ttl: 60_000, limit: 100 },
      ],
      storage: new RollingWindowThrottlerStorage({ client: redis, namespace: 'api' }),
    }),
  ],
  controllers: [OrdersController],
  providers: [
    { provide: APP_GUARD, useClass: RollingWindowThrottlerGuard },
    { provide: APP_GUARD, useValue: new RollingWindowGuard({ client: redis, namespace: 'orders' }) },
  ],
})
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  for (const order of [1, 2]) {
    const response = await fetch(`${url}/orders`, { method: 'POST' });
    console.log(`order ${order}: ${response.status}, RateLimit: ${response.headers.get('ratelimit')}, Retry-After: ${response.headers.get('retry-after')}`);
  }
  await app.close();
  await redis?.quit();
}

void main();
