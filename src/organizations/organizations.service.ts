import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import { notFound } from '../common/errors/app-exception.js';
import { Membership } from './membership.entity.js';
import { Organization } from './organization.entity.js';
import { slugify } from './slug.js';
import { sqlIdentifier, sqlReference } from '../database/sql.js';
import { usersFrom } from '../users/users.service.js';

/** How a read runs: in the caller's transaction (`manager`), and with the row locked FOR UPDATE (`lock`). */
export interface OrganizationQuery {
  manager?: EntityManager;
  /** Locks the organization row until the transaction ends: writes that count against the plan go one at a time. */
  lock?: boolean;
}

/** What a subscription change writes; a null customer keeps the one on record. */
export interface OrganizationSubscription {
  tier: string;
  customerId: string | null;
  subscriptionId: string | null;
  periodEnd: Date | null;
  /** The day of month the subscription renews on (1-31), when the provider says. */
  anchorDay: number | null;
}

/** An organization the user may switch to, as `GET /auth/orgs` lists it. */
export interface OrganizationSummary {
  id: string;
  name: string;
  slug: string;
  serviceTier: string;
}

/**
 * The organizations table's part of another feature's query, for the reads that must stay one
 * round trip (the SDK tenant lookup, credential checks on every request, set-wide sweeps): a
 * lateral join on the organization whose id is `organizationId` (a column of the caller's query),
 * exposing under `alias` only `id`, `name`, `slug`, `tier` (the raw service tier), `active` and
 * `period_end` and `anchor_day` (the billing cycle's). The owner keeps its column names to itself; `left` keeps rows without one.
 */
export function organizationJoin(alias: string, organizationId: string, options: { left?: boolean } = {}): string {
  return `${options.left ? 'LEFT ' : ''}JOIN LATERAL (
      SELECT id, name, slug, service_tier AS tier, is_active AS active, current_period_end AS period_end,
             billing_anchor_day AS anchor_day
        FROM organizations WHERE id = ${sqlReference(organizationId)}) ${sqlIdentifier(alias)} ON true`;
}

/**
 * The memberships table's part of another feature's query, for the same one-round-trip reads as
 * `organizationJoin`: a lateral join on the membership of `userId` in `organizationId` (columns or
 * parameters of the caller's query), exposing under `alias` only `id` (the membership's, for a
 * stable order), `role` and `joined_at`.
 */
export function membershipJoin(
  alias: string,
  userId: string,
  organizationId: string,
  options: { left?: boolean } = {},
): string {
  return `${options.left ? 'LEFT ' : ''}JOIN LATERAL (
      SELECT id, role, created_at AS joined_at
        FROM memberships WHERE user_id = ${sqlReference(userId)} AND organization_id = ${sqlReference(organizationId)}) ${sqlIdentifier(alias)} ON true`;
}

/**
 * The owner of the `organizations` and `memberships` tables: every other feature reads and writes
 * them through here. Tenant methods take the organization id first, so no call reaches another
 * tenant's row by accident.
 */
