import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { EntitlementsController } from './entitlements.controller.js';
import { EntitlementsRepository } from './entitlements.repository.js';
import { EntitlementsService } from './entitlements.service.js';
import { SubscriptionClaims } from './subscription-claims.js';

/** End-user subscription entitlements; the claims feature puts SubscriptionClaims into device tokens. */
@Module({
  imports: [WebhooksModule],
  controllers: [EntitlementsController],
  providers: [EntitlementsRepository, EntitlementsService, SubscriptionClaims],
  exports: [SubscriptionClaims],
})
export class EntitlementsModule {}
