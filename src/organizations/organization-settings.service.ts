import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { notFound } from '../common/errors/app-exception.js';
import { tierDefinition, tierDisplayName } from '../common/tiers.js';
import { AuditService } from '../audit/audit.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { Organization } from './organization.entity.js';
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    private readonly sources: OrganizationSourcesService,
  ) {}

  async get(organizationId: string): Promise<Organization> {
    const organization = await this.dataSource.getRepository(Organization).findOneBy({ id: organizationId });
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
    return this.dataSource.transaction(async (manager) => {
      const current = await manager.findOne(Organization, {
        where: { id: auth.organizationId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!current) throw notFound('Organization');
      if (current.name === name) return current;
      const slug = await this.organizations.uniqueSlug(manager, name, current.id);
      await manager.query(`UPDATE organizations SET name = $2, slug = $3, updated_at = now() WHERE id = $1`, [
        current.id,
        name,
        slug,
      ]);
      await this.audit.record(
        auth,
        {
          organizationId: current.id,
          action: 'org.settings_updated',
          resourceType: 'organization',
          resourceId: current.id,
          metadata: { name: { from: current.name, to: name }, slug: { from: current.slug, to: slug } },
        },
        manager,
      );
      return manager.findOneByOrFail(Organization, { id: current.id });
    });
  }

  /** MAD counts the devices that attested since the start of the current calendar month (UTC). */
  async billingSummary(organizationId: string): Promise<BillingSummary> {
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
