import { Global, Module } from '@nestjs/common';
import { EntitlementsController } from './entitlements.controller.js';
import { EntitlementsService } from './entitlements.service.js';
import { SubscriptionClaims } from './subscription-claims.js';

/** Global so the token's claims contributor can inject SubscriptionClaims wherever it lives. */
@Global()
@Module({
  controllers: [EntitlementsController],
  providers: [EntitlementsService, SubscriptionClaims],
  exports: [SubscriptionClaims],
})
export class EntitlementsModule {}
