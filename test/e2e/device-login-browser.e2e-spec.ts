import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { PASSWORD, createOrg, createUser } from '../factories/identity.js';
import type { TestApp } from '../harness/test-app.js';
import { browserSuite, launchChromium, newPage, type Browser } from '../support/headless-chromium.js';
import { startListeningApp } from '../support/listening-app.js';

/**
 * The device-login page in a real browser: Debian's Chromium driven by playwright-core (never a
 * downloaded browser). Skipped, saying why, where either is missing; `.ci/run` installs both.
 */
const suite = browserSuite('device-login browser test');

suite('device-login page in headless Chromium', () => {
  let t: TestApp;
  let baseUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    ({ t, baseUrl } = await startListeningApp());
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in, shows the request and approves it: the client then receives its key', async () => {
    const org = await createOrg(t, { name: 'Browser Co' });
    const user = await createUser(t, { org, role: 'member' });
    const created = await fetch(`${baseUrl}/api/v1/auth/cli/sessions`, { method: 'POST' });
    const { session_id: sessionId, verification_url: verificationUrl } = (await created.json()) as {
      session_id: string;
      verification_url: string;
    };
    expect(verificationUrl).toBe(`${baseUrl}/device?session_id=${sessionId}`);

    const page = await newPage(browser);
    const cspViolations: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text()))
        cspViolations.push(message.text());
    });

    await page.goto(verificationUrl);
    expect(await page.textContent('h1')).toBe('Sign in to approve');
    // The nonce-bearing stylesheet applies under the page's CSP.
    expect(await page.evaluate('getComputedStyle(document.querySelector("main")).maxWidth')).toBe('448px');

    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', 'not-the-password');
    await page.click('form[action="/device/login"] button');
    await page.waitForSelector('[role=alert]');
    expect(await page.textContent('[role=alert]')).toBe('Invalid e-mail or password');

    await page.fill('input[name=password]', PASSWORD);
    await page.click('form[action="/device/login"] button');
    await page.waitForSelector('#organization');
    expect(await page.textContent('#organization')).toContain('Browser Co');
    expect(await page.textContent('#email')).toBe(user.email);
    expect(await page.textContent('#expires')).toMatch(/UTC \(in (9|10) minutes\)/);

    await page.click('form[action="/device/approve"] button');
    await page.waitForSelector('[role=status]');
    expect(await page.textContent('h1')).toBe('Command-line sign-in approved');
    expect(await page.textContent('[role=status]')).toContain(`signed in to Browser Co as ${user.email}`);
    expect(cspViolations).toEqual([]);

    const poll = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions/${sessionId}`)).json()) as {
      status: string;
      api_key: string | null;
      email: string | null;
    };
    expect(poll).toEqual({ status: 'active', api_key: expect.stringMatching(/^gpat_/), email: user.email });
    const me = await fetch(`${baseUrl}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${poll.api_key}` } });
    expect(me.status).toBe(200);
  });

  it('denies from the page: no key is ever minted', async () => {
    const org = await createOrg(t);
    const user = await createUser(t, { org });
    const created = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions`, { method: 'POST' })).json()) as {
      session_id: string;
      verification_url: string;
    };
    const page = await newPage(browser);
    await page.goto(created.verification_url);
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('form[action="/device/login"] button');
    await page.waitForSelector('#organization');
    await page.click('form[action="/device/deny"] button');
    await page.waitForSelector('[role=status]');
    expect(await page.textContent('h1')).toBe('Command-line sign-in denied');
    const poll = (await (await fetch(`${baseUrl}/api/v1/auth/cli/sessions/${created.session_id}`)).json()) as {
      status: string;
    };
    expect(poll.status).toBe('expired');
  });
});
