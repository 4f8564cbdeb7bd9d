import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { createRateLimitStore } from './rate-limit-store-factory.js';
import { RATE_LIMIT_STORE, RateLimitService } from './rate-limit.service.js';
import type { RateLimitStore } from './sliding-window.js';

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
  exports: [RateLimitService],
})
export class RateLimitModule implements OnApplicationShutdown {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore) {}

  /** Quits Redis (or stops the in-process sweep) so shutdown is not held up by an open socket. */
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
