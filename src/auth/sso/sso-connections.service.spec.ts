import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { PassportStatic } from 'passport';
import { RecordedAudit } from '../../../test/fakes/audit-entries.js';
import { FakeServiceSecretsRepository } from '../../../test/fakes/auth.js';
import { testConfig } from '../../../test/fakes/config.js';
import { FakeOidcProvider, FakeProviderProblem } from '../../../test/fakes/oidc-provider.js';
import { fakeOrganizations, sessionAuth, type FakeOrganizationsRepository } from '../../../test/fakes/organizations.js';
import { FakeSsoConnectionsRepository } from '../../../test/fakes/sso.js';
import { FakeUnitOfWork } from '../../../test/fakes/unit-of-work.js';
import type { TenantResolver } from '../../apps/tenant-resolver.js';
import type { Role } from '../../common/access/access.decorator.js';
import type { OrganizationId } from '../../common/access/tenant-id.js';
import type { AppConfig } from '../../config/app-config.js';
import { PlanService } from '../../organizations/plan.service.js';
import { AccessGuard } from '../access.guard.js';
import type { ServiceSecretsRepository } from '../service-secrets.repository.js';
import type { Principal } from '../strategies/principal.js';
import type { ProviderRegistration } from './oidc-client.js';
import type { SsoConnectionsRepository } from './sso-connections.repository.js';
import { SsoSecrets } from './sso-secrets.js';
import type { PutSsoConnectionDto } from './sso.dto.js';

// The identity provider is the in-memory one: discovery never leaves the process.
let idp = new FakeOidcProvider();
jest.unstable_mockModule('./oidc-client.js', () => ({
  discoverProvider: (registration: ProviderRegistration) => idp.discover(registration),
  ProviderProblem: FakeProviderProblem,
}));
const { SsoConnectionsService } = await import('./sso-connections.service.js');
const { SsoConnectionsController } = await import('./sso-connections.controller.js');

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { getStatus(): number; code: string }) => `${error.getStatus()} ${error.code}`,
  );

/** The status and message of a refusal, for those whose message names the field. */
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { getStatus(): number; message: string }) => `${error.getStatus()} ${error.message}`,
  );

const config = { ...testConfig, baseUrl: 'https://api.test', ssoSecretKey: null } as AppConfig;

