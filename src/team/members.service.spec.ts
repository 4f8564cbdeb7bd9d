import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeApiKeys } from '../../test/fakes/api-keys.js';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import {
  apiKeyAuth,
  fakeOrganizations,
  sessionAuth,
  type FakeOrganizationsRepository,
  type FakeUsers,
} from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import type { FakeApiKeysRepository } from '../../test/fakes/api-keys.js';
import { MembersService } from './members.service.js';

describe('MembersService', () => {
  let uow: FakeUnitOfWork;
  let repository: FakeOrganizationsRepository;
  let users: FakeUsers;
  let log: FakeAuditRepository;
  let keys: FakeApiKeysRepository;
  let members: MembersService;
  let org: OrganizationRecord;
  let owner: string;
  let admin: string;
  let member: string;

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    const fakes = fakeOrganizations();
    ({ repository, users } = fakes);
    const audited = fakeAudit();
    log = audited.log;
    const apiKeys = fakeApiKeys(uow, fakes.organizations, users.asUsersService(), audited.audit);
    keys = apiKeys.keys;
    members = new MembersService(
      uow.asUnitOfWork(),
      fakes.organizations,
      audited.audit,
      apiKeys.apiKeys,
      users.asUsersService(),
    );
    owner = users.add('owner@example.com');
    admin = users.add('admin@example.com');
    member = users.add('member@example.com');
    org = repository.seed({ tier: 'professional', owner });
    repository.join(org.id, admin, 'admin');
    repository.join(org.id, member, 'member');
  });

  it('lists the members with their addresses, oldest join first', async () => {
    const list = await members.list(sessionAuth(org.id, member, 'member'));
    expect(list.map((m) => [m.email, m.role])).toEqual([
      ['owner@example.com', 'owner'],
      ['admin@example.com', 'admin'],
      ['member@example.com', 'member'],
    ]);
  });

  it('lets an Admin change a Member to Admin, under the organization lock, audited with from and to', async () => {
    const changed = await members.changeRole(sessionAuth(org.id, admin, 'admin'), member, 'admin');
    expect(changed).toMatchObject({ userId: member, email: 'member@example.com', role: 'admin' });
    expect(await repository.roleOf(org.id, member)).toBe('admin');
    expect(repository.locked).toContain(org.id);
    expect(log.rows).toEqual([
      expect.objectContaining({
        organizationId: org.id,
        action: 'member.role_changed',
        resourceId: member,
        actorUserId: admin,
        metadata: { email: 'member@example.com', from: 'member', to: 'admin' },
      }),
    ]);
  });

  it('answers the member unchanged, with no audit entry, when the role is the same', async () => {
    await members.changeRole(sessionAuth(org.id, admin, 'admin'), member, 'member');
    expect(log.rows).toEqual([]);
  });

  it('refuses an Admin granting Owner or changing an Owner (403)', async () => {
    await expect(members.changeRole(sessionAuth(org.id, admin, 'admin'), member, 'owner')).rejects.toMatchObject({
      status: 403,
    });
    await expect(members.changeRole(sessionAuth(org.id, admin, 'admin'), owner, 'member')).rejects.toMatchObject({
      status: 403,
    });
    expect(await repository.roleOf(org.id, owner)).toBe('owner');
  });

  it('keeps the last Owner (409) but lets an Owner step down once another Owner exists', async () => {
    await expect(members.changeRole(sessionAuth(org.id, owner, 'owner'), owner, 'admin')).rejects.toMatchObject({
      status: 409,
      message: 'The organization must keep at least one Owner',
    });
    await members.changeRole(sessionAuth(org.id, owner, 'owner'), admin, 'owner');
    await members.changeRole(sessionAuth(org.id, owner, 'owner'), owner, 'admin');
    expect(await repository.roleOf(org.id, owner)).toBe('admin');
    expect(await repository.ownerCount(org.id)).toBe(1);
  });

  it('refuses an admin:team key below Enterprise (403), and accepts it on Enterprise', async () => {
    await expect(members.changeRole(apiKeyAuth(org.id, 'professional'), member, 'admin')).rejects.toMatchObject({
      status: 403,
      message: 'The admin:team scope works on the Enterprise plan only',
    });
    org.serviceTier = 'enterprise';
    await members.changeRole(apiKeyAuth(org.id, 'enterprise'), member, 'admin');
    expect(await repository.roleOf(org.id, member)).toBe('admin');
  });

  it('answers 404 for a member of another organization', async () => {
    const otherOwner = users.add('other@example.com');
    const other = repository.seed({ owner: otherOwner });
    await expect(members.changeRole(sessionAuth(org.id, owner, 'owner'), otherOwner, 'member')).rejects.toMatchObject({
      status: 404,
    });
    await expect(members.remove(sessionAuth(org.id, owner, 'owner'), otherOwner)).rejects.toMatchObject({
      status: 404,
    });
    expect(await repository.roleOf(other.id, otherOwner)).toBe('owner');
  });

  it('removes a member with their personal keys of this organization, announced and audited', async () => {
    const personal = await keys.insert(org.id, {
      createdBy: member,
      name: 'laptop',
      keyType: 'gpat',
      prefix: 'gpat_x',
      keyHash: 'h1',
      scopes: [],
      expiresAt: null,
    });
    const service = await keys.insert(org.id, {
      createdBy: member,
      name: 'ci',
      keyType: 'service',
      prefix: 'service_x',
      keyHash: 'h2',
      scopes: [],
      expiresAt: null,
    });
    await members.remove(sessionAuth(org.id, admin, 'admin'), member);
    expect(await repository.roleOf(org.id, member)).toBeNull();
    expect(personal.revokedAt).not.toBeNull();
    expect(service.revokedAt).toBeNull();
    expect(keys.announced).toEqual([{ organizationId: org.id, userId: member }]);
    expect(log.actions()).toEqual(['member.removed']);
    expect(users.users.has(member)).toBe(true);
  });

  it('never removes an Owner (403), nor lets an Owner leave', async () => {
    await expect(members.remove(sessionAuth(org.id, admin, 'admin'), owner)).rejects.toMatchObject({ status: 403 });
    const ownerAuth = sessionAuth(org.id, owner, 'owner');
    await expect(members.leave(ownerAuth.caller, org.id, null)).rejects.toMatchObject({
      status: 403,
      message: 'An Owner cannot leave the organization',
    });
    expect(await repository.memberCount(org.id)).toBe(3);
    expect(log.rows).toEqual([]);
  });

  it('lets a member leave, recorded as member.left by themselves', async () => {
    const auth = sessionAuth(org.id, member, 'member', 'member@example.com');
    await members.leave(auth.caller, org.id, '198.51.100.1');
    expect(await repository.roleOf(org.id, member)).toBeNull();
    expect(log.rows).toEqual([
      expect.objectContaining({ action: 'member.left', actorUserId: member, ipAddress: '198.51.100.1' }),
    ]);
  });
});
