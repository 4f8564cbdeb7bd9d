import { Inject, Module, type ExecutionContext, type OnApplicationShutdown } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerOptions } from '@nestjs/throttler';
import type { Request } from 'express';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LIMIT_NAMES, LIMITS, limitOf, limitSubject, type Limit, type LimitName } from './limits.js';
import { RateLimitGuard, SpentRateLimitInterceptor } from './rate-limit.guard.js';
import { createRateLimitStore } from './rate-limit-store-factory.js';
import { RATE_LIMIT_STORE, RateLimitService } from './rate-limit.service.js';
import type { RateLimitStore } from './sliding-window.js';

/** The store, the service over it and the guard's helpers: what the throttler module is built on. */
@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        createRateLimitStore({
          redisUrl: config.redisUrl,
          logger: createLogger(config).child({ component: 'rate-limit' }),
        }),
    },
    RateLimitService,
  ],
  exports: [RATE_LIMIT_STORE, RateLimitService],
})
class RateLimitStoreModule implements OnApplicationShutdown {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore) {}

  /** Quits Redis (or stops the in-process sweep) so shutdown is not held up by an open socket. */
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}

/**
 * Every limit of the service through @nestjs/throttler: one named throttler per limit (limits.ts),
 * each applying only where a route declares it with `@RateLimit`, all counted in RateLimitService,
 * the one sliding-window `ThrottlerStorage`. Imported by each feature whose routes declare limits.
 */
@Module({
  imports: [
    RateLimitStoreModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule],
      inject: [RateLimitService],
      useFactory: (storage: RateLimitService) => ({
        storage,
        throttlers: LIMIT_NAMES.map((name) => throttlerOf(name, LIMITS[name])),
      }),
    }),
  ],
  providers: [RateLimitGuard, SpentRateLimitInterceptor],
  exports: [RateLimitStoreModule, ThrottlerModule, RateLimitGuard, SpentRateLimitInterceptor],
})
export class RateLimitModule {}

/** A limit as a named throttler; `RateLimitGuard` applies it only where a route declares it. */
function throttlerOf(name: LimitName, limit: Limit): ThrottlerOptions {
  const requestOf = (context: ExecutionContext) => context.switchToHttp().getRequest<Request>();
  return {
    name,
    ttl: limit.windowMs,
    limit: typeof limit.limit === 'number' ? limit.limit : (context) => limitOf(limit, requestOf(context)),
    getTracker: (request) => limitSubject(limit, request) ?? '',
    generateKey: (_context, subject) => `${name}:${subject}`,
  };
}
