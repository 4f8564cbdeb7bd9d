import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Passport } from 'passport';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AppsModule } from '../apps/apps.module.js';
import { AttestationModule } from '../attestation/attestation.module.js';
import { DevicesModule } from '../devices/devices.module.js';
import { AccessGuard, PASSPORT } from './access.guard.js';
import { AuthModule } from './auth.module.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { CookieSessionStrategy } from './strategies/cookie-session.strategy.js';
import { DeviceTokenStrategy } from './strategies/device-token.strategy.js';
import type { RequestStrategy } from './strategies/principal.js';

/**
 * Who may call what: the passport strategies (cookie session, API key, device token), registered
 * on this application's own Passport instance, and the global guard that applies each route's
 * `@Access` declaration with them.
 */
@Module({
  imports: [AuthModule, ApiKeysModule, AppsModule, AttestationModule, DevicesModule],
  providers: [
    CookieSessionStrategy,
    ApiKeyStrategy,
    DeviceTokenStrategy,
    {
      provide: PASSPORT,
      inject: [CookieSessionStrategy, ApiKeyStrategy, DeviceTokenStrategy],
      useFactory: (...strategies: RequestStrategy[]) => {
        const passport = new Passport();
        for (const strategy of strategies) passport.use(strategy.strategyName, strategy);
        return passport;
      },
    },
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
})
export class AccessModule {}
