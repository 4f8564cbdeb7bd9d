import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiKey, createOrg, createUser, type TestOrg, type TestUser } from '../factories/identity.js';
import type { TestApp } from '../harness/test-app.js';
import { startListeningApp } from '../support/listening-app.js';
import {
  TestBrowser,
  authorizeAtProvider,
  startIdentityProvider,
  type TestIdentityProvider,
} from '../support/oidc-provider.js';
import { sampleValue } from '../support/prometheus-text.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';

/**
 * Enterprise single sign-on against a real OpenID provider (oidc-provider) on 127.0.0.1: the
 * provider's own login and consent pages, its real code, token and key endpoints. Each test uses
 * its own browser (cookie jar), so no provider session leaks between tests.
 */
describe('single sign-on with OpenID Connect', () => {
  let t: TestApp;
  let baseUrl: string;
  let idp: TestIdentityProvider;
  let redirectUri: string;
  let dns: TestDnsServer;

  beforeAll(async () => {
    dns = await startDnsServer();
    ({ t, baseUrl } = await startListeningApp({ DNS_SERVERS: dns.server }));
    redirectUri = `${baseUrl}/api/v1/auth/sso/callback`;
    idp = await startIdentityProvider({ redirectUri });
  });
  afterAll(async () => {
    await idp?.close();
    await t?.close();
    await dns?.close();
  });

  /** A signed-in browser of the app (password sign-in through the API). */
  async function passwordBrowser(email: string, password = 'correct-horse-battery') {
    const browser = new TestBrowser();
    const response = await browser.request(`${baseUrl}/api/v1/auth/login`, { json: { email, password } });
    return { browser, response };
  }

  async function adminBrowser(org: TestOrg, role: 'owner' | 'admin' = 'owner') {
    const user = await createUser(t, { org, role });
    const { browser, response } = await passwordBrowser(user.email);
    expect(response.status).toBe(200);
    return { user, browser };
  }

  function connectionBody(overrides: Record<string, unknown> = {}) {
    return {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      allowedDomains: [`${randomUUID().slice(0, 8)}.corp.test`],
      defaultRole: 'member',
      enforce: false,
      ...overrides,
    };
  }

  /** Publishes the organization's TXT record for the domain and verifies it. */
  async function verifyDomain(browser: TestBrowser, domain: string) {
    const list = (await (await browser.request(`${baseUrl}/api/v1/org/sso/domains`)).json()) as {
      items: { domain: string; txtRecord: { name: string; value: string } }[];
    };
    const record = list.items.find((item) => item.domain === domain)!.txtRecord;
    dns.setTxt(record.name, [record.value]);
    const verified = await browser.request(`${baseUrl}/api/v1/org/sso/domains/${domain}/verify`, {
      method: 'POST',
      origin: baseUrl,
    });
    expect(verified.status).toBe(200);
    return record;
  }

  /** An Enterprise organization with a connection to the test provider, for a fresh domain it verified. */
  async function ssoOrg(overrides: Record<string, unknown> = {}) {
    const org = await createOrg(t, { tier: 'enterprise' });
    const { user: owner, browser } = await adminBrowser(org);
    const body = connectionBody(overrides);
    const put = await browser.request(`${baseUrl}/api/v1/org/sso`, { method: 'PUT', json: body, origin: baseUrl });
    expect(put.status).toBe(200);
    await verifyDomain(browser, body.allowedDomains[0]);
    return { org, owner, ownerBrowser: browser, domain: body.allowedDomains[0] };
  }

  /** The link page's password post, after a callback that asked for it. */
  async function confirmLink(browser: TestBrowser, linkPage: Response, password = 'correct-horse-battery') {
    expect(linkPage.status).toBe(200);
    const html = await linkPage.text();
    expect(html).toContain('Link your account');
    const linkToken = /name="link_token" value="([^"]+)"/.exec(html)![1];
    return browser.request(`${baseUrl}/sso/link`, { form: { link_token: linkToken, password }, origin: baseUrl });
  }

  /** Start → provider login and consent → the callback URL the provider sends the browser to. */
  async function throughProvider(browser: TestBrowser, org: TestOrg, login: string, query = '') {
    const start = await browser.request(`${baseUrl}/api/v1/auth/sso/start?org=${org.slug}${query}`, {
      site: 'none',
    });
    expect(start.status).toBe(303);
    const authorizationUrl = TestBrowser.location(start, baseUrl);
    expect(authorizationUrl.startsWith(`${idp.url}/auth?`)).toBe(true);
    return { authorizationUrl, callbackUrl: await authorizeAtProvider(browser, authorizationUrl, login) };
  }

  async function me(browser: TestBrowser) {
    const response = await browser.request(`${baseUrl}/api/v1/auth/me`);
    return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  async function userCount(email: string): Promise<number> {
    const [row] = await t.sql<{ n: string }>(`SELECT count(*) AS n FROM users WHERE lower(email) = lower($1)`, [email]);
    return Number(row.n);
  }

  async function ssoMetric(outcome: string): Promise<number> {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    return sampleValue(text, 'attestly_sso_sign_ins_total', { outcome }) ?? 0;
  }

  describe('the connection (GET/PUT/DELETE /api/v1/org/sso)', () => {
    it('is Enterprise only: other plans get 403 feature_unavailable', async () => {
      const org = await createOrg(t, { tier: 'professional' });
      const { browser } = await adminBrowser(org);
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const response = await browser.request(`${baseUrl}/api/v1/org/sso`, {
          method,
          ...(method === 'PUT' ? { json: connectionBody() } : {}),
          origin: baseUrl,
        });
        expect(response.status).toBe(403);
        expect(((await response.json()) as { code: string }).code).toBe('feature_unavailable');
      }
    });

    it('is for Admins and Owners only', async () => {
      const org = await createOrg(t, { tier: 'enterprise' });
      const member = await createUser(t, { org, role: 'member' });
      const { browser } = await passwordBrowser(member.email);
      expect((await browser.request(`${baseUrl}/api/v1/org/sso`)).status).toBe(403);
    });

    it('saves after checking discovery, never shows the client secret, and keeps it encrypted at rest', async () => {
      const org = await createOrg(t, { tier: 'enterprise' });
      const { browser } = await adminBrowser(org, 'admin');
      expect((await browser.request(`${baseUrl}/api/v1/org/sso`)).status).toBe(404);
      const body = connectionBody({ allowedDomains: ['Example-A.corp.test', 'example-a.corp.test', 'b.corp.test'] });
      const put = await browser.request(`${baseUrl}/api/v1/org/sso`, { method: 'PUT', json: body, origin: baseUrl });
      expect(put.status).toBe(200);
      const saved = (await put.json()) as Record<string, unknown>;
      expect(saved).toEqual({
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecretSet: true,
        allowedDomains: ['example-a.corp.test', 'b.corp.test'],
        defaultRole: 'member',
        enforce: false,
        redirectUri,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const got = await browser.request(`${baseUrl}/api/v1/org/sso`);
      const text = await got.text();
      expect(got.status).toBe(200);
      expect(text).not.toContain(idp.clientSecret);
      const rows = await t.sql(`SELECT * FROM sso_connections WHERE organization_id = $1`, [org.id]);
      expect(JSON.stringify(rows)).not.toContain(idp.clientSecret);
      const [audit] = await t.sql<{ metadata: Record<string, unknown> }>(
        `SELECT metadata FROM audit_logs WHERE organization_id = $1 AND action = 'sso.updated'`,
        [org.id],
      );
      expect(audit.metadata).toMatchObject({ created: true, issuer: idp.issuer, clientSecretChanged: true });
      expect(JSON.stringify(audit)).not.toContain(idp.clientSecret);

      // Left out, the stored secret is kept (and still works for discovery).
      const { clientSecret: _omitted, ...withoutSecret } = body;
      const update = await browser.request(`${baseUrl}/api/v1/org/sso`, {
        method: 'PUT',
        json: { ...withoutSecret, enforce: true },
        origin: baseUrl,
      });
      expect(update.status).toBe(200);
      expect(((await update.json()) as { enforce: boolean }).enforce).toBe(true);
      // Enforcement applies at once: the Admin's password session is out of the organization now.
      expect((await browser.request(`${baseUrl}/api/v1/org/sso`)).status).toBe(403);

      const { browser: owner } = await adminBrowser(org, 'owner');
      const removed = await owner.request(`${baseUrl}/api/v1/org/sso`, { method: 'DELETE', origin: baseUrl });
      expect(removed.status).toBe(204);
      expect((await owner.request(`${baseUrl}/api/v1/org/sso`)).status).toBe(404);
      const actions = await t.sql<{ action: string }>(
        `SELECT action FROM audit_logs WHERE organization_id = $1 AND action LIKE 'sso.%' ORDER BY created_at`,
        [org.id],
      );
      expect(actions.map((row) => row.action)).toEqual(['sso.updated', 'sso.updated', 'sso.deleted']);
    });

    it('refuses bad input with the field named, and a first save without a client secret', async () => {
      const org = await createOrg(t, { tier: 'enterprise' });
      const { browser } = await adminBrowser(org);
      const put = (json: unknown) =>
        browser.request(`${baseUrl}/api/v1/org/sso`, { method: 'PUT', json, origin: baseUrl });
      for (const [bad, field] of [
        [{ defaultRole: 'owner' }, 'defaultRole'],
        [{ allowedDomains: [] }, 'allowedDomains'],
        [{ allowedDomains: ['not a domain'] }, 'allowedDomains'],
        [{ enforce: 'yes' }, 'enforce'],
        [{ clientId: '' }, 'clientId'],
      ] as const) {
        const response = await put(connectionBody(bad));
        expect([400, 422]).toContain(response.status);
        expect(await response.text()).toContain(field);
      }
      const { clientSecret: _omitted, ...withoutSecret } = connectionBody();
      const response = await put(withoutSecret);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toMatch(/clientSecret: is required/);
    });

    it('names the problem when the issuer does not check out: mismatch, unreachable', async () => {
      const impostor = await startIdentityProvider({ redirectUri, issuerHost: 'localhost' });
      try {
        const org = await createOrg(t, { tier: 'enterprise' });
        const { browser } = await adminBrowser(org);
        // The document at 127.0.0.1 says its issuer is http://localhost:…: not the one configured.
        const mismatch = await browser.request(`${baseUrl}/api/v1/org/sso`, {
          method: 'PUT',
          json: connectionBody({
            issuer: impostor.url,
            clientId: impostor.clientId,
            clientSecret: impostor.clientSecret,
          }),
          origin: baseUrl,
        });
        expect(mismatch.status).toBe(400);
        expect(((await mismatch.json()) as { error: string }).error).toMatch(/^issuer: .*issuer mismatch/);
        const closed = await browser.request(`${baseUrl}/api/v1/org/sso`, {
          method: 'PUT',
          json: connectionBody({ issuer: 'http://127.0.0.1:9' }),
          origin: baseUrl,
        });
        expect(closed.status).toBe(400);
        expect(((await closed.json()) as { error: string }).error).toMatch(/^issuer: /);
        expect(await t.sql(`SELECT 1 FROM sso_connections WHERE organization_id = $1`, [org.id])).toEqual([]);
      } finally {
        await impostor.close();
      }
    });

    it('gives each verified e-mail domain to one organization only', async () => {
      const { domain } = await ssoOrg();
      const other = await createOrg(t, { tier: 'enterprise' });
      const { browser } = await adminBrowser(other);
      const response = await browser.request(`${baseUrl}/api/v1/org/sso`, {
        method: 'PUT',
        json: connectionBody({ allowedDomains: [domain] }),
        origin: baseUrl,
      });
      // Listing is free (and inert); verifying a domain another organization holds is not.
      expect(response.status).toBe(200);
      const verify = await browser.request(`${baseUrl}/api/v1/org/sso/domains/${domain}/verify`, {
        method: 'POST',
        origin: baseUrl,
      });
      expect([409, 422]).toContain(verify.status);
      const list = (await (await browser.request(`${baseUrl}/api/v1/org/sso/domains`)).json()) as {
        items: { txtRecord: { name: string; value: string } }[];
      };
      // Even with its own record published beside the holder's, the second organization is refused.
      const holder = (
        await t.sql<{ value: string }>(
          `SELECT 'attestly-domain-verification=' || c.domain_token AS value
           FROM sso_domains d JOIN sso_connections c USING (organization_id)
          WHERE d.domain = $1 AND d.verified_at IS NOT NULL`,
          [domain],
        )
      )[0].value;
      dns.setTxt(list.items[0].txtRecord.name, [holder, list.items[0].txtRecord.value]);
      const refused = await browser.request(`${baseUrl}/api/v1/org/sso/domains/${domain}/verify`, {
        method: 'POST',
        origin: baseUrl,
      });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: string }).error).toContain(domain);
    });
  });

  describe('discovery by e-mail (POST /api/v1/auth/sso/discover)', () => {
    it('answers the start URL for a connected domain, and the same shape for any other address', async () => {
      const { org, domain } = await ssoOrg();
      const browser = new TestBrowser();
      const known = await browser.request(`${baseUrl}/api/v1/auth/sso/discover`, {
        json: { email: `nobody-yet@${domain.toUpperCase()}` },
      });
      expect(known.status).toBe(200);
      const knownBody = (await known.json()) as { sso: boolean; startUrl: string };
      expect(knownBody.sso).toBe(true);
      const start = new URL(knownBody.startUrl);
      expect(`${start.origin}${start.pathname}`).toBe(`${baseUrl}/api/v1/auth/sso/start`);
      expect(start.searchParams.get('org')).toBe(org.slug);

      const unknown = await browser.request(`${baseUrl}/api/v1/auth/sso/discover`, {
        json: { email: 'someone@unconnected.test' },
      });
      expect(unknown.status).toBe(200);
      expect(await unknown.json()).toEqual({ sso: false, startUrl: null });
      const bad = await browser.request(`${baseUrl}/api/v1/auth/sso/discover`, { json: { email: 'not-an-address' } });
      expect([400, 422]).toContain(bad.status);
    });
  });

  it('limits discovery and starts per client address', async () => {
    const browser = new TestBrowser();
    for (let i = 0; i < 30; i++) {
      const response = await browser.request(`${baseUrl}/api/v1/auth/sso/discover`, {
        json: { email: `n${i}@unconnected.test` },
      });
      expect(response.status).toBe(200);
    }
    const refused = await browser.request(`${baseUrl}/api/v1/auth/sso/start?org=any-org`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  describe('sign-in', () => {
    it('signs an existing member in once they linked the provider with their password: a new session, the dashboard, user.login with method sso', async () => {
      const { org, domain } = await ssoOrg();
      const member = await createUser(t, { org, role: 'viewer', email: `ada@${domain}` });
      idp.setAccount('ada', { email: member.email, email_verified: true, name: 'Ada' });
      const before = await ssoMetric('success');
      const browser = new TestBrowser();
      // A session id planted before sign-in must not survive it.
      browser.setCookie(baseUrl, 'attestly.sid', 's%3Aplanted.fake');
      const { callbackUrl } = await throughProvider(browser, org, 'ada');
      expect(callbackUrl.startsWith(`${redirectUri}?`)).toBe(true);
      const linkPage = await browser.request(callbackUrl);
      // The account has a password and never accepted this provider: nothing happens without it.
      expect((await me(browser)).status).toBe(401);
      const callback = await confirmLink(browser, linkPage);
      expect(callback.status).toBe(303);
      expect(callback.headers.get('location')).toBe(`${baseUrl}/`);
      expect(browser.cookie(baseUrl, 'attestly.sid')).not.toBe('s%3Aplanted.fake');
      expect(browser.cookie(baseUrl, 'attestly.sso_state')).toBeUndefined();

      const session = await me(browser);
      expect(session.status).toBe(200);
      expect(session.body.user).toMatchObject({ id: member.id, email: member.email, role: 'viewer' });
      expect(session.body.organization).toMatchObject({ id: org.id, slug: org.slug });
      const audit = await t.sql<{ action: string; actor_user_id: string; metadata: Record<string, unknown> }>(
        `SELECT action, actor_user_id, metadata FROM audit_logs WHERE organization_id = $1 AND resource_id = $2`,
        [org.id, member.id],
      );
      expect(audit).toEqual([
        { action: 'sso.account_linked', actor_user_id: member.id, metadata: { issuer: idp.issuer } },
        { action: 'user.login', actor_user_id: member.id, metadata: { method: 'sso', issuer: idp.issuer } },
      ]);
      expect(await ssoMetric('success')).toBe(before + 1);

      // Linked, the next sign-in through the provider needs no password.
      const next = new TestBrowser();
      const again = await throughProvider(next, org, 'ada');
      expect((await next.request(again.callbackUrl)).status).toBe(303);
      expect((await me(next)).body.user).toMatchObject({ id: member.id });

      // The callback URL is single-use: opened again it signs nobody in.
      const other = new TestBrowser();
      const replay = await other.request(callbackUrl);
      expect(replay.status).toBe(400);
      expect((await me(other)).status).toBe(401);
    });

    it('creates a new user from an allowed domain with a verified address, with the default role and a seat', async () => {
      const { org, domain } = await ssoOrg({ defaultRole: 'admin' });
      const email = `grace@${domain}`;
      idp.setAccount('grace', { email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'grace');
      expect((await browser.request(callbackUrl)).status).toBe(303);
      const session = await me(browser);
      expect(session.status).toBe(200);
      expect(session.body.user).toMatchObject({ email, role: 'admin', isActive: true });
      const [membership] = await t.sql<{ role: string }>(
        `SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND u.email = $2`,
        [org.id, email],
      );
      expect(membership.role).toBe('admin');
      const actions = await t.sql<{ action: string; metadata: Record<string, unknown> }>(
        `SELECT a.action, a.metadata FROM audit_logs a JOIN users u ON u.id::text = a.resource_id
          WHERE a.organization_id = $1 AND u.email = $2 ORDER BY a.action`,
        [org.id, email],
      );
      expect(actions.map((row) => row.action)).toEqual(['member.joined', 'user.login']);
      expect(actions[0].metadata).toMatchObject({ email, role: 'admin', method: 'sso' });
    });

    it('does not hand an account of another organization to this provider: only its password links it', async () => {
      const { org, domain } = await ssoOrg();
      const elsewhere = await createOrg(t, { tier: 'free' });
      const existing = await createUser(t, { org: elsewhere, role: 'owner', email: `taken@${domain}` });
      idp.setAccount('taken', { email: existing.email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'taken');
      const response = await browser.request(callbackUrl);
      expect(response.status).toBe(200);
      const page = await response.text();
      expect(page).toContain('already has an Attestly account');
      const linkToken = /name="link_token" value="([^"]+)"/.exec(page)![1];
      const wrong = await browser.request(`${baseUrl}/sso/link`, {
        form: { link_token: linkToken, password: 'not-the-password' },
        origin: baseUrl,
      });
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toContain('The password is not the one of this account');
      expect((await me(browser)).status).toBe(401);
      expect(
        await t.sql(`SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2`, [org.id, existing.id]),
      ).toEqual([]);
    });

    it('refuses a sign-in attempt that has expired', async () => {
      const { org, domain } = await ssoOrg();
      const email = `slow@${domain}`;
      idp.setAccount('slow', { email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'slow');
      await t.sql(`UPDATE sso_login_attempts SET expires_at = now() - interval '1 second' WHERE organization_id = $1`, [
        org.id,
      ]);
      const response = await browser.request(callbackUrl);
      expect(response.status).toBe(400);
      expect(await response.text()).toContain('the sign-in attempt expired');
      expect(await userCount(email)).toBe(0);
    });

    it('refuses a callback whose state is not this browser’s: nothing is created', async () => {
      const { org, domain } = await ssoOrg();
      const email = `mallory-target@${domain}`;
      idp.setAccount('target', { email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'target');
      const tampered = new URL(callbackUrl);
      tampered.searchParams.set('state', 'not-the-state-of-this-attempt');
      const response = await browser.request(tampered.href);
      expect(response.status).toBe(400);
      const page = await response.text();
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(page).toContain('Sign-in link invalid or expired');
      // And another browser (an attacker's link opened by a victim) has no state cookie at all.
      const victim = new TestBrowser();
      expect((await victim.request(callbackUrl)).status).toBe(400);
      expect((await me(victim)).status).toBe(401);
      expect(await userCount(email)).toBe(0);
    });

    it('refuses an ID token carrying the nonce of an earlier sign-in (replayed nonce)', async () => {
      const { org, domain } = await ssoOrg();
      idp.setAccount('nonce-user', { email: `nonce@${domain}`, email_verified: true });
      const first = new TestBrowser();
      const earlier = await throughProvider(first, org, 'nonce-user');
      expect((await first.request(earlier.callbackUrl)).status).toBe(303);
      const usedNonce = new URL(earlier.authorizationUrl).searchParams.get('nonce')!;

      const second = new TestBrowser();
      const start = await second.request(`${baseUrl}/api/v1/auth/sso/start?org=${org.slug}`, { site: 'none' });
      const authorization = new URL(TestBrowser.location(start, baseUrl));
      authorization.searchParams.set('nonce', usedNonce);
      const callbackUrl = await authorizeAtProvider(second, authorization.href, 'nonce-user');
      const before = await ssoMetric('token_invalid');
      const response = await second.request(callbackUrl);
      expect(response.status).toBe(401);
      expect(await response.text()).toContain('could not be verified');
      expect((await me(second)).status).toBe(401);
      expect(await ssoMetric('token_invalid')).toBe(before + 1);
    });

    it('refuses an authorization code that was already used', async () => {
      const { org, domain } = await ssoOrg();
      idp.setAccount('code-user', { email: `code@${domain}`, email_verified: true });
      const first = new TestBrowser();
      const used = await throughProvider(first, org, 'code-user');
      expect((await first.request(used.callbackUrl)).status).toBe(303);

      // A fresh, valid attempt in another browser, completed with the used code.
      const second = new TestBrowser();
      const start = await second.request(`${baseUrl}/api/v1/auth/sso/start?org=${org.slug}`, { site: 'none' });
      const state = new URL(TestBrowser.location(start, baseUrl)).searchParams.get('state')!;
      const replayed = new URL(used.callbackUrl);
      replayed.searchParams.set('state', state);
      const response = await second.request(replayed.href);
      expect(response.status).toBe(401);
      expect(await response.text()).toContain('Sign-in code refused');
      expect((await me(second)).status).toBe(401);
    });

    it('refuses a callback that names another issuer (RFC 9207 iss)', async () => {
      const { org, domain } = await ssoOrg();
      const email = `iss@${domain}`;
      idp.setAccount('iss-user', { email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'iss-user');
      const tampered = new URL(callbackUrl);
      expect(tampered.searchParams.get('iss')).toBe(idp.issuer);
      tampered.searchParams.set('iss', 'https://idp.attacker.test');
      const response = await browser.request(tampered.href);
      expect(response.status).toBe(401);
      expect((await me(browser)).status).toBe(401);
      expect(await userCount(email)).toBe(0);
    });

    it('refuses an address the provider has not verified: nothing is created', async () => {
      const { org, domain } = await ssoOrg();
      const email = `unverified@${domain}`;
      idp.setAccount('unverified', { email, email_verified: false });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'unverified');
      const response = await browser.request(callbackUrl);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('E-mail address not verified');
      expect((await me(browser)).status).toBe(401);
      expect(await userCount(email)).toBe(0);
    });

    it('refuses an address outside the allowed domains: nothing is created', async () => {
      const { org } = await ssoOrg();
      const email = `outsider-${randomUUID().slice(0, 6)}@elsewhere.test`;
      idp.setAccount('outsider', { email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'outsider');
      const response = await browser.request(callbackUrl);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('E-mail domain not allowed');
      expect(await userCount(email)).toBe(0);
    });

    it('refuses a new member when every seat is taken, with a clear page and nothing created', async () => {
      const { org, domain } = await ssoOrg();
      // Enterprise has 50 seats: the owner and 49 pending invites take them all.
      await t.sql(
        `INSERT INTO invites (organization_id, email, role, token_hash, expires_at)
         SELECT $1, 'seat-' || n || '@elsewhere.test', 'member', md5(random()::text || n), now() + interval '1 day'
           FROM generate_series(1, 49) AS n`,
        [org.id],
      );
      const email = `late@${domain}`;
      idp.setAccount('late', { email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'late');
      const response = await browser.request(callbackUrl);
      expect(response.status).toBe(403);
      const page = await response.text();
      expect(page).toContain('No seat available');
      expect(page).toContain('All 50 seats');
      expect(await userCount(email)).toBe(0);
      expect((await me(browser)).status).toBe(401);
    });

    it('shows a page, not a redirect, for an organization without a connection', async () => {
      const org = await createOrg(t, { tier: 'enterprise' });
      const response = await new TestBrowser().request(`${baseUrl}/api/v1/auth/sso/start?org=${org.slug}`);
      expect(response.status).toBe(404);
      expect(await response.text()).toContain('Single sign-on is not available');
    });
  });

  describe('enforcement', () => {
    let org: TestOrg;
    let owner: TestUser;
    let member: TestUser;
    let domain: string;

    beforeAll(async () => {
      ({ org, owner, domain } = await ssoOrg({ enforce: true }));
      member = await createUser(t, { org, role: 'admin', email: `enforced@${domain}` });
    });

    it('refuses password sign-in to a member with 403 sso_required and a hint', async () => {
      const { browser, response } = await passwordBrowser(member.email);
      expect(response.status).toBe(403);
      const body = (await response.json()) as { code: string; hint: string; ssoStartUrl: string };
      expect(body.code).toBe('sso_required');
      expect(body.hint).toContain('/api/v1/auth/sso/discover');
      expect(body.ssoStartUrl).toBe(`/api/v1/auth/sso/start?org=${org.slug}`);
      expect((await me(browser)).status).toBe(401);
      // A wrong password still says only that: the refusal is for those who know the password.
      const wrong = await passwordBrowser(member.email, 'not-the-password');
      expect(wrong.response.status).toBe(401);
    });

    it('lets the Owner sign in with a password (break-glass)', async () => {
      const { browser, response } = await passwordBrowser(owner.email);
      expect(response.status).toBe(200);
      expect((await me(browser)).body.user).toMatchObject({ id: owner.id, role: 'owner' });
    });

    it("keeps members' personal API keys working", async () => {
      const key = await createApiKey(t, org, ['org:read'], { type: 'gpat', createdBy: member.id });
      const response = await fetch(`${baseUrl}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
    });

    it('lets the member in through SSO (linking the account with its password the first time)', async () => {
      idp.setAccount('enforced', { email: member.email, email_verified: true });
      const browser = new TestBrowser();
      const { callbackUrl } = await throughProvider(browser, org, 'enforced');
      expect((await confirmLink(browser, await browser.request(callbackUrl))).status).toBe(303);
      expect((await me(browser)).body.user).toMatchObject({ id: member.id, role: 'admin' });
    });

    it('stops applying when the organization leaves Enterprise', async () => {
      const downgraded = await ssoOrg({ enforce: true });
      const user = await createUser(t, { org: downgraded.org, role: 'member' });
      expect((await passwordBrowser(user.email)).response.status).toBe(403);
      await t.sql(`UPDATE organizations SET service_tier = 'professional' WHERE id = $1`, [downgraded.org.id]);
      expect((await passwordBrowser(user.email)).response.status).toBe(200);
    });
  });

  describe('the device-login page', () => {
    it('offers "Sign in with SSO" and comes back to the approval card', async () => {
      const { org, domain } = await ssoOrg();
      const email = `cli@${domain}`;
      idp.setAccount('cli-user', { email, email_verified: true });
      const created = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions`, { method: 'POST' })).json()) as {
        session_id: string;
        verification_url: string;
      };
      const browser = new TestBrowser();
      const page = await (await browser.request(created.verification_url)).text();
      expect(page).toContain('action="/device/sso"');
      expect(page).toContain('Sign in with SSO');

      const unknown = await browser.request(`${baseUrl}/device/sso`, {
        form: { session_id: created.session_id, sso_email: 'x@unconnected.test' },
        origin: baseUrl,
      });
      expect(unknown.status).toBe(404);
      expect(await unknown.text()).toContain('not set up for addresses at unconnected.test');

      const posted = await browser.request(`${baseUrl}/device/sso`, {
        form: { session_id: created.session_id, sso_email: email },
        origin: baseUrl,
      });
      expect(posted.status).toBe(200);
      const continuePage = await posted.text();
      const startPath = /<a id="continue" href="([^"]+)">/.exec(continuePage)![1].replaceAll('&amp;', '&');
      expect(continuePage).toContain(`<meta http-equiv="refresh" content="0;url=`);
      // The continue page's own navigation: same-origin.
      const start = await browser.request(`${baseUrl}${startPath}`, { site: 'same-origin' });
      const callbackUrl = await authorizeAtProvider(browser, TestBrowser.location(start, baseUrl), 'cli-user');
      const callback = await browser.request(callbackUrl);
      expect(callback.status).toBe(303);
      expect(callback.headers.get('location')).toBe(`${baseUrl}/device?session_id=${created.session_id}`);
      const card = await (await browser.request(TestBrowser.location(callback, baseUrl))).text();
      expect(card).toContain(`id="organization">${org.name}`);
      expect(card).toContain(`id="email">${email}`);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(card)![1];
      const approved = await browser.request(`${baseUrl}/device/approve`, {
        form: { session_id: created.session_id, csrf_token: csrf },
        origin: baseUrl,
      });
      expect(approved.status).toBe(200);
      const poll = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions/${created.session_id}`)).json()) as {
        status: string;
        email: string;
      };
      expect(poll).toMatchObject({ status: 'active', email });
    });

    it('shows sso_required on the page to an enforced member signing in with a password', async () => {
      const { org, domain } = await ssoOrg({ enforce: true });
      const member = await createUser(t, { org, role: 'member', email: `pw@${domain}` });
      const created = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions`, { method: 'POST' })).json()) as {
        session_id: string;
      };
      const response = await new TestBrowser().request(`${baseUrl}/device/login`, {
        form: { session_id: created.session_id, email: member.email, password: 'correct-horse-battery' },
        origin: baseUrl,
      });
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('requires single sign-on');
    });
  });
});

