import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { notFound } from '../common/errors/app-exception.js';
import { sqlIdentifier, sqlReference } from '../database/sql.js';
import { UsersService } from '../users/users.service.js';
import {
  OrganizationsRepository,
  type MembershipRecord,
  type OrganizationRecord,
  type OrganizationSubscription,
  type OrganizationSummary,
} from './organizations.repository.js';
import { slugify } from './slug.js';

export type { OrganizationSubscription, OrganizationSummary } from './organizations.repository.js';

/**
 * @deprecated (decision 0070) the organizations table's part of another feature's query: a
 * lateral join on the organization whose id is `organizationId` (a column of the caller's query),
 * exposing under `alias` only `id`, `name`, `slug`, `tier`, `active`, `period_end` and
 * `anchor_day`. Kept until its last readers (auth, sso, apps, webhooks) ask the repository or a
 * published view; `left` keeps rows without one.
 */
export function organizationJoin(alias: string, organizationId: string, options: { left?: boolean } = {}): string {
  return `${options.left ? 'LEFT ' : ''}JOIN LATERAL (
      SELECT id, name, slug, service_tier AS tier, is_active AS active, current_period_end AS period_end,
             billing_anchor_day AS anchor_day
        FROM organizations WHERE id = ${sqlReference(organizationId)}) ${sqlIdentifier(alias)} ON true`;
}

/** How a read runs: with the row locked FOR UPDATE (`lock`) until the unit of work ends. */
export interface OrganizationQuery {
  /** @deprecated the transaction a caller opened by hand: run the change in a unit of work instead. */
  manager?: EntityManager;
  /** Locks the organization row until the transaction ends: writes that count against the plan go one at a time. */
  lock?: boolean;
}

/**
 * Organizations and memberships as the other features see them (their owner is
 * OrganizationsRepository). Everything runs in the caller's unit of work. The trailing `manager`
 * parameters are for callers of other features that still open their transaction by hand
 * (deprecated: removed once they run in a unit of work), and the methods taking a plain `string`
 * id serve callers that do not hold a branded one yet.
 */
