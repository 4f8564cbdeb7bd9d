import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { BillingOrganizationRemoval } from './billing-organization-removal.js';
import { BillingEventsRepository } from './billing-events.repository.js';
import { BillingController } from './billing.controller.js';
import { BillingPortalService } from './billing-portal.service.js';
import { StripeClient } from './stripe-client.js';
import { StripeWebhookService } from './stripe-webhook.service.js';

/** The payment provider (Stripe): plan changes from its webhook, its billing portal, cancellations. */
@Module({
  imports: [AuditModule, OrganizationsModule],
  controllers: [BillingController],
  providers: [
    BillingEventsRepository,
    BillingPortalService,
    StripeWebhookService,
    StripeClient,
    BillingOrganizationRemoval,
  ],
})
export class BillingModule {}
