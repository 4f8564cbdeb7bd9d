import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { notFound, serviceUnavailable } from '../common/errors/app-exception.js';
import { noBillingAccount } from './billing.exceptions.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Organization } from '../organizations/organization.entity.js';
import { StripeClient } from './stripe-client.js';

/** Hands an Admin over to Stripe's billing portal for invoices, payment methods and plan changes. */
@Injectable()
export class BillingPortalService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly stripe: StripeClient,
  ) {}

  async createSession(auth: OrgAuthContext): Promise<{ url: string }> {
    const organization = await this.dataSource.getRepository(Organization).findOneBy({ id: auth.organizationId });
    if (!organization) throw notFound('Organization');
    if (!organization.providerCustomerId) {
      throw noBillingAccount();
    }
    if (!this.stripe.configured) throw serviceUnavailable('The billing portal is not configured on this server');
    const returnUrl = `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/settings/billing`;
    return { url: await this.stripe.createPortalSession(organization.providerCustomerId, returnUrl) };
  }
}
