import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createOrg } from '../factories/identity.js';
import type { TestApp } from '../harness/test-app.js';
import { browserSuite, launchChromium, newPage, type Browser, type Page } from '../support/headless-chromium.js';
import { startListeningApp } from '../support/listening-app.js';
import { startIdentityProvider, type TestIdentityProvider } from '../support/oidc-provider.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

/**
 * Single sign-on in a real browser, through the OpenID provider's own login and consent forms:
 * Debian's Chromium driven by playwright-core, exactly as the device-login browser test does.
 * Skipped, saying why, where either is missing; `.ci/run` installs both.
 */
const suite = browserSuite('SSO browser test');

suite('single sign-on in headless Chromium', () => {
  let t: TestApp;
  let baseUrl: string;
  let idp: TestIdentityProvider;
  let browser: Browser;

  beforeAll(async () => {
    ({ t, baseUrl } = await startListeningApp());
    idp = await startIdentityProvider({ redirectUri: `${baseUrl}/api/v1/auth/sso/callback` });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await t?.close();
  });

  /** An Enterprise organization connected to the provider through the API, as an Owner would. */
  async function connectedOrg(domain: string) {
    const org = await createOrg(t, { tier: 'enterprise', name: `Browser SSO ${domain}` });
    await t.sql(
      `INSERT INTO users (email, password_hash, status, email_verified_at) VALUES ($1, 'x', 'active', now())`,
      [`owner@${domain}`],
    );
    await t.sql(
      `INSERT INTO memberships (organization_id, user_id, role)
       SELECT $1, id, 'owner' FROM users WHERE email = $2`,
      [org.id, `owner@${domain}`],
    );
    const { SsoConnectionsService } = await import('../../src/auth/sso/sso-connections.service.js');
    const [owner] = await t.sql<{ id: string }>(`SELECT id FROM users WHERE email = $1`, [`owner@${domain}`]);
    await t.app.get(SsoConnectionsService).put(
      {
        caller: { kind: 'session', userId: owner.id, email: `owner@${domain}`, isSuperAdmin: false, role: 'owner' },
        organizationId: trustOrganizationId(org.id),
        ipAddress: null,
      },
      {
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        allowedDomains: [domain],
        defaultRole: 'member',
        enforce: false,
      },
    );
    // The DNS proof of the domain is the e2e SSO suite's subject (test/e2e/sso.e2e-spec.ts); here it is given.
    await t.sql(`UPDATE sso_domains SET verified_at = now(), checked_at = now() WHERE organization_id = $1`, [org.id]);
    return org;
  }

  /** The provider's own pages: its login form (any password for a known login), then consent. */
  async function signInAtProvider(page: Page, login: string): Promise<void> {
    await page.waitForSelector('input[name=login]');
    expect(page.url().startsWith(`${idp.url}/interaction/`)).toBe(true);
    await page.fill('input[name=login]', login);
    await page.fill('input[name=password]', 'whatever-the-provider-asks');
    await page.click('button[type=submit]');
    await page.waitForSelector('button:has-text("Continue")');
    await page.click('button[type=submit]');
  }

  it('signs in through the provider and lands on the dashboard signed in', async () => {
    const org = await connectedOrg('browser-a.test');
    idp.setAccount('lin', { email: 'lin@browser-a.test', email_verified: true });
    const page = await newPage(browser);
    const discovered = (await (
      await fetch(`${baseUrl}/api/v1/auth/sso/discover`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'lin@browser-a.test' }),
      })
    ).json()) as { startUrl: string };
    await page.goto(discovered.startUrl);
    await signInAtProvider(page, 'lin');
    await page.waitForURL(`${baseUrl}/`);

    await page.goto(`${baseUrl}/api/v1/auth/me`);
    const me = JSON.parse((await page.textContent('body')) ?? '{}') as {
      user: { email: string; role: string };
      organization: { slug: string };
    };
    expect(me.user).toMatchObject({ email: 'lin@browser-a.test', role: 'member' });
    expect(me.organization.slug).toBe(org.slug);
  });

  it('signs the CLI in with SSO from the device-login page and returns to the approval card', async () => {
    const org = await connectedOrg('browser-b.test');
    idp.setAccount('mo', { email: 'mo@browser-b.test', email_verified: true });
    const created = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions`, { method: 'POST' })).json()) as {
      session_id: string;
      verification_url: string;
    };
    const page = await newPage(browser);
    await page.goto(created.verification_url);
    await page.fill('input[name=sso_email]', 'mo@browser-b.test');
    await page.click('form[action="/device/sso"] button');
    await signInAtProvider(page, 'mo');
    await page.waitForSelector('#organization');
    expect(page.url()).toBe(created.verification_url);
    expect(await page.textContent('#organization')).toContain(org.name);
    expect(await page.textContent('#email')).toBe('mo@browser-b.test');
    await page.click('form[action="/device/approve"] button');
    await page.waitForSelector('[role=status]');
    expect(await page.textContent('h1')).toBe('Command-line sign-in approved');
    const poll = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions/${created.session_id}`)).json()) as {
      status: string;
      api_key: string | null;
    };
    expect(poll.status).toBe('active');
    expect(poll.api_key).toMatch(/^gpat_/);
  });
});