describe('SsoConnectionsService (the organization’s OpenID Connect connection, on fakes)', () => {
  let organizations: FakeOrganizationsRepository;
  let connections: FakeSsoConnectionsRepository;
  let audit: RecordedAudit;
  let secrets: SsoSecrets;
  let service: InstanceType<typeof SsoConnectionsService>;
  let A: OrganizationId;
  let B: OrganizationId;
  let slugA: string;
  const admin = (organizationId = A) => sessionAuth(organizationId, 'u-admin', 'admin');
  const body = (overrides: Partial<PutSsoConnectionDto> = {}): PutSsoConnectionDto => ({
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    allowedDomains: ['corp.test'],
    defaultRole: 'member',
    enforce: false,
    ...overrides,
  });

  beforeEach(() => {
    idp = new FakeOidcProvider();
    const fakes = fakeOrganizations();
    organizations = fakes.repository;
    ({ id: A, slug: slugA } = organizations.seed({ tier: 'enterprise' }));
    ({ id: B } = organizations.seed({ tier: 'enterprise' }));
    connections = new FakeSsoConnectionsRepository();
    audit = new RecordedAudit();
    secrets = new SsoSecrets(new FakeServiceSecretsRepository() as unknown as ServiceSecretsRepository, config);
    service = new SsoConnectionsService(
      new FakeUnitOfWork().asUnitOfWork(),
      connections as unknown as SsoConnectionsRepository,
      fakes.organizations,
      config,
      secrets,
      audit.asAuditService(),
      new PlanService(fakes.organizations),
    );
  });

  describe('the Enterprise gate', () => {
    it('refuses reading, saving and deleting the connection on a plan without SSO, and stores nothing', async () => {
      const professional = organizations.seed({ tier: 'professional' }).id;
      const auth = admin(professional);
      expect(await failure(service.get(auth))).toBe('403 feature_unavailable');
      expect(await failure(service.put(auth, body()))).toBe('403 feature_unavailable');
      expect(await failure(service.remove(auth))).toBe('403 feature_unavailable');
      expect(connections.connections.size).toBe(0);
      expect(audit.entries).toEqual([]);
    });
  });

  describe('saving', () => {
    it('answers 404 before a connection exists, then the saved connection without its secret', async () => {
      expect(await failure(service.get(admin()))).toBe('404 not_found');
      await service.put(admin(), body({ defaultRole: 'admin', enforce: true }));
      const saved = await service.get(admin());
      expect(saved).toMatchObject({
        organizationId: A,
        issuer: idp.issuer,
        clientId: idp.clientId,
        allowedDomains: ['corp.test'],
        defaultRole: 'admin',
        enforce: true,
      });
      expect(JSON.stringify(saved)).not.toContain(idp.clientSecret);
    });

    it('never stores the client secret in plain: the stored value is sealed, and the audit entry leaves it out', async () => {
      await service.put(admin(), body());
      const stored = connections.connections.get(A)!.clientSecretSealed;
      expect(stored).not.toContain(idp.clientSecret);
      expect(await secrets.open(stored, A)).toBe(idp.clientSecret);
      expect(JSON.stringify(audit.entries)).not.toContain(idp.clientSecret);
    });

    it('seals the secret for its organization: copied to another organization’s row it does not open, so that organization cannot sign in with it', async () => {
      await service.put(admin(A), body());
      await connections.upsert(B, { ...connections.connections.get(A)!, allowedDomains: ['corp.test'] });
      expect(await secrets.open(connections.connections.get(B)!.clientSecretSealed, B)).toBeNull();
      expect(await service.usable({ organizationId: B })).toBeNull();
      expect(await service.usable({ organizationId: A })).toMatchObject({ clientSecret: idp.clientSecret });
    });

    it('refuses a first save without a client secret with 400 naming clientSecret', async () => {
      const { clientSecret: _omitted, ...withoutSecret } = body();
      expect(await refusal(service.put(admin(), withoutSecret))).toMatch(/^400 clientSecret: is required/);
      expect(connections.connections.size).toBe(0);
    });

    it('keeps the stored secret when a change leaves it out, and audits what changed', async () => {
      await service.put(admin(), body());
      const { clientSecret: _omitted, ...withoutSecret } = body({ enforce: true });
      expect(await service.put(admin(), withoutSecret)).toMatchObject({ enforce: true });
      expect((await service.usable({ organizationId: A }))?.clientSecret).toBe(idp.clientSecret);
      expect(audit.entries.map((entry) => [entry.action, entry.metadata])).toEqual([
        ['sso.updated', expect.objectContaining({ created: true, clientSecretChanged: true, enforce: false })],
        ['sso.updated', expect.objectContaining({ created: false, clientSecretChanged: false, enforce: true })],
      ]);
      expect(audit.entries.every((entry) => entry.actorUserId === 'u-admin' && entry.organizationId === A)).toBe(true);
    });

    it('asks for the secret again when the stored one cannot be opened any more (another SSO_SECRET_KEY)', async () => {
      await service.put(admin(), body());
      const otherKey = new SsoSecrets(new FakeServiceSecretsRepository() as unknown as ServiceSecretsRepository, {
        ...config,
        ssoSecretKey: 'k'.repeat(40),
      });
      connections.connections.get(A)!.clientSecretSealed = await otherKey.seal(idp.clientSecret, A);
      const { clientSecret: _omitted, ...withoutSecret } = body({ enforce: true });
      expect(await refusal(service.put(admin(), withoutSecret))).toMatch(
        /^400 clientSecret: the stored secret cannot be read/,
      );
      expect(connections.connections.get(A)!.enforce).toBe(false);
    });

    it('refuses an issuer whose discovery does not check out with 400 naming the issuer, and saves nothing', async () => {
      expect(await refusal(service.put(admin(), body({ issuer: 'https://impostor.test' })))).toMatch(
        /^400 issuer: .*does not match/,
      );
      expect(connections.connections.size).toBe(0);
      expect(audit.entries).toEqual([]);
    });

    it('lists the allowed domains unverified: listing a domain proves nothing', async () => {
      await service.put(admin(), body({ allowedDomains: ['corp.test', 'other.test'] }));
      expect((await connections.domains(A)).map((d) => [d.domain, d.verifiedAt])).toEqual([
        ['corp.test', null],
        ['other.test', null],
      ]);
    });
  });

  describe('deleting', () => {
    it('deletes the connection once, audited with its issuer; a second delete answers 404', async () => {
      await service.put(admin(), body());
      await service.remove(admin());
      expect(await failure(service.get(admin()))).toBe('404 not_found');
      expect(await failure(service.remove(admin()))).toBe('404 not_found');
      expect(audit.actions()).toEqual(['sso.updated', 'sso.deleted']);
      expect(audit.entries[1].metadata).toEqual({ issuer: idp.issuer });
      expect(await service.usable({ slug: slugA })).toBeNull();
    });
  });

  describe('usable() (what a sign-in may use)', () => {
    it('answers the connection with its opened secret and the organization’s slug, by slug or by id', async () => {
      await service.put(admin(), body());
      const bySlug = await service.usable({ slug: slugA });
      expect(bySlug).toMatchObject({ organizationId: A, organizationSlug: slugA, clientSecret: idp.clientSecret });
      expect(await service.usable({ organizationId: A })).toEqual(bySlug);
      expect(await service.usable({ slug: 'no-such-org' })).toBeNull();
    });

    it('answers null once the organization’s plan lost SSO, though the connection is still stored', async () => {
      await service.put(admin(), body());
      organizations.organizations.get(A)!.serviceTier = 'professional';
      expect(await service.usable({ slug: slugA })).toBeNull();
      expect(await service.usable({ organizationId: A })).toBeNull();
      expect(connections.connections.has(A)).toBe(true);
    });

    it('answers null for an organization without a connection', async () => {
      expect(await service.usable({ organizationId: B })).toBeNull();
    });

    it('answers null when the stored secret cannot be opened', async () => {
      await service.put(admin(), body());
      connections.connections.get(A)!.clientSecretSealed = 'v1.AAAA.BBBB';
      expect(await service.usable({ organizationId: A })).toBeNull();
    });
  });
});