@Injectable()
export class OrganizationsService {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly users: UsersService,
  ) {}

  /** The organization; 404 when it does not exist (any more). */
  async get(organizationId: OrganizationId | string, options: OrganizationQuery = {}): Promise<OrganizationRecord> {
    const organization = await this.find(organizationId, options);
    if (!organization) throw notFound('Organization');
    return organization;
  }

  find(organizationId: OrganizationId | string, options: OrganizationQuery = {}): Promise<OrganizationRecord | null> {
    return this.organizations.find(organizationId, options);
  }

  /**
   * Locks the organization row until the caller's transaction ends, so changes that count or
   * order something of the organization (its apps, its plan's limits) run one at a time.
   */
  lock(organizationId: OrganizationId | string, manager?: EntityManager): Promise<void> {
    return this.organizations.lock(organizationId, manager);
  }

  /** The first organization created with this payment-provider customer. */
  findByProviderCustomer(customerId: string, options: OrganizationQuery = {}): Promise<OrganizationRecord | null> {
    return this.organizations.findByProviderCustomer(customerId, options);
  }

  /** The plan and subscription a payment-provider event leaves in force. */
  setSubscription(organizationId: OrganizationId, subscription: OrganizationSubscription): Promise<void> {
    return this.organizations.setSubscription(organizationId, subscription);
  }

  findBySlug(slug: string, manager?: EntityManager): Promise<OrganizationRecord | null> {
    return this.organizations.findBySlug(slug, manager);
  }

  /** The user's role in the organization, or null for a non-member. */
  roleOf(organizationId: OrganizationId | string, userId: string, manager?: EntityManager): Promise<Role | null> {
    return this.organizations.roleOf(organizationId, userId, manager);
  }

  /** Gives a member another role. */
  setRole(organizationId: OrganizationId, userId: string, role: Role): Promise<void> {
    return this.organizations.setRole(organizationId, userId, role);
  }

  /** Ends a membership (the account stays). */
  removeMember(organizationId: OrganizationId, userId: string): Promise<void> {
    return this.organizations.removeMember(organizationId, userId);
  }

  /** The membership, locked FOR UPDATE until the transaction ends; null for a non-member. */
  lockMember(organizationId: OrganizationId, userId: string): Promise<MembershipRecord | null> {
    return this.organizations.lockMember(organizationId, userId);
  }

  /** The members, oldest join first. */
  members(organizationId: OrganizationId): Promise<MembershipRecord[]> {
    return this.organizations.members(organizationId);
  }

  /** How many Owners the organization has. */
  ownerCount(organizationId: OrganizationId): Promise<number> {
    return this.organizations.ownerCount(organizationId);
  }

  /** How many members the organization has (a seat each). */
  memberCount(organizationId: OrganizationId | string, manager?: EntityManager): Promise<number> {
    return this.organizations.memberCount(organizationId, manager);
  }

  /** Whether the user is a member of any organization but this one. */
  isMemberElsewhere(organizationId: OrganizationId, userId: string): Promise<boolean> {
    return this.organizations.isMemberElsewhere(organizationId, userId);
  }

  /**
   * Deletes the organizations the user alone belongs to, as their Owner: those a sign-up made for
   * an address that was never confirmed, when its identity provider takes the address over. Such
   * an organization never had a signed-in member, so nothing but its row and membership exist.
   * Returns their ids.
   */
  dropSoleOwnedBy(userId: string, manager?: EntityManager): Promise<OrganizationId[]> {
    return this.organizations.dropSoleOwnedBy(userId, manager);
  }

  /** The members who belong to no other organization: their accounts go with this one. */
  soleMembers(organizationId: OrganizationId): Promise<string[]> {
    return this.organizations.soleMembers(organizationId);
  }

  /**
   * The e-mail addresses of the organization's active Admins and Owners, oldest membership first:
   * who organization notices go to (mail sends to the addresses it is given).
   */
  async adminAddresses(organizationId: OrganizationId | string): Promise<string[]> {
    const addresses: string[] = [];
    for (const userId of await this.organizations.adminIds(organizationId)) {
      const user = await this.users.findById(userId);
      if (user?.status === 'active') addresses.push(user.email);
    }
    return addresses;
  }

  /** The organization a fresh session starts in: the one the user joined first. */
  firstJoinedBy(userId: string): Promise<OrganizationId | null> {
    return this.organizations.firstJoinedBy(userId);
  }

  /** The user's organizations in the order they were joined; every organization, by name, with `all`. */
  listFor(userId: string, options: { all?: boolean } = {}): Promise<OrganizationSummary[]> {
    return this.organizations.listFor(userId, options);
  }

  /** A new organization with its owner; `manager` is deprecated (see the class). */
  async createWithOwner(
    manager: EntityManager | undefined,
    input: { name: string; tier?: string; ownerId: string },
  ): Promise<OrganizationRecord> {
    const organization = await this.organizations.create(
      { name: input.name, slug: await this.uniqueSlug(input.name, undefined, manager), tier: input.tier ?? 'free' },
      manager,
    );
    await this.organizations.addMember(organization.id, input.ownerId, 'owner', manager);
    return organization;
  }

  /** Makes the user a member; a user who already is one keeps the role they have. */
  addMember(organizationId: OrganizationId | string, userId: string, role: Role, manager?: EntityManager) {
    return this.organizations.addMember(organizationId, userId, role, manager);
  }

  /** The slug of a name, with a numeric suffix when another organization has it. */
  async uniqueSlug(name: string, exceptId?: string, manager?: EntityManager): Promise<string> {
    const base = slugify(name);
    const taken = new Set(await this.organizations.slugsLike(base, exceptId, manager));
    if (!taken.has(base)) return base;
    for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
  }
}