describe('single sign-on behind the SSRF guard', () => {
  it('refuses a loopback issuer when private networks are not allowed, as for webhooks', async () => {
    const { t, baseUrl } = await startListeningApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    const idp = await startIdentityProvider({ redirectUri: `${baseUrl}/api/v1/auth/sso/callback` });
    try {
      const org = await createOrg(t, { tier: 'enterprise' });
      const owner = await createUser(t, { org });
      const browser = new TestBrowser();
      const login = await browser.request(`${baseUrl}/api/v1/auth/login`, {
        json: { email: owner.email, password: 'correct-horse-battery' },
      });
      expect(login.status).toBe(200);
      for (const issuer of [idp.issuer, idp.issuer.replace('http:', 'https:')]) {
        const response = await browser.request(`${baseUrl}/api/v1/org/sso`, {
          method: 'PUT',
          json: {
            issuer,
            clientId: idp.clientId,
            clientSecret: idp.clientSecret,
            allowedDomains: ['guarded.test'],
            defaultRole: 'member',
            enforce: false,
          },
          origin: baseUrl,
        });
        expect(response.status).toBe(400);
        expect(((await response.json()) as { error: string }).error).toContain('publicly reachable host');
      }
    } finally {
      await idp.close();
      await t.close();
    }
  });
});
