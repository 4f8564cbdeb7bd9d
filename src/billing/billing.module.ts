import { Module } from '@nestjs/common';
import { BillingController } from './billing.controller.js';
import { BillingPortalService } from './billing-portal.service.js';
import { StripeClient } from './stripe-client.js';
import { StripeWebhookService } from './stripe-webhook.service.js';

/** The payment provider (Stripe): plan changes from its webhook, its billing portal, cancellations. */
@Module({
  controllers: [BillingController],
  providers: [BillingPortalService, StripeWebhookService, StripeClient],
  exports: [StripeClient],
})
export class BillingModule {}
