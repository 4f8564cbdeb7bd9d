import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import { Membership } from '../auth/membership.entity.js';
import { Organization } from './organization.entity.js';
import { slugify } from './slug.js';

@Injectable()
export class OrganizationsService {
  /** A new organization with its owner, inside the caller's transaction. */
  async createWithOwner(
    manager: EntityManager,
    input: { name: string; tier?: string; ownerId: string },
  ): Promise<Organization> {
    const organization = manager.create(Organization, {
      name: input.name,
      slug: await this.uniqueSlug(manager, input.name),
      serviceTier: input.tier ?? 'free',
      isActive: true,
      billingEmail: null,
      providerCustomerId: null,
      providerSubscriptionId: null,
      currentPeriodEnd: null,
    });
    await manager.save(organization);
    await this.addMember(manager, organization.id, input.ownerId, 'owner');
    return organization;
  }

  async addMember(manager: EntityManager, organizationId: string, userId: string, role: Role): Promise<void> {
    await manager
      .createQueryBuilder()
      .insert()
      .into(Membership)
      .values({ organizationId, userId, role })
      .orIgnore()
      .execute();
  }

  /** The slug of a name, with a numeric suffix when another organization has it. */
  async uniqueSlug(manager: EntityManager, name: string, exceptId?: string): Promise<string> {
    const base = slugify(name);
    const rows: { slug: string }[] = await manager.query(
      `SELECT slug FROM organizations WHERE (slug = $1 OR slug LIKE $1 || '-%') AND id IS DISTINCT FROM $2`,
      [base, exceptId ?? null],
    );
    const taken = new Set(rows.map((row) => row.slug));
    if (!taken.has(base)) return base;
    for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
  }
}