@Injectable()
export class OrganizationsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The organization; 404 when it does not exist (any more). */
  async get(organizationId: string, options: OrganizationQuery = {}): Promise<Organization> {
    const organization = await this.find(organizationId, options);
    if (!organization) throw notFound('Organization');
    return organization;
  }

  async find(organizationId: string, options: OrganizationQuery = {}): Promise<Organization | null> {
    const manager = options.manager ?? this.dataSource.manager;
    return manager.findOne(Organization, {
      where: { id: organizationId },
      ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  /**
   * Locks the organization row until the caller's transaction ends, so changes that count or
   * order something of the organization (its apps, its plan's limits) run one at a time.
   */
  async lock(organizationId: string, manager: EntityManager): Promise<void> {
    await manager.query(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId]);
  }

  /** The first organization created with this payment-provider customer. */
  async findByProviderCustomer(customerId: string, options: OrganizationQuery = {}): Promise<Organization | null> {
    const manager = options.manager ?? this.dataSource.manager;
    return manager.findOne(Organization, {
      where: { providerCustomerId: customerId },
      order: { createdAt: 'ASC' },
      ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  /** The plan and subscription a payment-provider event leaves in force, in the caller's transaction. */
  async setSubscription(organizationId: string, subscription: OrganizationSubscription, manager: EntityManager) {
    await manager.query(
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

  async findBySlug(slug: string, manager: EntityManager = this.dataSource.manager): Promise<Organization | null> {
    return manager.findOneBy(Organization, { slug });
  }

  /** The user's role in the organization, or null for a non-member. */
  async roleOf(organizationId: string, userId: string, manager: EntityManager = this.dataSource.manager) {
    const membership = await manager.findOneBy(Membership, { organizationId, userId });
    return membership?.role ?? null;
  }

  /** Gives a member another role, in the caller's transaction. */
  async setRole(organizationId: string, userId: string, role: Role, manager: EntityManager): Promise<void> {
    await manager.update(Membership, { organizationId, userId }, { role });
  }

  /** Ends a membership (the account stays), in the caller's transaction. */
  async removeMember(organizationId: string, userId: string, manager: EntityManager): Promise<void> {
    await manager.delete(Membership, { organizationId, userId });
  }

  /**
   * The user's membership, its row locked FOR UPDATE until the caller's transaction ends, so a
   * role change or removal acts on the role it checked; null for a non-member.
   */
  async lockMember(
    organizationId: string,
    userId: string,
    manager: EntityManager,
  ): Promise<{ role: Role; joinedAt: Date } | null> {
    const membership = await manager.findOne(Membership, {
      where: { organizationId, userId },
      lock: { mode: 'pessimistic_write' },
    });
    return membership ? { role: membership.role, joinedAt: membership.createdAt } : null;
  }

  /** How many Owners the organization has, in the caller's transaction. */
  async ownerCount(organizationId: string, manager: EntityManager): Promise<number> {
    return manager.countBy(Membership, { organizationId, role: 'owner' });
  }

  /** How many members the organization has (a seat each), in the caller's transaction. */
  async memberCount(organizationId: string, manager: EntityManager): Promise<number> {
    return manager.countBy(Membership, { organizationId });
  }

  /** Whether the user is a member of any organization but this one. */
  async isMemberElsewhere(organizationId: string, userId: string, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM memberships WHERE user_id = $1 AND organization_id <> $2 LIMIT 1`,
      [userId, organizationId],
    );
    return rows.length > 0;
  }

  /**
   * Deletes the organizations the user alone belongs to, as their Owner: those a sign-up made for
   * an address that was never confirmed, when its identity provider takes the address over. Such
   * an organization never had a signed-in member, so nothing but its row and membership exist.
   * Returns their ids.
   */
  async dropSoleOwnedBy(userId: string, manager: EntityManager): Promise<string[]> {
    const rows: { id: string }[] = await manager.query(
      `DELETE FROM organizations o
        WHERE o.id IN (SELECT m.organization_id FROM memberships m WHERE m.user_id = $1 AND m.role = 'owner')
          AND NOT EXISTS (SELECT 1 FROM memberships x WHERE x.organization_id = o.id AND x.user_id <> $1)
        RETURNING o.id`,
      [userId],
    );
    return rows.map((row) => row.id);
  }

  /** The members who belong to no other organization: their accounts go with this one. */
  async soleMembers(organizationId: string, manager: EntityManager): Promise<string[]> {
    const rows: { user_id: string }[] = await manager.query(
      `SELECT m.user_id FROM memberships m
        WHERE m.organization_id = $1
          AND NOT EXISTS (SELECT 1 FROM memberships x WHERE x.user_id = m.user_id AND x.organization_id <> $1)`,
      [organizationId],
    );
    return rows.map((row) => row.user_id);
  }

  /**
   * The e-mail addresses of the organization's active Admins and Owners, oldest membership first:
   * who organization notices go to (mail sends to the addresses it is given).
   */
  async adminAddresses(organizationId: string): Promise<string[]> {
    const rows: { email: string }[] = await this.dataSource.query(
      `SELECT u.email FROM memberships m JOIN ${usersFrom('u')} ON u.id = m.user_id
        WHERE m.organization_id = $1 AND m.role IN ('admin', 'owner') AND u.status = 'active'
        ORDER BY m.created_at`,
      [organizationId],
    );
    return rows.map((row) => row.email);
  }

  /** The organization a fresh session starts in: the one the user joined first. */
  async firstJoinedBy(userId: string): Promise<string | null> {
    const membership = await this.dataSource
      .getRepository(Membership)
      .findOne({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return membership?.organizationId ?? null;
  }

  /** The user's organizations in the order they were joined; every organization, by name, with `all`. */
  async listFor(userId: string, options: { all?: boolean } = {}): Promise<OrganizationSummary[]> {
    const rows: { id: string; name: string; slug: string; service_tier: string }[] = options.all
      ? await this.dataSource.query(`SELECT id, name, slug, service_tier FROM organizations ORDER BY name, id`)
      : await this.dataSource.query(
          `SELECT o.id, o.name, o.slug, o.service_tier FROM organizations o
             JOIN memberships m ON m.organization_id = o.id AND m.user_id = $1
            ORDER BY m.created_at, o.id`,
          [userId],
        );
    return rows.map((row) => ({ id: row.id, name: row.name, slug: row.slug, serviceTier: row.service_tier }));
  }

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
    await this.addMember(organization.id, input.ownerId, 'owner', manager);
    return organization;
  }

  /** Makes the user a member; a user who already is one keeps the role they have. */
  async addMember(organizationId: string, userId: string, role: Role, manager: EntityManager): Promise<void> {
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
