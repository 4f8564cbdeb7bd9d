import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { Organization } from '../organizations/organization.entity.js';
import {
  OrganizationLifecycleService,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { StripeClient } from './stripe-client.js';

/**
 * A paid subscription of an organization that goes away is cancelled at the provider first, when
 * one is configured: a failure there leaves the organization as it was.
 */
@Injectable()
export class BillingOrganizationRemoval implements OrganizationRemovalParticipant, OnModuleInit {
  constructor(
    private readonly lifecycle: OrganizationLifecycleService,
    private readonly stripe: StripeClient,
  ) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  async beforeRemoval(organizations: readonly Organization[]): Promise<void> {
    if (!this.stripe.configured) return;
    for (const organization of organizations) {
      if (organization.providerSubscriptionId)
        await this.stripe.cancelSubscription(organization.providerSubscriptionId);
    }
  }
}
