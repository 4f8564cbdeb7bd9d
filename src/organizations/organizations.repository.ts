import { Injectable } from '@nestjs/common';
import type { Role } from '../common/access/access.decorator.js';
import { trustOrganizationId, type OrganizationId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { queryRows } from '../database/sql.js';
import { Membership } from './membership.entity.js';
import { Organization } from './organization.entity.js';

/** An organization as read back from its row: its id carries the tenant brand. */
export type OrganizationRecord = Organization & { id: OrganizationId };

/** What a subscription change writes; a null customer keeps the one on record. */
export interface OrganizationSubscription {
  tier: string;
  customerId: string | null;
  subscriptionId: string | null;
  periodEnd: Date | null;
  /** The day of month the subscription renews on (1-31), when the provider says. */
  anchorDay: number | null;
}

/** An organization the user may switch to, as `GET /auth/orgs` lists it (its id read back from the row, branded). */
export interface OrganizationSummary {
  id: OrganizationId;
  name: string;
  slug: string;
  serviceTier: string;
}

/** A membership as the team pages show it (the address comes from the users feature). */
export interface MembershipRecord {
  userId: string;
  role: Role;
  joinedAt: Date;
}

/** One organization of an account that asks to be deleted, locked, with who else belongs to it. */
export interface AccountOrganization {
  id: OrganizationId;
  /** Members other than the account. */
  others: number;
  /** Owners other than the account. */
  otherOwners: number;
  /** The account's role there; null for the active organization when the account is not a member. */
  role: string | null;
}

/** A row lookup in the open unit of work. */
export interface RowLock {
  /** Locks the row FOR UPDATE until the transaction ends. */
  lock?: boolean;
}

/**
 * The owner of the `organizations` and `memberships` tables (decision 0070). Statements run in the
 * open unit of work. Other features' statements that must stay one statement read the published
 * view `organization_tenants` (migration OrganizationTenants) instead of these tables.
 */
@Injectable()
export class OrganizationsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The organization with this id, its id branded: the lookup that establishes the tenant. */
  async find(organizationId: OrganizationId, options: RowLock = {}): Promise<OrganizationRecord | null> {
    const organization = await this.uow.manager().findOne(Organization, {
      where: { id: organizationId },
      ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    return branded(organization);
  }

  /** The organizations with these ids (those that still exist). */
  async findMany(organizationIds: readonly OrganizationId[]): Promise<OrganizationRecord[]> {
    if (!organizationIds.length) return [];
    const rows = await this.uow
      .manager()
      .getRepository(Organization)
      .createQueryBuilder('organizations')
      .where('organizations.id IN (:...ids)', { ids: organizationIds })
      .getMany();
    return rows.map((row) => branded(row)!);
  }

  /** Locks the organization row until the transaction ends. */
  async lock(organizationId: OrganizationId): Promise<void> {
    await this.uow.manager().query(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId]);
  }

  /** The first organization created with this payment-provider customer. */
  async findByProviderCustomer(customerId: string, options: RowLock = {}): Promise<OrganizationRecord | null> {
    const organization = await this.uow.manager().findOne(Organization, {
      where: { providerCustomerId: customerId },
      order: { createdAt: 'ASC' },
      ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    return branded(organization);
  }

  async findBySlug(slug: string): Promise<OrganizationRecord | null> {
    return branded(await this.uow.manager().findOneBy(Organization, { slug }));
  }

  async setSubscription(organizationId: OrganizationId, subscription: OrganizationSubscription): Promise<void> {
    await this.uow.manager().query(
      `UPDATE organizations
          SET service_tier = $2, provider_customer_id = COALESCE($3, provider_customer_id),
              provider_subscription_id = $4, current_period_end = $5, billing_anchor_day = $6, updated_at = now()
        WHERE id = $1`,
      [
        organizationId,
        subscription.tier,
        subscription.customerId,
        subscription.subscriptionId,
        subscription.periodEnd,
        subscription.anchorDay,
      ],
    );
  }

  /** Back to Free without a subscription (the customer stays on record). */
  async clearSubscription(organizationId: OrganizationId): Promise<void> {
    await this.uow.manager().query(
      `UPDATE organizations
          SET service_tier = 'free', provider_subscription_id = NULL, current_period_end = NULL, billing_anchor_day = NULL,
              updated_at = now()
        WHERE id = $1`,
      [organizationId],
    );
  }

  async rename(organizationId: OrganizationId, name: string, slug: string): Promise<void> {
    await this.uow
      .manager()
      .query(`UPDATE organizations SET name = $2, slug = $3, updated_at = now() WHERE id = $1`, [
        organizationId,
        name,
        slug,
      ]);
  }

  /** The slugs taken by organizations other than `exceptId` that are `base` or `base-…`. */
  async slugsLike(base: string, exceptId?: string | null): Promise<string[]> {
    const rows: { slug: string }[] = await this.uow
      .manager()
      .query(`SELECT slug FROM organizations WHERE (slug = $1 OR slug LIKE $1 || '-%') AND id IS DISTINCT FROM $2`, [
        base,
        exceptId ?? null,
      ]);
    return rows.map((row) => row.slug);
  }

  async create(input: { name: string; slug: string; tier: string }): Promise<OrganizationRecord> {
    const on = this.uow.manager();
    const organization = on.create(Organization, {
      name: input.name,
      slug: input.slug,
      serviceTier: input.tier,
      isActive: true,
      billingEmail: null,
      providerCustomerId: null,
      providerSubscriptionId: null,
      currentPeriodEnd: null,
    });
    await on.save(organization);
    return branded(organization)!;
  }

  /** Deletes the organizations; every tenant table cascades from their rows. */
  async delete(organizationIds: readonly OrganizationId[]): Promise<void> {
    if (!organizationIds.length) return;
    await this.uow.manager().query(`DELETE FROM organizations WHERE id = ANY($1::uuid[])`, [organizationIds]);
  }

  // memberships

  async roleOf(organizationId: OrganizationId, userId: string): Promise<Role | null> {
    const membership = await this.uow.manager().findOneBy(Membership, { organizationId, userId });
    return membership?.role ?? null;
  }

  /** Makes the user a member; a user who already is one keeps the role they have. */
  async addMember(organizationId: OrganizationId, userId: string, role: Role) {
    await this.uow
      .manager()
      .createQueryBuilder()
      .insert()
      .into(Membership)
      .values({ organizationId, userId, role })
      .orIgnore()
      .execute();
  }

  async setRole(organizationId: OrganizationId, userId: string, role: Role): Promise<void> {
    await this.uow.manager().update(Membership, { organizationId, userId }, { role });
  }

  async removeMember(organizationId: OrganizationId, userId: string): Promise<void> {
    await this.uow.manager().delete(Membership, { organizationId, userId });
  }

  /** The membership, its row locked FOR UPDATE until the transaction ends; null for a non-member. */
  async lockMember(organizationId: OrganizationId, userId: string): Promise<MembershipRecord | null> {
    const membership = await this.uow.manager().findOne(Membership, {
      where: { organizationId, userId },
      lock: { mode: 'pessimistic_write' },
    });
    return membership ? { userId, role: membership.role, joinedAt: membership.createdAt } : null;
  }

  /** The members, oldest join first. */
  async members(organizationId: OrganizationId): Promise<MembershipRecord[]> {
    const rows = await this.uow
      .manager()
      .find(Membership, { where: { organizationId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map((row) => ({ userId: row.userId, role: row.role, joinedAt: row.createdAt }));
  }

  /** The Admins and Owners, oldest membership first. */
  async adminIds(organizationId: OrganizationId): Promise<string[]> {
    const rows: { user_id: string }[] = await this.uow
      .manager()
      .query(
        `SELECT user_id FROM memberships WHERE organization_id = $1 AND role IN ('admin', 'owner') ORDER BY created_at, id`,
        [organizationId],
      );
    return rows.map((row) => row.user_id);
  }

  async ownerCount(organizationId: OrganizationId): Promise<number> {
    return this.uow.manager().countBy(Membership, { organizationId, role: 'owner' });
  }

  async memberCount(organizationId: OrganizationId): Promise<number> {
    return this.uow.manager().countBy(Membership, { organizationId });
  }

  async isMemberElsewhere(organizationId: OrganizationId, userId: string): Promise<boolean> {
    const rows: unknown[] = await this.uow
      .manager()
      .query(`SELECT 1 FROM memberships WHERE user_id = $1 AND organization_id <> $2 LIMIT 1`, [
        userId,
        organizationId,
      ]);
    return rows.length > 0;
  }

  /** Deletes the organizations the user alone belongs to as their Owner; answers their ids. */
  async dropSoleOwnedBy(userId: string): Promise<OrganizationId[]> {
    const rows = await queryRows<{ id: string }>(
      this.uow.manager(),
      `DELETE FROM organizations o
        WHERE o.id IN (SELECT m.organization_id FROM memberships m WHERE m.user_id = $1 AND m.role = 'owner')
          AND NOT EXISTS (SELECT 1 FROM memberships x WHERE x.organization_id = o.id AND x.user_id <> $1)
        RETURNING o.id`,
      [userId],
    );
    return rows.map((row) => trustOrganizationId(row.id));
  }

  /** The members who belong to no other organization. */
  async soleMembers(organizationId: OrganizationId): Promise<string[]> {
    const rows: { user_id: string }[] = await this.uow.manager().query(
      `SELECT m.user_id FROM memberships m
        WHERE m.organization_id = $1
          AND NOT EXISTS (SELECT 1 FROM memberships x WHERE x.user_id = m.user_id AND x.organization_id <> $1)`,
      [organizationId],
    );
    return rows.map((row) => row.user_id);
  }

  /** The organizations only these users belong to, locked FOR UPDATE. */
  async lockOrganizationsOnlyOf(userIds: readonly string[]): Promise<OrganizationId[]> {
    if (!userIds.length) return [];
    const rows: { id: string }[] = await this.uow.manager().query(
      `SELECT o.id FROM organizations o
        WHERE o.id IN (SELECT organization_id FROM memberships WHERE user_id = ANY($1::uuid[]))
          AND NOT EXISTS (SELECT 1 FROM memberships m
                           WHERE m.organization_id = o.id AND m.user_id <> ALL($1::uuid[]))
          FOR UPDATE`,
      [userIds],
    );
    return rows.map((row) => trustOrganizationId(row.id));
  }

  /**
   * The active organization and every organization of the user, locked FOR UPDATE in id order,
   * with the number of other members and other Owners of each.
   */
  async lockAccountOrganizations(activeOrganizationId: OrganizationId, userId: string): Promise<AccountOrganization[]> {
    const rows: { id: string; others: number; other_owners: number; role: string | null }[] = await this.uow
      .manager()
      .query(
        `SELECT o.id,
                (SELECT count(*)::int FROM memberships x WHERE x.organization_id = o.id AND x.user_id <> $2) AS others,
                (SELECT count(*)::int FROM memberships x
                  WHERE x.organization_id = o.id AND x.user_id <> $2 AND x.role = 'owner') AS other_owners,
                m.role
           FROM organizations o
           LEFT JOIN memberships m ON m.organization_id = o.id AND m.user_id = $2
          WHERE o.id = $1 OR m.user_id IS NOT NULL
          ORDER BY o.id
            FOR UPDATE OF o`,
        [activeOrganizationId, userId],
      );
    return rows.map((row) => ({
      id: trustOrganizationId(row.id),
      others: row.others,
      otherOwners: row.other_owners,
      role: row.role,
    }));
  }

  /** The organization a fresh session starts in: the one the user joined first. */
  async firstJoinedBy(userId: string): Promise<OrganizationId | null> {
    const membership = await this.uow
      .manager()
      .getRepository(Membership)
      .findOne({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return membership ? trustOrganizationId(membership.organizationId) : null;
  }

  /** The user's organizations in the order they were joined; every organization, by name, with `all`. */
  async listFor(userId: string, options: { all?: boolean } = {}): Promise<OrganizationSummary[]> {
    const manager = this.uow.manager();
    const rows: { id: string; name: string; slug: string; service_tier: string }[] = options.all
      ? await manager.query(`SELECT id, name, slug, service_tier FROM organizations ORDER BY name, id`)
      : await manager.query(
          `SELECT o.id, o.name, o.slug, o.service_tier FROM organizations o
             JOIN memberships m ON m.organization_id = o.id AND m.user_id = $1
            ORDER BY m.created_at, o.id`,
          [userId],
        );
    return rows.map((row) => ({
      id: trustOrganizationId(row.id),
      name: row.name,
      slug: row.slug,
      serviceTier: row.service_tier,
    }));
  }
}

function branded(organization: Organization | null): OrganizationRecord | null {
  if (!organization) return null;
  return Object.assign(organization, { id: trustOrganizationId(organization.id) });
}
