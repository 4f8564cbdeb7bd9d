import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { notFound } from '../common/errors/app-exception.js';
import { tierDefinition, tierDisplayName } from '../common/tiers.js';
import { AuditService } from '../audit/audit.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Organization } from './organization.entity.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { OrganizationSourcesService } from './organization-sources.service.js';
import { OrganizationsService } from './organizations.service.js';

/** Two renames racing for one slug: the loser recomputes; a handful of tries always suffices. */
const SLUG_ATTEMPTS = 5;

export interface BillingSummary {
  plan: string;
  planRawValue: string;
  madUsed: number;
  madLimit: number | null;
  currentPeriodEnd: Date | null;
  providerCustomerId: string | null;
  providerSubscriptionId: string | null;
}

/** The organization's own record: settings and the billing summary. */
@Injectable()
export class OrganizationSettingsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly repository: OrganizationsRepository,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    private readonly sources: OrganizationSourcesService,
  ) {}

  async get(organizationId: OrganizationId): Promise<Organization> {
    const organization = await this.repository.find(organizationId);
    if (!organization) throw notFound('Organization');
    return organization;
  }

  /** A new name gets a new slug made from it, unique among organizations. */
  async rename(auth: OrgAuthContext, name: string): Promise<Organization> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.renameOnce(auth, name);
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= SLUG_ATTEMPTS) throw error;
      }
    }
  }

  private renameOnce(auth: OrgAuthContext, name: string): Promise<Organization> {
    return this.uow.run(async () => {
      const current = await this.repository.find(auth.organizationId, { lock: true });
      if (!current) throw notFound('Organization');
      if (current.name === name) return current;
      const slug = await this.organizations.uniqueSlug(name, current.id);
      await this.repository.rename(current.id, name, slug);
      await this.audit.record(auth, {
        organizationId: current.id,
        action: 'org.settings_updated',
        resourceType: 'organization',
        resourceId: current.id,
        metadata: { name: { from: current.name, to: name }, slug: { from: current.slug, to: slug } },
      });
      const renamed = await this.repository.find(current.id);
      if (!renamed) throw notFound('Organization');
      return renamed;
    });
  }

  /** MAD counts the devices that attested since the start of the current calendar month (UTC). */
  async billingSummary(organizationId: OrganizationId): Promise<BillingSummary> {
    const organization = await this.get(organizationId);
    const madUsed = await this.sources.monthlyActiveDevices(organizationId);
    return {
      plan: tierDisplayName(organization.serviceTier),
      planRawValue: organization.serviceTier,
      madUsed,
      madLimit: tierDefinition(organization.serviceTier).limits.maxMAD,
      currentPeriodEnd: organization.currentPeriodEnd,
      providerCustomerId: organization.providerCustomerId,
      providerSubscriptionId: organization.providerSubscriptionId,
    };
  }
}
