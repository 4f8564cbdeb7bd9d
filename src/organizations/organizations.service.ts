import { Injectable } from '@nestjs/common';
import type { Role } from '../common/access/access.decorator.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { notFound } from '../common/errors/app-exception.js';
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

/** How a read runs: with the row locked FOR UPDATE (`lock`) until the unit of work ends. */
export interface OrganizationQuery {
  /** Locks the organization row until the transaction ends: writes that count against the plan go one at a time. */
  lock?: boolean;
}

/**
 * Organizations and memberships as the other features see them (their owner is
 * OrganizationsRepository). Everything runs in the caller's unit of work (decision 0070): no
 * method takes a transaction.
 */
@Injectable()
export class OrganizationsService {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly users: UsersService,
  ) {}

  /**
   * The organization; 404 when it does not exist (any more). The id arrives branded, as on every
   * tenant table (decision 0070): from a session, a key, a signed Stripe event or a tenant row.
   */
  async get(organizationId: OrganizationId, options: OrganizationQuery = {}): Promise<OrganizationRecord> {
    const organization = await this.find(organizationId, options);
    if (!organization) throw notFound('Organization');
    return organization;
  }

  find(organizationId: OrganizationId, options: OrganizationQuery = {}): Promise<OrganizationRecord | null> {
    return this.organizations.find(organizationId, options);
  }

  /**
   * Locks the organization row until the caller's transaction ends, so changes that count or
   * order something of the organization (its apps, its plan's limits) run one at a time.
   */
  lock(organizationId: OrganizationId): Promise<void> {
    return this.organizations.lock(organizationId);
  }

  /** The first organization created with this payment-provider customer. */
  findByProviderCustomer(customerId: string, options: OrganizationQuery = {}): Promise<OrganizationRecord | null> {
    return this.organizations.findByProviderCustomer(customerId, options);
  }

  /** The plan and subscription a payment-provider event leaves in force. */
  setSubscription(organizationId: OrganizationId, subscription: OrganizationSubscription): Promise<void> {
    return this.organizations.setSubscription(organizationId, subscription);
  }

  findBySlug(slug: string): Promise<OrganizationRecord | null> {
    return this.organizations.findBySlug(slug);
  }

  /** The user's role in the organization, or null for a non-member. */
  roleOf(organizationId: OrganizationId, userId: string): Promise<Role | null> {
    return this.organizations.roleOf(organizationId, userId);
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
  memberCount(organizationId: OrganizationId): Promise<number> {
    return this.organizations.memberCount(organizationId);
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
  dropSoleOwnedBy(userId: string): Promise<OrganizationId[]> {
    return this.organizations.dropSoleOwnedBy(userId);
  }

  /** The members who belong to no other organization: their accounts go with this one. */
  soleMembers(organizationId: OrganizationId): Promise<string[]> {
    return this.organizations.soleMembers(organizationId);
  }

  /**
   * The e-mail addresses of the organization's active Admins and Owners, oldest membership first:
   * who organization notices go to (mail sends to the addresses it is given).
   */
  async adminAddresses(organizationId: OrganizationId): Promise<string[]> {
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

  /** A new organization with its owner, in the caller's unit of work. */
  async createWithOwner(input: { name: string; tier?: string; ownerId: string }): Promise<OrganizationRecord> {
    const organization = await this.organizations.create({
      name: input.name,
      slug: await this.uniqueSlug(input.name),
      tier: input.tier ?? 'free',
    });
    await this.organizations.addMember(organization.id, input.ownerId, 'owner');
    return organization;
  }

  /** Makes the user a member; a user who already is one keeps the role they have. */
  addMember(organizationId: OrganizationId, userId: string, role: Role): Promise<void> {
    return this.organizations.addMember(organizationId, userId, role);
  }

  /** The slug of a name, with a numeric suffix when another organization has it. */
  async uniqueSlug(name: string, exceptId?: string): Promise<string> {
    const base = slugify(name);
    const taken = new Set(await this.organizations.slugsLike(base, exceptId));
    if (!taken.has(base)) return base;
    for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
  }
}
