/* eslint-disable @typescript-eslint/require-await -- in-memory fakes answer at once, behind the repositories' promise signatures */
import type { Role } from '../../src/common/access/access.decorator.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';
import type { Organization } from '../../src/organizations/organization.entity.js';
import type { OrganizationRecord } from '../../src/organizations/organizations.repository.js';
import type { OrganizationSummary, OrganizationsService } from '../../src/organizations/organizations.service.js';

/**
 * The organizations feature as identity's services read it (organizations, memberships, roles),
 * in memory. Only the reads those services make: the organizations feature's own fake covers the rest.
 */
export class FakeOrganizations implements Pick<
  OrganizationsService,
  'find' | 'get' | 'findBySlug' | 'roleOf' | 'listFor'
> {
  readonly organizations = new Map<string, Organization>();
  /** Memberships in the order they were made. */
  readonly memberships: { organizationId: string; userId: string; role: Role }[] = [];

  add(id: string, serviceTier = 'free', slug = id): Organization {
    const organization = { id, name: `Org ${id}`, slug, serviceTier } as Organization;
    this.organizations.set(id, organization);
    return organization;
  }

  join(organizationId: string, userId: string, role: Role): void {
    this.memberships.push({ organizationId, userId, role });
  }

  async find(organizationId: string): Promise<OrganizationRecord | null> {
    return (this.organizations.get(organizationId) as OrganizationRecord | undefined) ?? null;
  }

  async get(organizationId: string): Promise<OrganizationRecord> {
    const organization = this.organizations.get(organizationId);
    if (!organization) throw new Error('Organization not found');
    return organization as OrganizationRecord;
  }

  async findBySlug(slug: string): Promise<OrganizationRecord | null> {
    return (
      ([...this.organizations.values()].find((organization) => organization.slug === slug) as
        OrganizationRecord | undefined) ?? null
    );
  }

  async roleOf(organizationId: string, userId: string): Promise<Role | null> {
    return this.memberships.find((m) => m.organizationId === organizationId && m.userId === userId)?.role ?? null;
  }

  async listFor(userId: string, options: { all?: boolean } = {}): Promise<OrganizationSummary[]> {
    const ids = options.all
      ? [...this.organizations.keys()]
      : this.memberships.filter((m) => m.userId === userId).map((m) => m.organizationId);
    return ids.map((id) => {
      const { name, slug, serviceTier } = this.organizations.get(id)!;
      return { id: trustOrganizationId(id), name, slug, serviceTier };
    });
  }

  asService(): OrganizationsService {
    return this as unknown as OrganizationsService;
  }
}
