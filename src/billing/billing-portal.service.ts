import { Inject, Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { serviceUnavailable } from '../common/errors/app-exception.js';
import { noBillingAccount } from './billing.exceptions.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { StripeClient } from './stripe-client.js';

/** Hands an Admin over to Stripe's billing portal for invoices, payment methods and plan changes. */
@Injectable()
export class BillingPortalService {
  constructor(
    private readonly organizations: OrganizationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly stripe: StripeClient,
  ) {}

  async createSession(auth: OrgAuthContext): Promise<{ url: string }> {
    const organization = await this.organizations.get(auth.organizationId);
    if (!organization.providerCustomerId) {
      throw noBillingAccount();
    }
    if (!this.stripe.configured) throw serviceUnavailable('The billing portal is not configured on this server');
    const returnUrl = `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/settings/billing`;
    return { url: await this.stripe.createPortalSession(organization.providerCustomerId, returnUrl) };
  }
}
