import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeApiKeys, type FakeApiKeysRepository } from '../../test/fakes/api-keys.js';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import {
  fakeOrganizations,
  sessionAuth,
  type FakeOrganizationsRepository,
  type FakeUsers,
} from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import type { ApiKeysService } from './api-keys.service.js';

describe('ApiKeysService', () => {
  let uow: FakeUnitOfWork;
  let repository: FakeOrganizationsRepository;
  let users: FakeUsers;
  let keys: FakeApiKeysRepository;
  let log: FakeAuditRepository;
  let apiKeys: ApiKeysService;
  let org: OrganizationRecord;
  let admin: string;

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    const fakes = fakeOrganizations();
    ({ repository, users } = fakes);
    const audited = fakeAudit();
    log = audited.log;
    ({ apiKeys, keys } = fakeApiKeys(uow, fakes.organizations, users.asUsersService(), audited.audit));
    admin = users.add('admin@example.com');
    org = repository.seed({ tier: 'professional', owner: admin });
  });

  it('issues a key shown once, stores only its hash, and audits name, prefix and scopes', async () => {
    const { key, record } = await apiKeys.create(sessionAuth(org.id, admin, 'admin'), {
      name: 'CI',
      scopes: ['flags:read'],
    });
    expect(key.startsWith(`${record.prefix}`)).toBe(true);
    expect(keys.keys[0].keyHash).not.toContain(key);
    expect(log.rows).toEqual([
      expect.objectContaining({
        action: 'apikey.created',
        resourceId: record.id,
        metadata: { name: 'CI', prefix: record.prefix, scopes: ['flags:read'] },
      }),
    ]);
    expect(uow.committed).toBe(1);
  });

  it('grants admin:team only on Enterprise (403 below, nothing written)', async () => {
    await expect(
      apiKeys.create(sessionAuth(org.id, admin, 'admin'), { name: 'team bot', scopes: ['admin:team'] }),
    ).rejects.toMatchObject({ status: 403, message: 'The admin:team scope works on the Enterprise plan only' });
    expect(keys.keys).toEqual([]);
    expect(log.rows).toEqual([]);
    org.serviceTier = 'enterprise';
    await apiKeys.create(sessionAuth(org.id, admin, 'admin'), { name: 'team bot', scopes: ['admin:team'] });
    expect(keys.keys).toHaveLength(1);
  });

  it('authenticates a live key of an active organization and forgets it when it is revoked', async () => {
    const { key, record } = await apiKeys.create(sessionAuth(org.id, admin, 'admin'), { name: 'CI', scopes: [] });
    const found = await apiKeys.authenticate(key);
    expect(found).toMatchObject({ creatorEmail: 'admin@example.com', serviceTier: 'professional' });
    expect(found?.key.id).toBe(record.id);
    await apiKeys.revoke(sessionAuth(org.id, admin, 'admin'), record.id);
    expect(keys.announced).toEqual([{ keyId: record.id }]);
    expect(await apiKeys.authenticate(key)).toBeNull();
    expect(log.actions()).toEqual(['apikey.created', 'apikey.revoked']);
  });

  it('does not authenticate a key of a deactivated organization', async () => {
    const { key } = await apiKeys.create(sessionAuth(org.id, admin, 'admin'), { name: 'CI', scopes: [] });
    org.isActive = false;
    expect(await apiKeys.authenticate(key)).toBeNull();
  });

  it('rotates to a new secret: the old one stops working at once, the new one works', async () => {
    const { key: old, record } = await apiKeys.create(sessionAuth(org.id, admin, 'admin'), { name: 'CI', scopes: [] });
    await apiKeys.authenticate(old);
    const { key: fresh } = await apiKeys.rotate(sessionAuth(org.id, admin, 'admin'), record.id);
    expect(await apiKeys.authenticate(old)).toBeNull();
    expect((await apiKeys.authenticate(fresh))?.key.id).toBe(record.id);
    expect(log.rows.at(-1)).toMatchObject({ action: 'apikey.rotated', metadata: { previousPrefix: record.prefix } });
  });

  it('answers 404 for another organization’s key and leaves it working', async () => {
    const otherAdmin = users.add('other@example.com');
    const other = repository.seed({ owner: otherAdmin });
    const { key, record } = await apiKeys.create(sessionAuth(other.id, otherAdmin, 'admin'), { name: 'x', scopes: [] });
    await expect(apiKeys.revoke(sessionAuth(org.id, admin, 'admin'), record.id)).rejects.toMatchObject({ status: 404 });
    await expect(apiKeys.rotate(sessionAuth(org.id, admin, 'admin'), record.id)).rejects.toMatchObject({ status: 404 });
    expect(await apiKeys.authenticate(key)).not.toBeNull();
  });

  it('gives a personal key its user’s current role: none once they left or were deactivated, Owner for a super admin', async () => {
    const member = users.add('dev@example.com');
    repository.join(org.id, member, 'member');
    const { record } = await apiKeys.create(sessionAuth(org.id, member, 'member'), {
      name: 'laptop',
      scopes: [],
      type: 'gpat',
    });
    expect(await apiKeys.personalRole(record)).toBe('member');
    await repository.setRole(org.id, member, 'admin');
    expect(await apiKeys.personalRole(record)).toBe('admin');
    users.users.get(member)!.status = 'disabled';
    expect(await apiKeys.personalRole(record)).toBeNull();
    users.users.get(member)!.status = 'active';
    await repository.removeMember(org.id, member);
    expect(await apiKeys.personalRole(record)).toBeNull();
    users.users.get(member)!.isSuperAdmin = true;
    expect(await apiKeys.personalRole(record)).toBe('owner');
  });
});
