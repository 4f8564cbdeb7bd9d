import { beforeEach, describe, expect, it } from '@jest/globals';
import { FakeOrganizations } from '../../../test/fakes/identity-organizations.js';
import { FakeSsoConnectionsRepository } from '../../../test/fakes/sso.js';
import { FakeUnitOfWork } from '../../../test/fakes/unit-of-work.js';
import type { AuditService } from '../../audit/audit.service.js';
import type { OrgAuthContext } from '../../common/access/auth-context.js';
import { trustOrganizationId } from '../../common/access/tenant-id.js';
import type { PlanService } from '../../organizations/plan.service.js';
import { challengeName, challengeValue, type TxtLookup } from './domain-challenge.js';
import type { DnsTxtLookup } from './dns-txt-lookup.js';
import type { SsoConnectionsRepository } from './sso-connections.repository.js';
import { SsoDomainsService } from './sso-domains.service.js';

const A = trustOrganizationId('org-a');
const B = trustOrganizationId('org-b');

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { getStatus(): number; code: string }) => `${error.getStatus()} ${error.code}`,
  );

describe('SsoDomainsService (proof of domain ownership, on fakes)', () => {
  let connections: FakeSsoConnectionsRepository;
  let organizations: FakeOrganizations;
  let dns: Map<string, TxtLookup>;
  let audited: { action: string; organizationId: string; byCaller: boolean }[];
  let domains: SsoDomainsService;
  const admin = (organizationId = A): OrgAuthContext => ({
    caller: { kind: 'session', userId: 'u-admin', email: 'admin@example.com', isSuperAdmin: false, role: 'admin' },
    organizationId,
    ipAddress: null,
  });
  const connect = async (organizationId = A, token = `token-${organizationId}`) => {
    await connections.upsert(organizationId, {
      issuer: 'https://idp.test',
      clientId: 'c',
      clientSecretSealed: 's',
      allowedDomains: ['example.com'],
      defaultRole: 'member',
      enforce: false,
      domainToken: token,
    });
    await connections.replaceDomains(organizationId, ['example.com']);
  };
  const publish = (token: string) =>
    dns.set(challengeName('example.com'), { kind: 'records', values: [challengeValue(token)] });

  beforeEach(() => {
    connections = new FakeSsoConnectionsRepository();
    organizations = new FakeOrganizations();
    organizations.add('org-a', 'enterprise', 'acme');
    organizations.add('org-b', 'enterprise', 'other');
    dns = new Map();
    audited = [];
    const lookup = { lookup: (name: string) => Promise.resolve(dns.get(name) ?? { kind: 'absent' }) };
    const audit = {
      record: (auth: unknown, entry: { action: string; organizationId: string }) =>
        Promise.resolve(
          void audited.push({ action: entry.action, organizationId: entry.organizationId, byCaller: auth !== null }),
        ),
    };
    domains = new SsoDomainsService(
      new FakeUnitOfWork().asUnitOfWork(),
      connections as unknown as SsoConnectionsRepository,
      organizations.asService(),
      lookup as unknown as DnsTxtLookup,
      audit as unknown as AuditService,
      { requireFeature: () => Promise.resolve() } as unknown as PlanService,
    );
  });

  it('keeps a listed domain inert until its TXT record proves it: no discovery, and 422 naming the record', async () => {
    await connect();
    expect(await domains.organizationSlugForEmail('ann@example.com')).toBeNull();
    expect(await failure(domains.verify(admin(), 'example.com'))).toBe('422 domain_not_verified');
    expect(await domains.isVerified(A, 'example.com')).toBe(false);
    expect(audited).toEqual([]);
  });

  it('verifies a proven domain, audits it once, and routes the domain’s addresses to the organization', async () => {
    await connect();
    publish('token-org-a');
    expect(await domains.verify(admin(), 'example.com')).toMatchObject({ domain: 'example.com', checkError: null });
    await domains.verify(admin(), 'example.com');
    expect(audited).toEqual([{ action: 'sso.domain_verified', organizationId: A, byCaller: true }]);
    expect(await domains.organizationSlugForEmail('Ann@EXAMPLE.com')).toBe('acme');
    expect(await domains.isVerified(A, 'example.com')).toBe(true);
  });

  it('gives a verified domain to one organization: another proving it too gets 409', async () => {
    await connect(A);
    await connect(B);
    publish('token-org-a');
    await domains.verify(admin(A), 'example.com');
    dns.set(challengeName('example.com'), {
      kind: 'records',
      values: [challengeValue('token-org-a'), challengeValue('token-org-b')],
    });
    expect(await failure(domains.verify(admin(B), 'example.com'))).toBe('409 conflict');
    expect(await domains.isVerified(B, 'example.com')).toBe(false);
  });

  it('answers 404 for a domain the organization does not list', async () => {
    await connect();
    expect(await failure(domains.verify(admin(), 'other.test'))).toBe('404 not_found');
    expect(await failure(domains.list(admin(B)))).toBe('404 not_found');
  });

  it('re-checks verified domains: a removed record takes the verification away (audited), no answer keeps it', async () => {
    await connect();
    publish('token-org-a');
    await domains.verify(admin(), 'example.com');
    const tomorrow = new Date(Date.now() + 25 * 3_600_000);
    dns.set(challengeName('example.com'), { kind: 'failed', reason: 'ETIMEOUT' });
    expect(await domains.recheckDue(tomorrow)).toEqual({ checked: 1, lost: 0 });
    expect(await domains.isVerified(A, 'example.com')).toBe(true);
    dns.delete(challengeName('example.com'));
    expect(await domains.recheckDue(tomorrow)).toEqual({ checked: 1, lost: 1 });
    expect(await domains.isVerified(A, 'example.com')).toBe(false);
    expect(audited.at(-1)).toEqual({ action: 'sso.domain_unverified', organizationId: A, byCaller: false });
    expect(await domains.organizationSlugForEmail('ann@example.com')).toBeNull();
  });

  it('stops routing discovery to an organization whose plan lost SSO', async () => {
    await connect();
    publish('token-org-a');
    await domains.verify(admin(), 'example.com');
    organizations.organizations.get('org-a')!.serviceTier = 'free';
    expect(await domains.organizationSlugForEmail('ann@example.com')).toBeNull();
  });
});
