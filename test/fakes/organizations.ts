import { randomUUID } from 'node:crypto';
import type { Role } from '../../src/common/access/access.decorator.js';
import type { OrgAuthContext, SessionCaller } from '../../src/common/access/auth-context.js';
import { trustOrganizationId, type OrganizationId } from '../../src/common/access/tenant-id.js';
import { Organization } from '../../src/organizations/organization.entity.js';
import type {
  AccountOrganization,
  MembershipRecord,
  OrganizationRecord,
  OrganizationsRepository,
  OrganizationSubscription,
  OrganizationSummary,
} from '../../src/organizations/organizations.repository.js';
import type { OrganizationSourcesService } from '../../src/organizations/organization-sources.service.js';
import { OrganizationsService } from '../../src/organizations/organizations.service.js';
import type { User } from '../../src/users/user.entity.js';
import type { UsersService } from '../../src/users/users.service.js';

type Public<T> = { [K in keyof T]: T[K] };

interface FakeMembership {
  organizationId: OrganizationId;
  userId: string;
  role: Role;
  createdAt: Date;
}

let clock = Date.parse('2026-01-01T00:00:00Z');
const tick = () => new Date((clock += 1000));

/** organizations and memberships in memory; `lock` records which organizations were locked. */
export class FakeOrganizationsRepository implements Public<OrganizationsRepository> {
  readonly organizations = new Map<string, OrganizationRecord>();
  memberships: FakeMembership[] = [];
  readonly locked: string[] = [];

  /** A new organization (Free unless `tier`), with `owner` as its Owner when given. */
  seed(input: { name?: string; tier?: string; owner?: string } = {}): OrganizationRecord {
    const id = trustOrganizationId(randomUUID());
    const organization = Object.assign(new Organization(), {
      id,
      name: input.name ?? `Org ${this.organizations.size + 1}`,
      slug: `org-${this.organizations.size + 1}`,
      serviceTier: input.tier ?? 'free',
      isActive: true,
      billingEmail: null,
      providerCustomerId: null,
      providerSubscriptionId: null,
      currentPeriodEnd: null,
      billingAnchorDay: null,
      createdAt: tick(),
      updatedAt: tick(),
    }) as OrganizationRecord;
    this.organizations.set(id, organization);
    if (input.owner) this.join(id, input.owner, 'owner');
    return organization;
  }

  join(organizationId: OrganizationId, userId: string, role: Role): void {
    this.memberships.push({ organizationId, userId, role, createdAt: tick() });
  }

  find(organizationId: string, options: { lock?: boolean } = {}): Promise<OrganizationRecord | null> {
    if (options.lock) this.locked.push(organizationId);
    return Promise.resolve(copy(this.organizations.get(organizationId)));
  }

  findMany(organizationIds: readonly OrganizationId[]): Promise<OrganizationRecord[]> {
    return Promise.resolve(organizationIds.flatMap((id) => copy(this.organizations.get(id)) ?? []));
  }

  lock(organizationId: string): Promise<void> {
    this.locked.push(organizationId);
    return Promise.resolve();
  }

  findByProviderCustomer(customerId: string): Promise<OrganizationRecord | null> {
    return Promise.resolve(copy([...this.organizations.values()].find((o) => o.providerCustomerId === customerId)));
  }

  findBySlug(slug: string): Promise<OrganizationRecord | null> {
    return Promise.resolve(copy([...this.organizations.values()].find((o) => o.slug === slug)));
  }

  setSubscription(organizationId: string, subscription: OrganizationSubscription): Promise<void> {
    const organization = this.organizations.get(organizationId);
    if (organization) {
      organization.serviceTier = subscription.tier;
      organization.providerCustomerId = subscription.customerId ?? organization.providerCustomerId;
      organization.providerSubscriptionId = subscription.subscriptionId;
      organization.currentPeriodEnd = subscription.periodEnd;
      organization.billingAnchorDay = subscription.anchorDay;
    }
    return Promise.resolve();
  }

  clearSubscription(organizationId: OrganizationId): Promise<void> {
    const organization = this.organizations.get(organizationId);
    if (organization) {
      organization.serviceTier = 'free';
      organization.providerSubscriptionId = null;
      organization.currentPeriodEnd = null;
      organization.billingAnchorDay = null;
    }
    return Promise.resolve();
  }

  /** A slug another organization has breaks the unique index, as in the database. */
  rename(organizationId: OrganizationId, name: string, slug: string): Promise<void> {
    if ([...this.organizations.values()].some((o) => o.slug === slug && o.id !== organizationId)) {
      return Promise.reject(Object.assign(new Error('organizations_slug_key'), { code: '23505' }));
    }
    const organization = this.organizations.get(organizationId);
    if (organization) Object.assign(organization, { name, slug, updatedAt: tick() });
    return Promise.resolve();
  }

