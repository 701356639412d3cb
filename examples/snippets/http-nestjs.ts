import { Controller, Module, Post } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import { RateLimit, RollingWindowGuard, RollingWindowThrottlerGuard, RollingWindowThrottlerStorage } from 'rolling-window-limiter/nestjs';

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

@Module({
  imports: [
    // docs:begin storage
    ThrottlerModule.forRoot({
      throttlers: [
        { name: 'second', ttl: 1_000, limit: 5 },
        { name: 'minute', ttl: 60_000, limit: 100 },
      ],
      storage: new RollingWindowThrottlerStorage({ client: redis, namespace: 'api' }), // no client: in memory
    }),
    // docs:end
  ],
  // docs:begin guard
  providers: [{ provide: APP_GUARD, useClass: RollingWindowThrottlerGuard }], // in place of ThrottlerGuard
  // docs:end
})
export class ApiModule {}

// docs:begin rate-limit
@Controller('orders')
export class OrdersController {
  @RateLimit({ interval: '1m', maxInInterval: 5, minDifference: '2s' })
  @Post()
  create() {}
}

@Module({
  controllers: [OrdersController],
  // after the auth guard, so that request.user is set
  providers: [{ provide: APP_GUARD, useValue: new RollingWindowGuard({ client: redis, namespace: 'orders' }) }],
})
export class OrdersModule {}
// docs:end

console.log(typeof ApiModule, typeof OrdersModule);
await redis.quit();
