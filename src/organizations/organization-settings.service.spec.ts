import { describe, expect, it } from '@jest/globals';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { fakeOrganizations, FixedMonthlyActiveDevices, sessionAuth } from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { OrganizationSettingsService } from './organization-settings.service.js';
import type { OrganizationsRepository } from './organizations.repository.js';

/** The service over fakes, with an organization `Acme` (slug `acme`) and its Admin. */
function world() {
  const uow = new FakeUnitOfWork();
  const { organizations, repository } = fakeOrganizations();
  const audit = new RecordedAudit();
  const devices = new FixedMonthlyActiveDevices();
  const service = new OrganizationSettingsService(
    uow.asUnitOfWork(),
    repository as unknown as OrganizationsRepository,
    organizations,
    audit.asAuditService(),
    devices.asSourcesService(),
  );
  const org = repository.seed({ name: 'Acme' });
  org.slug = 'acme';
  /** Another organization, holding `slug`. */
  const holding = (slug: string) => {
    const other = repository.seed();
    other.slug = slug;
    return other;
  };
  return { service, repository, audit, devices, org, holding, admin: sessionAuth(org.id, 'admin-1', 'admin') };
}

describe('OrganizationSettingsService', () => {
  it("reads the caller's organization, and answers one that is gone as not found", async () => {
    const { service, org } = world();
    expect(await service.get(org.id)).toMatchObject({ id: org.id, name: 'Acme', slug: 'acme', serviceTier: 'free' });
    await expect(service.get(trustOrganizationId('00000000-0000-4000-8000-000000000000'))).rejects.toMatchObject({
      status: 404,
    });
  });

  it('renames with a slug made from the new name, and records both changes by the Admin', async () => {
    const { service, audit, admin, org } = world();
    const before = org.updatedAt;
    const renamed = await service.rename(admin, 'Renamed, Inc.');
    expect(renamed).toMatchObject({ id: org.id, name: 'Renamed, Inc.', slug: 'renamed-inc' });
    expect(renamed.updatedAt.getTime()).toBeGreaterThan(before.getTime());
    expect(await service.get(org.id)).toMatchObject({ name: 'Renamed, Inc.', slug: 'renamed-inc' });
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'org.settings_updated',
        organizationId: org.id,
        resourceType: 'organization',
        resourceId: org.id,
        actorUserId: 'admin-1',
        metadata: { name: { from: 'Acme', to: 'Renamed, Inc.' }, slug: { from: 'acme', to: 'renamed-inc' } },
      }),
    ]);
  });

  it('gives the new slug the first free numeric suffix when other organizations have it', async () => {
    const { service, admin, holding } = world();
    holding('renamed-inc');
    holding('renamed-inc-2');
    expect((await service.rename(admin, 'Renamed Inc')).slug).toBe('renamed-inc-3');
  });

  it('keeps its own slug for a name that makes the same one', async () => {
    const { service, admin } = world();
    expect(await service.rename(admin, 'ACME')).toMatchObject({ name: 'ACME', slug: 'acme' });
  });

  it('changes and records nothing when renamed to the name it has', async () => {
    const { service, admin, audit, org } = world();
    const before = org.updatedAt;
    const same = await service.rename(admin, 'Acme');
    expect(same).toMatchObject({ name: 'Acme', slug: 'acme', updatedAt: before });
    expect(audit.entries).toEqual([]);
  });

  it('renames only the organization the caller acts in', async () => {
    const { service, admin, holding, repository } = world();
    const other = holding('other');
    await service.rename(admin, 'Renamed');
    expect(repository.organizations.get(other.id)).toMatchObject({ slug: 'other', name: other.name });
  });

  it('recomputes the slug when a concurrent rename took it first, recording the rename once', async () => {
    const { service, admin, audit, repository, holding } = world();
    const slugsLike = repository.slugsLike.bind(repository);
    let raced = false;
    repository.slugsLike = async (base, exceptId) => {
      const taken = await slugsLike(base, exceptId);
      // Another organization's rename commits between this read and the write.
      if (!raced) {
        raced = true;
        holding(base);
      }
      return taken;
    };
    expect((await service.rename(admin, 'Renamed')).slug).toBe('renamed-2');
    expect(audit.actions()).toEqual(['org.settings_updated']);
  });

  it('gives up after a handful of lost races, changing nothing', async () => {
    const { service, admin, audit, repository, holding, org } = world();
    holding('renamed');
    // Every read is stale: each time, another rename has taken the slug by the write.
    let reads = 0;
    repository.slugsLike = () => {
      reads++;
      return Promise.resolve([]);
    };
    await expect(service.rename(admin, 'Renamed')).rejects.toMatchObject({ code: '23505' });
    expect(reads).toBeGreaterThan(1);
    expect(await service.get(org.id)).toMatchObject({ name: 'Acme', slug: 'acme' });
    expect(audit.entries).toEqual([]);
  });

  it("summarises billing: the plan's name and raw value, this month's active devices and the plan's limit", async () => {
    const { service, devices, org } = world();
    devices.set(org.id, 42);
    expect(await service.billingSummary(org.id)).toEqual({
      plan: 'Free',
      planRawValue: 'free',
      madUsed: 42,
      madLimit: 1000,
      currentPeriodEnd: null,
      providerCustomerId: null,
      providerSubscriptionId: null,
    });
  });

  it('shows the provider ids and period end, an unlimited Enterprise limit and a legacy plan by its own name', async () => {
    const { service, repository, org } = world();
    const periodEnd = new Date('2026-03-01T00:00:00Z');
    Object.assign(repository.organizations.get(org.id)!, {
      serviceTier: 'enterprise',
      providerCustomerId: 'cus_123',
      providerSubscriptionId: 'sub_456',
      currentPeriodEnd: periodEnd,
    });
    expect(await service.billingSummary(org.id)).toEqual({
      plan: 'Enterprise',
      planRawValue: 'enterprise',
      madUsed: 0,
      madLimit: null,
      currentPeriodEnd: periodEnd,
      providerCustomerId: 'cus_123',
      providerSubscriptionId: 'sub_456',
    });
    repository.organizations.get(org.id)!.serviceTier = 'growth';
    expect(await service.billingSummary(org.id)).toMatchObject({
      plan: 'Growth',
      planRawValue: 'growth',
      madLimit: 25_000,
    });
  });
});
