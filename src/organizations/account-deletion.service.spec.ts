import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import {
  fakeOrganizations,
  sessionAuth,
  type FakeOrganizationsRepository,
  type FakeUsers,
} from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { AccountDeletionService } from './account-deletion.service.js';
import type { Organization } from './organization.entity.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import {
  OnOrganizationRemoved,
  OrganizationLifecycleService,
  type OrganizationRemovalParticipant,
} from './organization-lifecycle.service.js';
import type { OrganizationRecord, OrganizationsRepository } from './organizations.repository.js';

describe('AccountDeletionService', () => {
  let uow: FakeUnitOfWork;
  let repository: FakeOrganizationsRepository;
  let users: FakeUsers;
  let log: FakeAuditRepository;
  let calls: string[];
  let service: AccountDeletionService;
  let me: string;
  let mine: OrganizationRecord;

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    const fakes = fakeOrganizations();
    ({ repository, users } = fakes);
    const audited = fakeAudit();
    log = audited.log;
    calls = [];
    @OnOrganizationRemoved()
    class Recorder implements OrganizationRemovalParticipant {
      beforeRemoval(organizations: readonly Organization[]) {
        return Promise.resolve(void calls.push(`before:${organizations.map((o) => o.name).join()}`));
      }
      scheduling(ids: readonly OrganizationId[]) {
        return Promise.resolve(void calls.push(`scheduling:${ids.length}:${String(uow.active)}`));
      }
    }
    const lifecycle = new OrganizationLifecycleService(fakeDiscovery(() => [new Recorder()]));
    lifecycle.onModuleInit();
    service = new AccountDeletionService(
      uow.asUnitOfWork(),
      repository as unknown as OrganizationsRepository,
      audited.audit,
      lifecycle,
      users.asUsersService(),
    );
    me = users.add('me@example.com');
    mine = repository.seed({ name: 'Mine', tier: 'professional', owner: me });
  });

  it('schedules the account’s deletion with the organizations only it belongs to', async () => {
    mine.providerSubscriptionId = 'sub_1';
    await service.requestDeletion(sessionAuth(mine.id, me, 'owner', 'me@example.com'));
    expect(users.markedForDeletion).toEqual([me]);
    expect(calls).toEqual(['before:Mine', 'scheduling:1:true']);
    expect(mine).toMatchObject({ serviceTier: 'free', providerSubscriptionId: null });
    expect(log.rows).toEqual([
      expect.objectContaining({
        organizationId: mine.id,
        action: 'billing.subscription_cancelled',
        resourceId: 'sub_1',
        metadata: { reason: 'account_deletion', tier: { from: 'professional', to: 'free' } },
      }),
      expect.objectContaining({
        organizationId: mine.id,
        action: 'account.deletion_requested',
        metadata: { email: 'me@example.com', hardDeletionAfterDays: 30 },
      }),
    ]);
  });

  it('refuses while the active organization has other members (409), changing nothing', async () => {
    repository.join(mine.id, users.add('colleague@example.com'), 'member');
    await expect(service.requestDeletion(sessionAuth(mine.id, me, 'owner'))).rejects.toMatchObject({
      status: 409,
      message: 'The organization has other members',
    });
    expect(users.markedForDeletion).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('refuses while the account is the only Owner of another organization with members (409)', async () => {
    const other = repository.seed({ name: 'Other', owner: me });
    const colleague = users.add('colleague@example.com');
    repository.join(other.id, colleague, 'admin');
    await expect(service.requestDeletion(sessionAuth(mine.id, me, 'owner'))).rejects.toMatchObject({
      status: 409,
      message: 'You are the only Owner of another organization with members',
    });
    // Another Owner there lets the account go; that organization stays with its members.
    await repository.setRole(other.id, colleague, 'owner');
    await service.requestDeletion(sessionAuth(mine.id, me, 'owner'));
    expect(calls).toEqual(['before:Mine', 'scheduling:1:true']);
  });

  it('refuses an API key and a session that does not speak for the account (403)', async () => {
    const auth = sessionAuth(mine.id, me, 'owner');
    await expect(
      service.requestDeletion({ ...auth, caller: { ...auth.caller, speaksForAccount: false } }),
    ).rejects.toMatchObject({ status: 403 });
    expect(users.markedForDeletion).toEqual([]);
  });
});
