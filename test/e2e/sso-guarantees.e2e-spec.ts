import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOrg, createUser, type TestOrg, type TestUser } from '../factories/identity.js';
import { afterAnswers, type TestApp } from '../harness/test-app.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { startListeningApp } from '../support/listening-app.js';
import {
  TestBrowser,
  authorizeAtProvider,
  startIdentityProvider,
  type TestIdentityProvider,
} from '../support/oidc-provider.js';

/**
 * Issue 30's SSO findings, tried as an attacker's Enterprise organization X against a victim's
 * organization Y, with a real OpenID provider and a real DNS server on 127.0.0.1: a domain routes
 * sign-ins only once proven, a provider signs in only accounts that are its organization's own, a
 * session acts only where its sign-in admits it, and a foreign page cannot start a sign-in.
 */
describe('SSO guarantees (issue 30)', () => {
  let t: TestApp;
  let baseUrl: string;
  let idp: TestIdentityProvider;
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await startDnsServer();
    ({ t, baseUrl } = await startListeningApp({ DNS_SERVERS: dns.server }));
    idp = await startIdentityProvider({ redirectUri: `${baseUrl}/api/v1/auth/sso/callback` });
  });
  afterAll(async () => {
    await idp?.close();
    await t?.close();
    await dns?.close();
  });

  const fresh = (label: string) => `${label}-${randomUUID().slice(0, 8)}.test`;

  async function signedIn(email: string, password = 'correct-horse-battery') {
    const browser = new TestBrowser();
    const response = await browser.request(`${baseUrl}/api/v1/auth/login`, { json: { email, password } });
    return { browser, response };
  }

  async function me(browser: TestBrowser) {
    const response = await browser.request(`${baseUrl}/api/v1/auth/me`);
    return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  /** An Enterprise organization whose Admin connected the test provider for `domains` (listed, not verified). */
  async function connectedOrg(domains: string[], options: { enforce?: boolean } = {}) {
    const org = await createOrg(t, { tier: 'enterprise' });
    const admin = await createUser(t, { org, role: 'owner' });
    const { browser } = await signedIn(admin.email);
    const put = await browser.request(`${baseUrl}/api/v1/org/sso`, {
      method: 'PUT',
      json: {
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        allowedDomains: domains,
        defaultRole: 'member',
        enforce: options.enforce ?? false,
      },
      origin: baseUrl,
    });
    expect(put.status).toBe(200);
    return { org, admin, browser };
  }

  async function domainRecord(browser: TestBrowser, domain: string) {
    const list = (await (await browser.request(`${baseUrl}/api/v1/org/sso/domains`)).json()) as {
      items: { domain: string; status: string; txtRecord: { name: string; value: string } }[];
    };
    return list.items.find((item) => item.domain === domain)!;
  }

  function verify(browser: TestBrowser, domain: string) {
    return browser.request(`${baseUrl}/api/v1/org/sso/domains/${domain}/verify`, { method: 'POST', origin: baseUrl });
  }

  /** Publishes the organization's record and verifies the domain. */
  async function prove(browser: TestBrowser, domain: string) {
    const { txtRecord } = await domainRecord(browser, domain);
    dns.setTxt(txtRecord.name, [txtRecord.value]);
    expect((await verify(browser, domain)).status).toBe(200);
  }

  /** A browser through the provider as `login`, back at the callback: its answer. */
  async function throughProvider(browser: TestBrowser, org: TestOrg, login: string) {
    const start = await browser.request(`${baseUrl}/api/v1/auth/sso/start?org=${org.slug}`, { site: 'none' });
    expect(start.status).toBe(303);
    const callbackUrl = await authorizeAtProvider(browser, TestBrowser.location(start, baseUrl), login);
    return browser.request(callbackUrl);
  }

  async function discover(email: string) {
    const response = await fetch(`${baseUrl}/api/v1/auth/sso/discover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    return (await response.json()) as { sso: boolean; startUrl: string | null };
  }

  async function join(user: TestUser, org: TestOrg, role: string, joinedAt?: string) {
    await t.sql(
      `INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, $3, coalesce($4::timestamptz, now()))`,
      [org.id, user.id, role, joinedAt ?? null],
    );
  }

  it('account takeover: an attacker organization cannot sign in as the Owner of another organization', async () => {
    const victimDomain = fresh('victim');
    const y = await createOrg(t, { tier: 'enterprise' });
    const alice = await createUser(t, { org: y, role: 'owner', email: `alice@${victimDomain}` });
    const x = await connectedOrg([victimDomain]);
    await join(alice, x.org, 'viewer');

    // Listing the victim's domain proves nothing: X cannot publish the record, so it stays inert.
    expect((await domainRecord(x.browser, victimDomain)).status).toBe('pending');
    const refused = await verify(x.browser, victimDomain);
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { code: string }).code).toBe('domain_not_verified');

    idp.setAccount('alice-by-x', { email: alice.email, email_verified: true });
    const attacker = new TestBrowser();
    const callback = await throughProvider(attacker, x.org, 'alice-by-x');
    expect(callback.status).toBe(403);
    expect(await callback.text()).toContain('E-mail domain not allowed');
    expect((await me(attacker)).status).toBe(401);

    // Even a provider whose organization proved the domain does not get Alice's account by saying
    // her address: she has a password and memberships elsewhere, and never linked it.
    await prove(x.browser, victimDomain);
    const second = new TestBrowser();
    const linkPage = await throughProvider(second, x.org, 'alice-by-x');
    expect(linkPage.status).toBe(200);
    expect(await linkPage.text()).toContain('Link your account');
    expect((await me(second)).status).toBe(401);
    const switched = await second.request(`${baseUrl}/api/v1/auth/switch-org`, {
      json: { slug: y.slug },
      origin: baseUrl,
    });
    expect(switched.status).toBe(401);
    expect(await t.sql(`SELECT 1 FROM api_keys WHERE organization_id = $1`, [y.id])).toEqual([]);
  });

  it('a session made by an organization’s provider acts only there: it lists no other, switch-org elsewhere needs that organization’s sign-in, keys minted stay there', async () => {
    const domain = fresh('linked');
    const x = await connectedOrg([domain]);
    await prove(x.browser, domain);
    const y = await createOrg(t, { tier: 'enterprise' });
    const bob = await createUser(t, { org: y, role: 'owner', email: `bob@${domain}` });
    await join(bob, x.org, 'owner');

    // Bob links X's provider himself, with his password: SSO then signs him in to X.
    idp.setAccount('bob', { email: bob.email, email_verified: true });
    const browser = new TestBrowser();
    const html = await (await throughProvider(browser, x.org, 'bob')).text();
    const linkToken = /name="link_token" value="([^"]+)"/.exec(html)![1];
    const linked = await browser.request(`${baseUrl}/sso/link`, {
      form: { link_token: linkToken, password: 'correct-horse-battery' },
      origin: baseUrl,
    });
    expect(linked.status).toBe(303);
    const ssoOnly = new TestBrowser();
    expect((await throughProvider(ssoOnly, x.org, 'bob')).status).toBe(303);
    expect((await me(ssoOnly)).body.organization).toMatchObject({ id: x.org.id });
    // X's provider vouches for X only: the session's list of organizations does not name Y.
    const listed = async (browser: TestBrowser) =>
      ((await (await browser.request(`${baseUrl}/api/v1/auth/orgs`)).json()) as { slug: string }[])
        .map((organization) => organization.slug)
        .sort();
    expect(await listed(ssoOnly)).toEqual([x.org.slug]);

    const switched = await ssoOnly.request(`${baseUrl}/api/v1/auth/switch-org`, {
      json: { slug: y.slug },
      origin: baseUrl,
    });
    expect(switched.status).toBe(403);
    expect(((await switched.json()) as { code: string }).code).toBe('sign_in_required');
    expect((await me(ssoOnly)).body.organization).toMatchObject({ id: x.org.id });
    const minted = await ssoOnly.request(`${baseUrl}/api/v1/org/api-keys`, {
      json: { name: 'from sso', scopes: ['org:read'], type: 'gpat' },
      origin: baseUrl,
    });
    expect(minted.status).toBe(201);
    const keys = await t.sql<{ organization_id: string }>(
      `SELECT organization_id FROM api_keys WHERE created_by = $1`,
      [bob.id],
    );
    expect(keys.map((key) => key.organization_id)).toEqual([x.org.id]);

    // The CLI's device login: the page does not offer Y either, and switching there anyway is
    // refused as switch-org is.
    const cli = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions`, { method: 'POST' })).json()) as {
      session_id: string;
      verification_url: string;
    };
    const card = await (await ssoOnly.request(cli.verification_url)).text();
    expect(card).toContain(`id="organization">${x.org.name}`);
    expect(card).not.toContain(y.slug);
    expect(card).not.toContain(y.name);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(card)![1];
    const deviceSwitch = await ssoOnly.request(`${baseUrl}/device/organization`, {
      form: { session_id: cli.session_id, csrf_token: csrf, slug: y.slug },
      origin: baseUrl,
    });
    expect(deviceSwitch.status).toBe(403);
    expect(await deviceSwitch.text()).toContain('Organization not available');

    // Nor can it reach Y through the account itself: its address (then a reset), its membership
    // in Y, its deletion. Leaving X, the organization whose provider made it, stays possible.
    const refusedCode = async (response: Response) => {
      expect(response.status).toBe(403);
      return ((await response.json()) as { code: string }).code;
    };
    const changeEmail = await ssoOnly.request(`${baseUrl}/api/v1/auth/change-email`, {
      json: { new_email: `bob-${randomUUID().slice(0, 8)}@attacker.test` },
      origin: baseUrl,
    });
    expect(await refusedCode(changeEmail)).toBe('sign_in_required');
    const leaveY = await ssoOnly.request(`${baseUrl}/api/v1/auth/leave-org`, {
      json: { slug: y.slug },
      origin: baseUrl,
    });
    expect(await refusedCode(leaveY)).toBe('sign_in_required');
    const deleteAccount = await ssoOnly.request(`${baseUrl}/api/v1/account`, { method: 'DELETE', origin: baseUrl });
    expect(await refusedCode(deleteAccount)).toBe('sign_in_required');
    const [still] = await t.sql<{ email: string; members: number }>(
      `SELECT u.email, (SELECT count(*)::int FROM memberships m WHERE m.user_id = u.id) AS members
         FROM users u WHERE u.id = $1`,
      [bob.id],
    );
    expect(still).toEqual({ email: bob.email, members: 2 });

    // Y's own sign-in (Bob's password, in the same browser) admits Y too.
    const password = await ssoOnly.request(`${baseUrl}/api/v1/auth/login`, {
      json: { email: bob.email, password: 'correct-horse-battery' },
      origin: baseUrl,
    });
    expect(password.status).toBe(200);
    expect(await listed(ssoOnly)).toEqual([x.org.slug, y.slug].sort());
    const again = await ssoOnly.request(`${baseUrl}/api/v1/auth/switch-org`, {
      json: { slug: y.slug },
      origin: baseUrl,
    });
    expect(again.status).toBe(200);
    const back = await ssoOnly.request(`${baseUrl}/api/v1/auth/switch-org`, {
      json: { slug: x.org.slug },
      origin: baseUrl,
    });
    expect(back.status).toBe(200);
  });

  it('domain capture: a listed domain routes nobody until proven, its real owner proves it, and a lost record makes it inert again', async () => {
    const domain = fresh('captured');
    const x = await connectedOrg([domain]);
    const loner = await createUser(t, { email: `carol@${domain}` });
    expect(await discover(`someone@${domain}`)).toEqual({ sso: false, startUrl: null });

    idp.setAccount('carol-by-x', { email: loner.email, email_verified: true });
    const browser = new TestBrowser();
    const callback = await throughProvider(browser, x.org, 'carol-by-x');
    expect(callback.status).toBe(403);
    expect(await t.sql(`SELECT 1 FROM memberships WHERE user_id = $1`, [loner.id])).toEqual([]);

    // The real owner lists the same domain (no 409) and proves it with its own record.
    const owner = await connectedOrg([domain]);
    await prove(owner.browser, domain);
    expect((await discover(`someone@${domain}`)).startUrl).toContain(`org=${owner.org.slug}`);
    const [audit] = await t.sql<{ action: string }>(
      `SELECT action FROM audit_logs WHERE organization_id = $1 AND action = 'sso.domain_verified'`,
      [owner.org.id],
    );
    expect(audit).toBeDefined();
    // X cannot take it over while the owner's record stands, even with its own record beside it.
    const { txtRecord } = await domainRecord(x.browser, domain);
    const ownerRecord = (await domainRecord(owner.browser, domain)).txtRecord;
    dns.setTxt(txtRecord.name, [ownerRecord.value, txtRecord.value]);
    expect((await verify(x.browser, domain)).status).toBe(409);

    // The owner's record goes: the next re-check makes the domain inert again.
    dns.deleteTxt(txtRecord.name);
    const { SsoDomainRecheckJob } = await import('../../src/auth/sso/sso-domain-recheck.job.js');
    const job = t.app.get(SsoDomainRecheckJob);
    const result = await job.run(new Date(Date.now() + 25 * 3_600_000));
    expect(result?.lost).toBeGreaterThanOrEqual(1);
    expect((await domainRecord(owner.browser, domain)).status).toBe('pending');
    expect(await discover(`someone@${domain}`)).toEqual({ sso: false, startUrl: null });
    const lost = await t.sql<{ metadata: Record<string, unknown> }>(
      `SELECT metadata FROM audit_logs WHERE organization_id = $1 AND action = 'sso.domain_unverified'`,
      [owner.org.id],
    );
    expect(lost[0].metadata).toMatchObject({ domain });
  });

  it('enforcement keeps password sessions out of the enforcing organization only: the Owner of another organization signs in to it and can leave', async () => {
    const domain = fresh('attacker');
    const x = await connectedOrg([domain], { enforce: true });
    const y = await createOrg(t, { tier: 'free' });
    const alice = await createUser(t, { org: y, role: 'owner' });
    // Joined X before Y, so X would have been her first organization.
    await join(alice, x.org, 'viewer', '2020-01-01T00:00:00Z');

    const { browser, response } = await signedIn(alice.email);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { organization: { id: string } }).organization.id).toBe(y.id);
    const intoX = await browser.request(`${baseUrl}/api/v1/auth/switch-org`, {
      json: { slug: x.org.slug },
      origin: baseUrl,
    });
    expect(intoX.status).toBe(403);
    expect(((await intoX.json()) as { code: string }).code).toBe('sso_required');

    const left = await browser.request(`${baseUrl}/api/v1/auth/leave-org`, {
      json: { slug: x.org.slug },
      origin: baseUrl,
    });
    expect(left.status).toBe(204);
    expect(
      await t.sql(`SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2`, [x.org.id, alice.id]),
    ).toEqual([]);
    const [entry] = await t.sql<{ actor_user_id: string }>(
      `SELECT actor_user_id FROM audit_logs WHERE organization_id = $1 AND action = 'member.left'`,
      [x.org.id],
    );
    expect(entry.actor_user_id).toBe(alice.id);
    const ownerLeaves = await browser.request(`${baseUrl}/api/v1/auth/leave-org`, {
      json: { slug: y.slug },
      origin: baseUrl,
    });
    expect(ownerLeaves.status).toBe(403);
  });

  it('pre-registration does not block SSO: the verified provider takes over an unconfirmed address and drops its organization', async () => {
    const domain = fresh('prereg');
    const x = await connectedOrg([domain]);
    await prove(x.browser, domain);
    const email = `dave@${domain}`;
    const registered = await fetch(`${baseUrl}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'squatter-password', organizationName: 'Squatted' }),
    });
    expect(registered.status).toBe(202);
    await afterAnswers(t);
    const [squatted] = await t.sql<{ id: string; organization_id: string }>(
      `SELECT u.id, m.organization_id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.email = $1`,
      [email],
    );

    idp.setAccount('dave', { email, email_verified: true });
    const browser = new TestBrowser();
    const callback = await throughProvider(browser, x.org, 'dave');
    expect(callback.status).toBe(303);
    expect((await me(browser)).body).toMatchObject({ user: { id: squatted.id }, organization: { id: x.org.id } });
    expect(await t.sql(`SELECT 1 FROM organizations WHERE id = $1`, [squatted.organization_id])).toEqual([]);
    const orgs = await t.sql<{ organization_id: string }>(
      `SELECT organization_id FROM memberships WHERE user_id = $1`,
      [squatted.id],
    );
    expect(orgs.map((row) => row.organization_id)).toEqual([x.org.id]);
    expect((await signedIn(email, 'squatter-password')).response.status).toBe(401);
  });

  it('SSO login CSRF: a navigation from another site starts nothing until the person confirms on this site', async () => {
    const domain = fresh('csrf');
    const x = await connectedOrg([domain]);
    await prove(x.browser, domain);
    const victim = new TestBrowser();
    const start = await victim.request(`${baseUrl}/api/v1/auth/sso/start?org=${x.org.slug}`, { site: 'cross-site' });
    expect(start.status).toBe(200);
    expect(start.headers.get('location')).toBeNull();
    const page = await start.text();
    expect(page).toContain('Continue to single sign-on?');
    expect(page).toContain('action="/sso/start"');
    expect(victim.cookie(baseUrl, 'attestly.sso_state')).toBeUndefined();
    expect(await t.sql(`SELECT 1 FROM sso_login_attempts WHERE organization_id = $1`, [x.org.id])).toEqual([]);

    // The confirmation form posted by another site is refused; posted from this site it goes on.
    const forged = await victim.request(`${baseUrl}/sso/start`, {
      form: { org: x.org.slug },
      origin: 'https://evil.example',
    });
    expect(forged.status).toBe(403);
    expect(victim.cookie(baseUrl, 'attestly.sso_state')).toBeUndefined();
    const confirmed = await victim.request(`${baseUrl}/sso/start`, { form: { org: x.org.slug }, origin: baseUrl });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain(`${idp.url}/auth?`);
    expect(victim.cookie(baseUrl, 'attestly.sso_state')).toBeDefined();
  });
});
