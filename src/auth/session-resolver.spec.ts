import { beforeEach, describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import type { SessionData } from 'express-session';
import { FakeOrganizations } from '../../test/fakes/identity-organizations.js';
import { FakeSsoConnectionsRepository } from '../../test/fakes/sso.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { FakeUsersRepository, type StoredUser } from '../../test/fakes/users.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import { AccountLifecycleService } from '../users/account-lifecycle.service.js';
import type { UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';
import { PASSWORD_SIGN_IN, ssoSignIn, type SessionSignIn } from './session/session-admission.js';
import { SessionResolver } from './session-resolver.js';
import type { SsoConnectionsRepository } from './sso/sso-connections.repository.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';

describe('SessionResolver (session admission, on fakes)', () => {
  let accounts: FakeUsersRepository;
  let organizations: FakeOrganizations;
  let connections: FakeSsoConnectionsRepository;
  let resolver: SessionResolver;
  let ann: StoredUser;

  const request = (organizationId: string | null, signIn?: SessionSignIn, userId = ann.id) => {
    const session = { userId, organizationId, ...(signIn ? { signIn } : {}) } as Partial<SessionData>;
    return { session } as unknown as Request & { session: Partial<SessionData> };
  };
  const enforceSso = (organizationId: string) =>
    connections.upsert(trustOrganizationId(organizationId), {
      issuer: 'https://idp.example.com',
      clientId: 'client',
      clientSecretSealed: 'sealed',
      allowedDomains: ['example.com'],
      defaultRole: 'member',
      enforce: true,
      domainToken: 'token',
    });

  beforeEach(() => {
    accounts = new FakeUsersRepository();
    organizations = new FakeOrganizations();
    connections = new FakeSsoConnectionsRepository();
    const users = new UsersService(
      new FakeUnitOfWork().asUnitOfWork(),
      accounts as unknown as UsersRepository,
      new AccountLifecycleService(fakeDiscovery(() => [])),
    );
    resolver = new SessionResolver(
      users,
      organizations.asService(),
      connections as unknown as SsoConnectionsRepository,
    );
    ann = accounts.add({ email: 'ann@example.com' });
    organizations.add('org-a', 'enterprise');
    organizations.add('org-b', 'enterprise');
    organizations.join('org-a', ann.id, 'member');
    organizations.join('org-b', ann.id, 'owner');
  });

  it('signs nobody in for a disabled, unverified or deleted account', async () => {
    const disabled = accounts.add({ email: 'd@example.com', status: 'disabled' });
    const unverified = accounts.add({ email: 'u@example.com', emailVerifiedAt: null });
    expect(await resolver.resolve(request('org-a', PASSWORD_SIGN_IN, disabled.id))).toBeNull();
    expect(await resolver.resolve(request('org-a', PASSWORD_SIGN_IN, unverified.id))).toBeNull();
    expect(await resolver.resolve(request('org-a', PASSWORD_SIGN_IN, 'gone'))).toBeNull();
  });

  it('acts in a member’s organization with their role', async () => {
    const resolved = await resolver.resolve(request('org-a', PASSWORD_SIGN_IN));
    expect(resolved).toMatchObject({
      organizationId: 'org-a',
      caller: { userId: ann.id, role: 'member', speaksForAccount: true },
    });
  });

  it('drops the organization from the session once the membership is gone, keeping the sign-in', async () => {
    organizations.memberships.splice(0, 1);
    const req = request('org-a', PASSWORD_SIGN_IN);
    expect(await resolver.resolve(req)).toMatchObject({ organizationId: null, caller: { role: null } });
    expect(req.session.organizationId).toBeNull();
  });

  it('keeps a password session out of an organization that enforces SSO on the member, but not on its Owner', async () => {
    await enforceSso('org-a');
    await enforceSso('org-b');
    expect(await resolver.resolve(request('org-a', PASSWORD_SIGN_IN))).toMatchObject({ organizationId: null });
    expect(await resolver.resolve(request('org-b', PASSWORD_SIGN_IN))).toMatchObject({
      organizationId: 'org-b',
      caller: { role: 'owner' },
    });
  });

  it('does not enforce SSO on a plan without it', async () => {
    organizations.add('org-free', 'free');
    organizations.join('org-free', ann.id, 'viewer');
    await enforceSso('org-free');
    expect(await resolver.resolve(request('org-free', PASSWORD_SIGN_IN))).toMatchObject({ organizationId: 'org-free' });
  });

  it('confines a session made by one organization’s provider to it, and lets it speak for the account only when that is every organization', async () => {
    const fromA = await resolver.resolve(request('org-a', ssoSignIn('org-a')));
    expect(fromA).toMatchObject({ organizationId: 'org-a', caller: { speaksForAccount: false } });
    expect(await resolver.resolve(request('org-b', ssoSignIn('org-a')))).toMatchObject({ organizationId: null });
    organizations.memberships.splice(1, 1);
    expect(await resolver.resolve(request('org-a', ssoSignIn('org-a')))).toMatchObject({
      caller: { speaksForAccount: true },
    });
  });

  it('lets a super admin act as Owner in an organization they do not belong to', async () => {
    const root = accounts.add({ email: 'root@example.com', isSuperAdmin: true });
    expect(await resolver.resolve(request('org-a', PASSWORD_SIGN_IN, root.id))).toMatchObject({
      organizationId: 'org-a',
      caller: { role: 'owner', isSuperAdmin: true },
    });
  });
});