  slugsLike(base: string, exceptId?: string | null): Promise<string[]> {
    return Promise.resolve(
      [...this.organizations.values()]
        .filter((o) => o.id !== exceptId && (o.slug === base || o.slug.startsWith(`${base}-`)))
        .map((o) => o.slug),
    );
  }

  create(input: { name: string; slug: string; tier: string }): Promise<OrganizationRecord> {
    const organization = this.seed({ name: input.name, tier: input.tier });
    organization.slug = input.slug;
    return Promise.resolve(organization);
  }

  delete(organizationIds: readonly OrganizationId[]): Promise<void> {
    for (const id of organizationIds) this.organizations.delete(id);
    this.memberships = this.memberships.filter((m) => !organizationIds.includes(m.organizationId));
    return Promise.resolve();
  }

  roleOf(organizationId: string, userId: string): Promise<Role | null> {
    return Promise.resolve(this.membership(organizationId, userId)?.role ?? null);
  }

  addMember(organizationId: string, userId: string, role: Role): Promise<void> {
    if (!this.membership(organizationId, userId)) this.join(trustOrganizationId(organizationId), userId, role);
    return Promise.resolve();
  }

  setRole(organizationId: OrganizationId, userId: string, role: Role): Promise<void> {
    const membership = this.membership(organizationId, userId);
    if (membership) membership.role = role;
    return Promise.resolve();
  }

  removeMember(organizationId: OrganizationId, userId: string): Promise<void> {
    this.memberships = this.memberships.filter((m) => !(m.organizationId === organizationId && m.userId === userId));
    return Promise.resolve();
  }

  lockMember(organizationId: OrganizationId, userId: string): Promise<MembershipRecord | null> {
    const membership = this.membership(organizationId, userId);
    return Promise.resolve(membership ? { userId, role: membership.role, joinedAt: membership.createdAt } : null);
  }

  members(organizationId: OrganizationId): Promise<MembershipRecord[]> {
    return Promise.resolve(
      this.of(organizationId).map((m) => ({ userId: m.userId, role: m.role, joinedAt: m.createdAt })),
    );
  }

  adminIds(organizationId: string): Promise<string[]> {
    return Promise.resolve(
      this.of(organizationId)
        .filter((m) => m.role === 'admin' || m.role === 'owner')
        .map((m) => m.userId),
    );
  }

  ownerCount(organizationId: OrganizationId): Promise<number> {
    return Promise.resolve(this.of(organizationId).filter((m) => m.role === 'owner').length);
  }

  memberCount(organizationId: string): Promise<number> {
    return Promise.resolve(this.of(organizationId).length);
  }

  isMemberElsewhere(organizationId: OrganizationId, userId: string): Promise<boolean> {
    return Promise.resolve(this.memberships.some((m) => m.userId === userId && m.organizationId !== organizationId));
  }

  async dropSoleOwnedBy(userId: string): Promise<OrganizationId[]> {
    const ids = this.memberships
      .filter((m) => m.userId === userId && m.role === 'owner' && this.of(m.organizationId).length === 1)
      .map((m) => m.organizationId);
    await this.delete(ids);
    return ids;
  }

  soleMembers(organizationId: OrganizationId): Promise<string[]> {
    return Promise.resolve(
      this.of(organizationId)
        .filter((m) => !this.memberships.some((x) => x.userId === m.userId && x.organizationId !== organizationId))
        .map((m) => m.userId),
    );
  }

  lockOrganizationsOnlyOf(userIds: readonly string[]): Promise<OrganizationId[]> {
    return Promise.resolve(
      [...this.organizations.keys()]
        .map(trustOrganizationId)
        .filter((id) => this.of(id).length > 0 && this.of(id).every((m) => userIds.includes(m.userId))),
    );
  }

  lockAccountOrganizations(activeOrganizationId: OrganizationId, userId: string): Promise<AccountOrganization[]> {
    const ids = new Set<OrganizationId>([
      activeOrganizationId,
      ...this.memberships.filter((m) => m.userId === userId).map((m) => m.organizationId),
    ]);
    return Promise.resolve(
      [...ids]
        .filter((id) => this.organizations.has(id))
        .map((id) => {
          const others = this.of(id).filter((m) => m.userId !== userId);
          return {
            id,
            others: others.length,
            otherOwners: others.filter((m) => m.role === 'owner').length,
            role: this.membership(id, userId)?.role ?? null,
          };
        }),
    );
  }

