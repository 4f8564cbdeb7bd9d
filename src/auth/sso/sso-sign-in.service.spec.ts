import { beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { RecordedAudit } from '../../../test/fakes/audit-entries.js';
import { FakeServiceSecretsRepository } from '../../../test/fakes/auth.js';
import { testConfig } from '../../../test/fakes/config.js';
import { FakeOidcProvider, FakeProviderProblem } from '../../../test/fakes/oidc-provider.js';
import { fakeOrganizations, sessionAuth, type FakeOrganizationsRepository } from '../../../test/fakes/organizations.js';
import { FakeSsoConnectionsRepository, FakeSsoSignInRepository } from '../../../test/fakes/sso.js';
import { FakeInvitesRepository } from '../../../test/fakes/team.js';
import { FakeUnitOfWork } from '../../../test/fakes/unit-of-work.js';
import { FakeUsersRepository, type StoredUser } from '../../../test/fakes/users.js';
import { fakeDiscovery } from '../../../test/harness/fake-discovery.js';
import type { OrganizationId } from '../../common/access/tenant-id.js';
import { sha256Hex } from '../../common/crypto.js';
import { tierDefinition } from '../../common/tiers.js';
import type { AppConfig } from '../../config/app-config.js';
import type { Metrics } from '../../metrics/metrics.js';
import { PlanService } from '../../organizations/plan.service.js';
import { MemoryRateLimitStore } from '../../rate-limit/memory-rate-limit-store.js';
import { RateLimitService } from '../../rate-limit/rate-limit.service.js';
import { InviteAcceptanceService } from '../../team/invite-acceptance.service.js';
import type { InvitesRepository } from '../../team/invites.repository.js';
import type { TeamNotificationsService } from '../../team/team-notifications.service.js';
import { AccountLifecycleService } from '../../users/account-lifecycle.service.js';
import type { UsersRepository } from '../../users/users.repository.js';
import { UsersService } from '../../users/users.service.js';
import { PasswordGate } from '../password-gate.js';
import { hashPassword } from '../passwords.js';
import type { ServiceSecretsRepository } from '../service-secrets.repository.js';
import type { DnsTxtLookup } from './dns-txt-lookup.js';
import type { ProviderRegistration } from './oidc-client.js';
import type { SsoConnectionsRepository } from './sso-connections.repository.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { SsoSecrets } from './sso-secrets.js';
import type { SsoSignInRepository } from './sso-sign-in.repository.js';

// The identity provider is the in-memory one: openid-client talks to it without a network.
let idp = new FakeOidcProvider();
jest.unstable_mockModule('./oidc-client.js', () => ({
  discoverProvider: (registration: ProviderRegistration) => idp.discover(registration),
  ProviderProblem: FakeProviderProblem,
}));
const { SsoConnectionsService } = await import('./sso-connections.service.js');
const { SsoSignInService } = await import('./sso-sign-in.service.js');

const config = { ...testConfig, baseUrl: 'https://api.test', bcryptRounds: 4, ssoSecretKey: null } as AppConfig;
const IP = '203.0.113.7';
const PASSWORD = 'correct-horse-battery';

/** How a sign-in ended: its kind, or the refusal's status and outcome (what the page and the metric show). */
const ending = (promise: Promise<{ kind: string }>) =>
  promise.then(
    (result) => result.kind,
    (error: { status: number; outcome: string }) => `${error.status} ${error.outcome}`,
  );

describe('SsoSignInService (OpenID Connect sign-in, on fakes)', () => {
  let passwordHash: string;
  let organizations: FakeOrganizationsRepository;
  let connections: FakeSsoConnectionsRepository;
  let records: FakeSsoSignInRepository;
  let accounts: FakeUsersRepository;
  let invites: FakeInvitesRepository;
  let audit: RecordedAudit;
  let outcomes: string[];
  let service: InstanceType<typeof SsoSignInService>;
  let connectionsService: InstanceType<typeof SsoConnectionsService>;
  let org: { id: OrganizationId; slug: string; name: string };

  /** Start, the person signs in at the provider with `claims`, the browser comes back with its state cookie. */
  const signIn = async (claims: Record<string, unknown>, options: { cliSessionId?: string } = {}) => {
    const { redirectTo, state } = await service.start(org.slug, options);
    return service.complete(idp.authorize(redirectTo, claims), state, IP);
  };
  const verified = (email: string) => ({ email, email_verified: true, sub: `sub-${email}` });
  const memberRole = (userId: string) =>
    organizations.memberships.find((m) => m.organizationId === org.id && m.userId === userId)?.role ?? null;
  const accountOf = (email: string): StoredUser | undefined =>
    [...accounts.rows.values()].find((row) => row.email === email);
  const linkRequired = async (email: string) => {
    const result = await signIn(verified(email));
    if (result.kind !== 'linkRequired') throw new Error(`expected a link request, got ${result.kind}`);
    return result;
  };
  const confirm = (linkToken: string, password = PASSWORD) =>
    service.confirmLink(linkToken, { password, clientIp: IP, deviceCookie: undefined }, IP);

  beforeAll(async () => {
    // The refusals these tests provoke are logged as warnings: not the test's output.
    Logger.overrideLogger(false);
    passwordHash = await hashPassword(PASSWORD, 4);
  });

  beforeEach(async () => {
    idp = new FakeOidcProvider();
    const uow = new FakeUnitOfWork().asUnitOfWork();
    const fakes = fakeOrganizations();
    organizations = fakes.repository;
    const seeded = organizations.seed({ tier: 'enterprise', owner: 'u-owner', name: 'Acme' });
    org = { id: seeded.id, slug: seeded.slug, name: seeded.name };
    connections = new FakeSsoConnectionsRepository();
    records = new FakeSsoSignInRepository();
    accounts = new FakeUsersRepository();
    invites = new FakeInvitesRepository();
    audit = new RecordedAudit();
    outcomes = [];
    const plans = new PlanService(fakes.organizations);
    const users = new UsersService(
      uow,
      accounts as unknown as UsersRepository,
      new AccountLifecycleService(fakeDiscovery(() => [])),
    );
    const serviceSecrets = new FakeServiceSecretsRepository() as unknown as ServiceSecretsRepository;
    connectionsService = new SsoConnectionsService(
      uow,
      connections as unknown as SsoConnectionsRepository,
      fakes.organizations,
      config,
      new SsoSecrets(serviceSecrets, config),
      audit.asAuditService(),
      plans,
    );
    service = new SsoSignInService(
      uow,
      records as unknown as SsoSignInRepository,
      config,
      connectionsService,
      new SsoDomainsService(
        uow,
        connections as unknown as SsoConnectionsRepository,
        fakes.organizations,
        { lookup: () => Promise.resolve({ kind: 'absent' }) } as unknown as DnsTxtLookup,
        audit.asAuditService(),
        plans,
      ),
      fakes.organizations,
      new InviteAcceptanceService(
        uow,
        invites as unknown as InvitesRepository,
        fakes.organizations,
        audit.asAuditService(),
        null as unknown as TeamNotificationsService,
      ),
      users,
      audit.asAuditService(),
      { ssoSignIn: (outcome: string) => void outcomes.push(outcome) } as unknown as Metrics,
      new PasswordGate(serviceSecrets, config, users, new RateLimitService(new MemoryRateLimitStore())),
    );
    // The organization's Admin connects the provider for corp.test and proves the domain.
    await connectionsService.put(sessionAuth(org.id, 'u-owner', 'owner'), {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      allowedDomains: ['corp.test', 'listed.test'],
      defaultRole: 'viewer',
      enforce: false,
    });
    await connections.markDomainVerified(org.id, 'corp.test');
    audit.entries.length = 0;
  });

  describe('start', () => {
    it('sends the browser to the provider with a fresh state, a nonce and an S256 PKCE challenge, and keeps only the state’s hash', async () => {
      const first = await service.start(org.slug, { loginHint: 'ann@corp.test' });
      const second = await service.start(org.slug, {});
      const url = new URL(first.redirectTo);
      expect(`${url.origin}${url.pathname}`).toBe(`${idp.issuer}/auth`);
      expect(Object.fromEntries(url.searchParams)).toMatchObject({
        client_id: idp.clientId,
        redirect_uri: 'https://api.test/api/v1/auth/sso/callback',
        response_type: 'code',
        scope: 'openid email profile',
        state: first.state,
        nonce: expect.any(String),
        code_challenge: expect.any(String),
        code_challenge_method: 'S256',
        login_hint: 'ann@corp.test',
      });
      expect(second.state).not.toBe(first.state);
      expect(new URL(second.redirectTo).searchParams.get('nonce')).not.toBe(url.searchParams.get('nonce'));
      expect([...records.attempts.keys()]).toEqual([sha256Hex(first.state), sha256Hex(second.state)]);
    });

    it('answers “not available” (404) for an organization without a usable connection, and counts it', async () => {
      expect(await ending(service.start('no-such-org', {}).then(() => ({ kind: 'started' })))).toBe(
        '404 not_configured',
      );
      organizations.organizations.get(org.id)!.serviceTier = 'professional';
      expect(await ending(service.start(org.slug, {}).then(() => ({ kind: 'started' })))).toBe('404 not_configured');
      expect(outcomes).toEqual(['not_configured', 'not_configured']);
      expect(records.attempts.size).toBe(0);
    });

    it('answers 502 when the provider cannot be reached, storing no attempt', async () => {
      idp.unreachable = true;
      expect(await ending(service.start(org.slug, {}).then(() => ({ kind: 'started' })))).toBe(
        '502 provider_unavailable',
      );
      expect(outcomes).toEqual(['provider_unavailable']);
      expect(records.attempts.size).toBe(0);
    });
  });

  describe('the callback', () => {
    it('signs a new person of a verified domain in: a verified account, the default role, audited and counted', async () => {
      const result = await signIn(verified('grace@corp.test'), { cliSessionId: 'cli-1' });
      const grace = accountOf('grace@corp.test')!;
      expect(result).toEqual({
        kind: 'signedIn',
        userId: grace.id,
        organizationId: org.id,
        cliSessionId: 'cli-1',
        withPassword: false,
      });
      expect(grace.emailVerifiedAt).not.toBeNull();
      expect(grace.lastLoginAt).not.toBeNull();
      expect(memberRole(grace.id)).toBe('viewer');
      expect(audit.entries.map((entry) => [entry.action, entry.actorUserId, entry.metadata])).toEqual([
        ['member.joined', grace.id, { email: 'grace@corp.test', role: 'viewer', method: 'sso', inviteId: null }],
        ['user.login', grace.id, { method: 'sso', issuer: idp.issuer }],
      ]);
      expect(outcomes).toEqual(['success']);
    });

    it('is single use: the same callback brought back again is refused with 400', async () => {
      const { redirectTo, state } = await service.start(org.slug, {});
      const query = idp.authorize(redirectTo, verified('grace@corp.test'));
      expect(await ending(service.complete(query, state, IP))).toBe('signedIn');
      expect(await ending(service.complete(query, state, IP))).toBe('400 invalid_state');
      expect(outcomes).toEqual(['success', 'invalid_state']);
    });

    it('refuses an attempt older than ten minutes with 400, creating nothing', async () => {
      const { redirectTo, state } = await service.start(org.slug, {});
      const query = idp.authorize(redirectTo, verified('slow@corp.test'));
      records.age(10 * 60 * 1000 + 1000);
      await expect(service.complete(query, state, IP)).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('the sign-in attempt expired'),
      });
      expect(accountOf('slow@corp.test')).toBeUndefined();
    });

    it('refuses a callback whose state is not the browser’s, or that the browser has no state for, creating nothing', async () => {
      const { redirectTo, state } = await service.start(org.slug, {});
      const query = idp.authorize(redirectTo, verified('target@corp.test'));
      expect(await ending(service.complete(query, 'another-browsers-state', IP))).toBe('400 invalid_state');
      expect(await ending(service.complete(query, undefined, IP))).toBe('400 invalid_state');
      const forged = new URLSearchParams(query);
      forged.set('state', 'forged');
      expect(await ending(service.complete(forged.toString(), 'forged', IP))).toBe('400 invalid_state');
      expect(accountOf('target@corp.test')).toBeUndefined();
      // The refusals did not use the attempt up: the right browser still completes it.
      expect(await ending(service.complete(query, state, IP))).toBe('signedIn');
    });

    it('refuses an ID token issued by another issuer with 401, creating nothing', async () => {
      idp.idTokenIssuer = 'https://idp.attacker.test';
      expect(await ending(signIn(verified('iss@corp.test')))).toBe('401 token_invalid');
      expect(accountOf('iss@corp.test')).toBeUndefined();
      expect(outcomes).toEqual(['token_invalid']);
    });

    it('refuses a callback that names another issuer (RFC 9207 iss) with 401', async () => {
      const { redirectTo, state } = await service.start(org.slug, {});
      const query = new URLSearchParams(idp.authorize(redirectTo, verified('iss@corp.test')));
      query.set('iss', 'https://idp.attacker.test');
      expect(await ending(service.complete(query.toString(), state, IP))).toBe('401 token_invalid');
      expect(accountOf('iss@corp.test')).toBeUndefined();
    });

    it('refuses an ID token carrying the nonce of another attempt with 401', async () => {
      const earlier = new URL((await service.start(org.slug, {})).redirectTo).searchParams.get('nonce')!;
      const { redirectTo, state } = await service.start(org.slug, {});
      const replayed = new URL(redirectTo);
      replayed.searchParams.set('nonce', earlier);
      const query = idp.authorize(replayed.href, verified('nonce@corp.test'));
      expect(await ending(service.complete(query, state, IP))).toBe('401 token_invalid');
      expect(accountOf('nonce@corp.test')).toBeUndefined();
    });

    it('refuses an authorization code that was already used, with 401 “code refused”', async () => {
      const { redirectTo, state } = await service.start(org.slug, {});
      const used = new URLSearchParams(idp.authorize(redirectTo, verified('code@corp.test')));
      await service.complete(used.toString(), state, IP);
      const fresh = await service.start(org.slug, {});
      used.set('state', fresh.state);
      expect(await ending(service.complete(used.toString(), fresh.state, IP))).toBe('401 code_rejected');
    });

    it('refuses an address the provider has not verified, or no address at all, with 403, creating nothing', async () => {
      expect(await ending(signIn({ email: 'unverified@corp.test', email_verified: false }))).toBe(
        '403 email_unverified',
      );
      expect(await ending(signIn({ email: 'unsaid@corp.test' }))).toBe('403 email_unverified');
      expect(await ending(signIn({ sub: 'no-address' }))).toBe('403 email_missing');
      expect(accounts.rows.size).toBe(0);
      expect(outcomes).toEqual(['email_unverified', 'email_unverified', 'email_missing']);
    });

    it('refuses an address of a domain the organization has not verified (listed only, or not listed) with 403, creating nothing', async () => {
      expect(await ending(signIn(verified('ann@listed.test')))).toBe('403 domain_not_allowed');
      expect(await ending(signIn(verified('ann@elsewhere.test')))).toBe('403 domain_not_allowed');
      expect(accounts.rows.size).toBe(0);
    });

    it('refuses a domain another organization verified: its proof does not count for this one', async () => {
      const other = organizations.seed({ tier: 'enterprise' }).id;
      await connections.upsert(other, { ...connections.connections.get(org.id)!, allowedDomains: ['theirs.test'] });
      await connections.replaceDomains(other, ['theirs.test']);
      await connections.markDomainVerified(other, 'theirs.test');
      expect(await ending(signIn(verified('bob@theirs.test')))).toBe('403 domain_not_allowed');
    });

    it('says the connection is gone (404) when it was removed between start and callback', async () => {
      const { redirectTo, state } = await service.start(org.slug, {});
      const query = idp.authorize(redirectTo, verified('grace@corp.test'));
      await connectionsService.remove(sessionAuth(org.id, 'u-owner', 'owner'));
      expect(await ending(service.complete(query, state, IP))).toBe('404 not_configured');
      expect(accountOf('grace@corp.test')).toBeUndefined();
    });
  });

  describe('who the provider signs in', () => {
    it('refuses a new member with 403 “no seat” when every seat of the plan is taken, making no membership', async () => {
      const seats = tierDefinition('enterprise').limits.maxSeats;
      for (let i = 1; i < seats; i++) invites.seed(org.id, { email: `seat-${i}@elsewhere.test` });
      expect(await ending(signIn(verified('late@corp.test')))).toBe('403 no_seat');
      expect(organizations.memberships.filter((m) => m.organizationId === org.id)).toHaveLength(1);
      expect(outcomes).toEqual(['no_seat']);
    });

    it('gives a person with a pending invite the invite’s role and seat, even when the other seats are taken', async () => {
      const seats = tierDefinition('enterprise').limits.maxSeats;
      for (let i = 1; i < seats - 1; i++) invites.seed(org.id, { email: `seat-${i}@elsewhere.test` });
      const invite = invites.seed(org.id, { email: 'invited@corp.test', role: 'admin' });
      const result = await signIn(verified('invited@corp.test'));
      expect(result.kind).toBe('signedIn');
      const userId = accountOf('invited@corp.test')!.id;
      expect(memberRole(userId)).toBe('admin');
      expect(invite).toMatchObject({ status: 'accepted', acceptedBy: userId });
      expect(audit.entries[0].metadata).toMatchObject({ role: 'admin', inviteId: invite.id });
    });

    it('asks the owner of an existing account to link it with the password: no session, no membership, a pending link', async () => {
      const ada = accounts.add({ email: 'ada@corp.test', passwordHash });
      const result = await linkRequired('ada@corp.test');
      expect(result).toMatchObject({ kind: 'linkRequired', email: 'ada@corp.test', organizationName: 'Acme' });
      expect(await service.pendingLink(result.linkToken)).toEqual({ email: 'ada@corp.test', organizationName: 'Acme' });
      expect(memberRole(ada.id)).toBeNull();
      expect(audit.entries).toEqual([]);
      expect(outcomes).toEqual(['link_required']);
    });

    it('links the account with the right password: signed in with the password too, audited, and later sign-ins need no password', async () => {
      const ada = accounts.add({ email: 'ada@corp.test', passwordHash });
      const { linkToken } = await linkRequired('ada@corp.test');
      const linked = await confirm(linkToken);
      expect(linked).toEqual({
        kind: 'signedIn',
        userId: ada.id,
        organizationId: org.id,
        cliSessionId: null,
        withPassword: true,
      });
      expect(memberRole(ada.id)).toBe('viewer');
      expect(audit.actions()).toEqual(['sso.account_linked', 'member.joined', 'user.login']);
      expect(await ending(signIn(verified('ada@corp.test')))).toBe('signedIn');
      expect(outcomes).toEqual(['link_required', 'success', 'success']);
    });

    it('confirms a pending link once: the same link token again is refused with 400', async () => {
      accounts.add({ email: 'ada@corp.test', passwordHash });
      const { linkToken } = await linkRequired('ada@corp.test');
      await confirm(linkToken);
      expect(await ending(confirm(linkToken))).toBe('400 invalid_state');
      expect(await service.pendingLink(linkToken)).toBeNull();
    });

    it('refuses a wrong password with 401 and keeps the link pending for the right one', async () => {
      const ada = accounts.add({ email: 'ada@corp.test', passwordHash });
      const { linkToken } = await linkRequired('ada@corp.test');
      expect(await ending(confirm(linkToken, 'not-the-password'))).toBe('401 link_refused');
      expect(memberRole(ada.id)).toBeNull();
      expect(await ending(confirm(linkToken))).toBe('signedIn');
      expect(outcomes).toEqual(['link_required', 'link_refused', 'success']);
    });

    it('counts wrong passwords against the account: after ten, even the right password does not link it', async () => {
      accounts.add({ email: 'ada@corp.test', passwordHash });
      const { linkToken } = await linkRequired('ada@corp.test');
      for (let i = 0; i < 10; i++) await confirm(linkToken, `wrong-${i}`).catch(() => undefined);
      expect(await ending(confirm(linkToken))).toBe('401 link_refused');
    });

    it('refuses a link confirmed after it expired', async () => {
      accounts.add({ email: 'ada@corp.test', passwordHash });
      const { linkToken } = await linkRequired('ada@corp.test');
      records.age(10 * 60 * 1000 + 1000);
      expect(await service.pendingLink(linkToken)).toBeNull();
      expect(await ending(confirm(linkToken))).toBe('400 invalid_state');
    });

    it('signs a member whose account the provider linked before straight in, without joining again', async () => {
      const first = await signIn(verified('grace@corp.test'));
      audit.entries.length = 0;
      const again = await signIn(verified('grace@corp.test'));
      expect(again).toMatchObject({ kind: 'signedIn', userId: (first as { userId: string }).userId });
      expect(audit.actions()).toEqual(['user.login']);
    });

    it('takes over an address registered but never confirmed: its password stops working and the organization its sign-up made is dropped', async () => {
      const squatter = accounts.add({ email: 'dave@corp.test', passwordHash, emailVerifiedAt: null });
      const squatted = organizations.seed({ owner: squatter.id }).id;
      const result = await signIn(verified('dave@corp.test'));
      expect(result).toMatchObject({ kind: 'signedIn', userId: squatter.id });
      expect(organizations.organizations.has(squatted)).toBe(false);
      expect(accounts.rows.get(squatter.id)!.passwordHash).not.toBe(passwordHash);
      expect(accounts.rows.get(squatter.id)!.emailVerifiedAt).not.toBeNull();
      expect(memberRole(squatter.id)).toBe('viewer');
    });

    it('refuses a disabled account and a service administrator’s with 403 “account not available”', async () => {
      accounts.add({ email: 'off@corp.test', passwordHash, status: 'disabled' });
      accounts.add({ email: 'root@corp.test', passwordHash, isSuperAdmin: true });
      expect(await ending(signIn(verified('off@corp.test')))).toBe('403 account_unavailable');
      expect(await ending(signIn(verified('root@corp.test')))).toBe('403 account_unavailable');
      expect(outcomes).toEqual(['account_unavailable', 'account_unavailable']);
    });
  });
});
