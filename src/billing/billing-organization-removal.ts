import { Injectable } from '@nestjs/common';
import type { Organization } from '../organizations/organization.entity.js';
import {
  OnOrganizationRemoved,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { StripeClient } from './stripe-client.js';

/**
 * A paid subscription of an organization that goes away is cancelled at the provider first, when
 * one is configured: a failure there leaves the organization as it was.
 */
@Injectable()
@OnOrganizationRemoved()
export class BillingOrganizationRemoval implements OrganizationRemovalParticipant {
  constructor(private readonly stripe: StripeClient) {}

  async beforeRemoval(organizations: readonly Organization[]): Promise<void> {
    if (!this.stripe.configured) return;
    for (const organization of organizations) {
      if (organization.providerSubscriptionId)
        await this.stripe.cancelSubscription(organization.providerSubscriptionId);
    }
  }
}
