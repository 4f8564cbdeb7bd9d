import { beforeEach, describe, expect, it } from '@jest/globals';
import { FakeCliSessionsRepository } from '../../../test/fakes/auth.js';
import { FakeOrganizations } from '../../../test/fakes/identity-organizations.js';
import { FakeUnitOfWork } from '../../../test/fakes/unit-of-work.js';
import { FakeUsersRepository, type StoredUser } from '../../../test/fakes/users.js';
import type { ApiKeysService } from '../../api-keys/api-keys.service.js';
import type { AuditService } from '../../audit/audit.service.js';
import type { ApiKeyScope, Role } from '../../common/access/access.decorator.js';
import type { OrgAuthContext } from '../../common/access/auth-context.js';
import { trustOrganizationId } from '../../common/access/tenant-id.js';
import { sha256Hex } from '../../common/crypto.js';
import type { AppConfig } from '../../config/app-config.js';
import { AccountLifecycleService } from '../../users/account-lifecycle.service.js';
import type { UsersRepository } from '../../users/users.repository.js';
import { UsersService } from '../../users/users.service.js';
import type { CliSessionsRepository } from './cli-sessions.repository.js';
import { CliSessionsService } from './cli-sessions.service.js';
import { fakeDiscovery } from '../../../test/harness/fake-discovery.js';

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { getStatus(): number; code: string }) => `${error.getStatus()} ${error.code}`,
  );

describe('CliSessionsService (the CLI login, on fakes)', () => {
  let uow: FakeUnitOfWork;
  let sessions: FakeCliSessionsRepository;
  let accounts: FakeUsersRepository;
  let organizations: FakeOrganizations;
  let issued: { organizationId: string; userId: string | null; scopes: ApiKeyScope[] }[];
  let audited: string[];
  let service: CliSessionsService;
  let ann: StoredUser;
  const orgAuth = (role: Role, organizationId = 'org-a'): OrgAuthContext => ({
    caller: { kind: 'session', userId: ann.id, email: ann.email, isSuperAdmin: false, role },
    organizationId: trustOrganizationId(organizationId),
    ipAddress: null,
  });

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    // Keys are minted through the API keys feature's seam, which takes the unit of work's manager.
    Object.assign(uow, { manager: () => ({}) });
    sessions = new FakeCliSessionsRepository();
    accounts = new FakeUsersRepository();
    organizations = new FakeOrganizations();
    issued = [];
    audited = [];
    const apiKeys = {
      issue: (organizationId: string, userId: string | null, input: { scopes: ApiKeyScope[] }) => {
        issued.push({ organizationId, userId, scopes: input.scopes });
        return Promise.resolve({ key: `gpat_key${issued.length}`, record: { id: `key-${issued.length}` } });
      },
    } as unknown as ApiKeysService;
    const audit = {
      record: (_auth: unknown, entry: { action: string }) => Promise.resolve(void audited.push(entry.action)),
    } as unknown as AuditService;
    service = new CliSessionsService(
      uow.asUnitOfWork(),
      { baseUrl: 'http://api.test' } as unknown as AppConfig,
      sessions as unknown as CliSessionsRepository,
      apiKeys,
      audit,
      new UsersService(
        uow.asUnitOfWork(),
        accounts as unknown as UsersRepository,
        new AccountLifecycleService(fakeDiscovery(() => [])),
      ),
      organizations.asService(),
    );
    ann = accounts.add({ email: 'ann@example.com' });
    organizations.add('org-a', 'enterprise');
    organizations.add('org-free', 'free');
  });

  it('stores only the hash of the session id, and polls pending until someone decides', async () => {
    const created = await service.create();
    expect(created.verification_url).toBe(`http://api.test/device?session_id=${created.session_id}`);
    expect([...sessions.rows.keys()]).toEqual([sha256Hex(created.session_id)]);
    expect(await service.poll(created.session_id)).toEqual({ status: 'pending', api_key: null, email: null });
    expect(await failure(service.poll('00000000-0000-4000-8000-000000000000'))).toBe('404 not_found');
  });

  it('mints the key at the first poll after approval, once, and answers active afterwards', async () => {
    organizations.join('org-a', ann.id, 'member');
    const { session_id } = await service.create();
    expect(await service.decide(orgAuth('member'), session_id, true)).toEqual({ status: 'approved' });
    expect(audited).toEqual(['cli_session.approved']);
    expect(await service.poll(session_id)).toEqual({ status: 'active', api_key: 'gpat_key1', email: ann.email });
    expect(await service.poll(session_id)).toEqual({ status: 'active', api_key: null, email: ann.email });
    expect(issued).toHaveLength(1);
  });

  it('decides once: a second decision is 409, a denial reads as expired, an expired session is 410', async () => {
    const { session_id } = await service.create();
    await service.decide(orgAuth('viewer'), session_id, false);
    expect(audited).toEqual([]);
    expect(await failure(service.decide(orgAuth('viewer'), session_id, true))).toBe('409 conflict');
    expect(await service.poll(session_id)).toMatchObject({ status: 'expired', api_key: null });
    const late = await service.create();
    sessions.rows.get(sha256Hex(late.session_id))!.expiresAt = new Date(Date.now() - 1000);
    expect(await failure(service.decide(orgAuth('viewer'), late.session_id, true))).toBe('410 gone');
  });

  it('mints no key for an approval that expired before the poll', async () => {
    organizations.join('org-a', ann.id, 'member');
    const { session_id } = await service.create();
    await service.decide(orgAuth('member'), session_id, true);
    sessions.rows.get(sha256Hex(session_id))!.expiresAt = new Date(Date.now() - 1000);
    expect(await service.poll(session_id)).toMatchObject({ status: 'expired', api_key: null });
    expect(issued).toEqual([]);
  });

  it('gives the key the scopes of the member’s current role, team administration only on Enterprise', async () => {
    const scopesFor = async (role: Role, organizationId: string) => {
      organizations.memberships.length = 0;
      organizations.join(organizationId, ann.id, role);
      const { session_id } = await service.create();
      await service.decide(orgAuth(role, organizationId), session_id, true);
      await service.poll(session_id);
      return issued.at(-1)!.scopes;
    };
    const reads = ['org:read', 'apps:read', 'flags:read', 'claims:read', 'feedback:read', 'release_notes:read'];
    const writes = ['flags:write', 'feedback:manage', 'feedback:write', 'release_notes:write'];
    expect(await scopesFor('viewer', 'org-a')).toEqual(reads);
    expect(await scopesFor('member', 'org-a')).toEqual([...reads, ...writes]);
    expect(await scopesFor('admin', 'org-a')).toEqual([...reads, ...writes, 'claims:write', 'admin:team']);
    expect(await scopesFor('owner', 'org-free')).toEqual([...reads, ...writes, 'claims:write']);
  });
});