  firstJoinedBy(userId: string): Promise<OrganizationId | null> {
    return Promise.resolve(this.memberships.find((m) => m.userId === userId)?.organizationId ?? null);
  }

  listFor(userId: string): Promise<OrganizationSummary[]> {
    return Promise.resolve(
      this.memberships
        .filter((m) => m.userId === userId)
        .flatMap((m) => this.organizations.get(m.organizationId) ?? [])
        .map((o) => ({ id: o.id, name: o.name, slug: o.slug, serviceTier: o.serviceTier })),
    );
  }

  private membership(organizationId: string, userId: string): FakeMembership | undefined {
    return this.memberships.find((m) => m.organizationId === organizationId && m.userId === userId);
  }

  private of(organizationId: string): FakeMembership[] {
    return this.memberships.filter((m) => m.organizationId === organizationId);
  }
}

/** A row as read: later writes do not change it (tests change the stored one to set the scene). */
function copy(organization: OrganizationRecord | undefined): OrganizationRecord | null {
  return organization ? Object.assign<Organization, OrganizationRecord>(new Organization(), organization) : null;
}

/** The accounts the organization features read (addresses, status), in memory. */
export class FakeUsers {
  readonly users = new Map<string, Pick<User, 'id' | 'email' | 'status' | 'isSuperAdmin'>>();
  readonly deactivated: string[] = [];
  readonly markedForDeletion: string[] = [];

  add(email: string, options: { status?: User['status']; superAdmin?: boolean } = {}): string {
    const id = randomUUID();
    this.users.set(id, { id, email, status: options.status ?? 'active', isSuperAdmin: options.superAdmin ?? false });
    return id;
  }

  findById(userId: string) {
    return Promise.resolve(this.users.get(userId) ?? null);
  }

  findByEmail(email: string) {
    return Promise.resolve([...this.users.values()].find((u) => u.email.toLowerCase() === email.toLowerCase()) ?? null);
  }

  addressOf(userId: string) {
    return Promise.resolve(this.users.get(userId)?.email ?? null);
  }

  lock() {
    return Promise.resolve();
  }

  markForDeletion(userId: string) {
    this.markedForDeletion.push(userId);
    return Promise.resolve();
  }

  deactivate(userIds: readonly string[]) {
    const ids = userIds.filter((id) => this.users.get(id)?.status === 'active');
    for (const id of ids) this.users.get(id)!.status = 'disabled';
    this.deactivated.push(...ids);
    return Promise.resolve(ids);
  }

  asUsersService(): UsersService {
    return this as unknown as UsersService;
  }
}

/** OrganizationsService over the fakes. */
export function fakeOrganizations(
  repository = new FakeOrganizationsRepository(),
  users = new FakeUsers(),
): { organizations: OrganizationsService; repository: FakeOrganizationsRepository; users: FakeUsers } {
  return {
    organizations: new OrganizationsService(repository as unknown as OrganizationsRepository, users.asUsersService()),
    repository,
    users,
  };
}

/** A signed-in caller acting in `organizationId` with `role`. */
export function sessionAuth(
  organizationId: OrganizationId,
  userId: string,
  role: Role,
  email = `${userId}@example.com`,
): OrgAuthContext & { caller: SessionCaller } {
  return {
    caller: { kind: 'session', userId, email, isSuperAdmin: false, role, speaksForAccount: true },
    organizationId,
    ipAddress: '203.0.113.7',
  };
}

/** An API key with `admin:team` acting in `organizationId`. */
export function apiKeyAuth(organizationId: OrganizationId, serviceTier: string): OrgAuthContext {
  return {
    caller: {
      kind: 'apiKey',
      keyId: randomUUID(),
      prefix: 'service_abc',
      scopes: ['admin:team'],
      email: null,
      userId: null,
      role: null,
      serviceTier,
    },
    organizationId,
    ipAddress: null,
  };
}

/** The organization sources the organization pages read, with each organization's devices this month (0 unless set). */
export class FixedMonthlyActiveDevices implements Pick<OrganizationSourcesService, 'monthlyActiveDevices'> {
  private readonly counts = new Map<string, number>();

  set(organizationId: string, devices: number): this {
    this.counts.set(organizationId, devices);
    return this;
  }

  monthlyActiveDevices(organizationId: OrganizationId): Promise<number> {
    return Promise.resolve(this.counts.get(organizationId) ?? 0);
  }

  asSourcesService(): OrganizationSourcesService {
    return this as unknown as OrganizationSourcesService;
  }
}