describe('SsoConnectionsController access (who may manage the connection)', () => {
  const organizationId = 'org-1' as OrganizationId;
  /** The access guard with a session of `role` in the organization, as the cookie strategy would resolve it. */
  const asRole = (role: Role) => {
    const principal: Principal = {
      kind: 'session',
      session: {
        caller: { kind: 'session', userId: 'u-1', email: 'u@example.com', isSuperAdmin: false, role },
        organizationId,
      },
    };
    const passport = {
      authenticate:
        (_strategies: string[], _options: unknown, done: (error: null, principal: Principal) => void) => () =>
          done(null, principal),
    } as unknown as PassportStatic;
    return new AccessGuard(new Reflector(), null as unknown as TenantResolver, passport);
  };
  const decide = (role: Role, handler: 'get' | 'put' | 'remove') => {
    const request = { headers: {}, ip: '203.0.113.7' };
    const context = new ExecutionContextHost(
      [request, {}, () => undefined],
      SsoConnectionsController,
      // eslint-disable-next-line @typescript-eslint/unbound-method -- the route's handler, as Nest passes it to guards
      SsoConnectionsController.prototype[handler],
    );
    return failure(asRole(role).canActivate(context));
  };

  it('lets Admins and Owners read, save and delete the connection, and refuses Members and Viewers with 403', async () => {
    for (const handler of ['get', 'put', 'remove'] as const) {
      expect([await decide('owner', handler), await decide('admin', handler)]).toEqual(['ok', 'ok']);
      expect([await decide('member', handler), await decide('viewer', handler)]).toEqual([
        '403 forbidden',
        '403 forbidden',
      ]);
    }
  });
});
