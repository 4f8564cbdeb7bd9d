import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PASSWORD,
  createOrg,
  createUser,
  orgWithMember,
  randomClientIp,
  signIn,
  uniqueEmail,
} from '../factories/identity.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';

const SESSIONS = '/api/v1/auth/cli/sessions';

function csrfTokenOf(html: string): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no csrf_token in the page:\n${html}`);
  return match[1];
}

function sessionCookie(response: { headers: Record<string, unknown> }): string | undefined {
  const cookies = (response.headers['set-cookie'] as string[] | undefined) ?? [];
  return cookies.find((cookie) => cookie.startsWith('attestly.sid='));
}

describe('device-login page (/device)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function newCliSession(): Promise<string> {
    const response = await t.http().post(SESSIONS).expect(201);
    return response.body.session_id as string;
  }

  async function poll(sessionId: string) {
    return (await t.http().get(`${SESSIONS}/${sessionId}`).expect(200)).body as {
      status: string;
      api_key: string | null;
    };
  }

  /** Signs in through the page's own form; the agent then holds the session cookie. */
  function formSignIn(browser: HttpClient, sessionId: string, email: string, password = PASSWORD) {
    return browser
      .post('/device/login')
      .set('X-Forwarded-For', randomClientIp())
      .type('form')
      .send({ session_id: sessionId, email, password });
  }

  async function reviewPage(browser: HttpClient, sessionId: string): Promise<string> {
    const response = await browser.get(`/device?session_id=${sessionId}`).expect(200);
    return response.text;
  }

  it('shows a sign-in form to a signed-out visitor, with a strict CSP and no external resource', async () => {
    const sessionId = await newCliSession();
    const response = await t.http().get(`/device?session_id=${sessionId}`).expect(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = response.headers['content-security-policy'];
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/form-action 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)![1];
    expect(response.text).toContain(`<style nonce="${nonce}">`);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-frame-options']).toBe('DENY');
    // no-referrer would make browsers post the forms with `Origin: null`, which is refused.
    expect(response.headers['referrer-policy']).toBe('same-origin');
    expect(response.text).toContain('action="/device/login"');
    expect(response.text).toContain(`name="session_id" value="${sessionId}"`);
    expect(response.text).not.toMatch(/<script|\ssrc=|href="http/);
    expect(sessionCookie(response)).toBeUndefined();
  });

  it('answers a missing, malformed or unknown session id with a page saying so', async () => {
    expect((await t.http().get('/device').expect(400)).text).toMatch(/incomplete or damaged/);
    expect((await t.http().get('/device?session_id=nope').expect(400)).text).toMatch(/incomplete or damaged/);
    expect((await t.http().get(`/device?session_id=${randomUUID()}`).expect(404)).text).toMatch(/does not exist/);
  });

  it('signs in through the form as POST /api/v1/auth/login does, then shows the request to approve', async () => {
    const { org, user } = await orgWithMember(t, { role: 'viewer' });
    const sessionId = await newCliSession();
    const browser = t.agent();

    const wrong = await formSignIn(browser, sessionId, user.email, 'wrong-password').expect(401);
    expect(wrong.text).toContain('Invalid e-mail or password');
    expect(wrong.text).toContain(`value="${user.email}"`);
    expect(sessionCookie(wrong)).toBeUndefined();

    const signedIn = await formSignIn(browser, sessionId, user.email).expect(303);
    expect(signedIn.headers.location).toBe(`/device?session_id=${sessionId}`);
    expect(sessionCookie(signedIn)).toMatch(/HttpOnly/);
    const [audit] = await t.sql(`SELECT action FROM audit_logs WHERE organization_id = $1 AND actor_user_id = $2`, [
      org.id,
      user.id,
    ]);
    expect(audit).toEqual({ action: 'user.login' });

    const page = await reviewPage(browser, sessionId);
    expect(page).toContain(org.name);
    expect(page).toContain(user.email);
    const [row] = await t.sql<{ expires_at: Date }>(`SELECT expires_at FROM cli_sessions WHERE id_hash = $1`, [
      createHash('sha256').update(sessionId).digest('hex'),
    ]);
    expect(page).toContain(`datetime="${new Date(row.expires_at).toISOString()}"`);
    expect(page).toContain('action="/device/approve"');
    expect(page).toContain('action="/device/deny"');
    // The dashboard API accepts the same session.
    await browser.get('/api/v1/auth/me').expect(200);
  });

  it('shows the user code the CLI printed, to compare before approving', async () => {
    const { agent } = await orgWithMember(t);
    const created = await t.http().post(SESSIONS).expect(201);
    const { session_id: sessionId, user_code: userCode } = created.body as { session_id: string; user_code: string };
    expect(userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const page = await reviewPage(agent, sessionId);
    expect(page).toContain(`id="user-code" class="code">${userCode}</dd>`);
    expect(page).toContain('the terminal shows the same code');
    // Another request gets another code.
    expect((await t.http().post(SESSIONS).expect(201)).body.user_code).not.toBe(userCode);
  });

  it('approves with the form token: the poll then returns a key for the organization', async () => {
    const { org, user, agent } = await orgWithMember(t);
    const sessionId = await newCliSession();
    const token = csrfTokenOf(await reviewPage(agent, sessionId));

    await agent.post('/device/approve').type('form').send({ session_id: sessionId }).expect(403);
    await agent
      .post('/device/approve')
      .type('form')
      .send({ session_id: sessionId, csrf_token: `${token}x` })
      .expect(403);
    expect((await poll(sessionId)).status).toBe('pending');

    const approved = await agent
      .post('/device/approve')
      .type('form')
      .send({ session_id: sessionId, csrf_token: token })
      .expect(200);
    expect(approved.text).toMatch(/approved/i);
    expect(approved.text).toContain(org.name);
    expect(approved.text).toContain(user.email);
    const result = await poll(sessionId);
    expect(result.status).toBe('active');
    expect(result.api_key).toMatch(/^gpat_/);
    const [audit] = await t.sql(
      `SELECT 1 FROM audit_logs WHERE organization_id = $1 AND action = 'cli_session.approved'`,
      [org.id],
    );
    expect(audit).toBeDefined();

    const again = await agent.get(`/device?session_id=${sessionId}`).expect(409);
    expect(again.text).toMatch(/already been approved/);
    const twice = await agent
      .post('/device/approve')
      .type('form')
      .send({ session_id: sessionId, csrf_token: token })
      .expect(409);
    expect(twice.text).toMatch(/already been decided/);
  });

  it('denies: the poll reports the session expired and no key is minted', async () => {
    const { agent } = await orgWithMember(t);
    const sessionId = await newCliSession();
    const token = csrfTokenOf(await reviewPage(agent, sessionId));
    const denied = await agent
      .post('/device/deny')
      .type('form')
      .send({ session_id: sessionId, csrf_token: token })
      .expect(200);
    expect(denied.text).toMatch(/denied/i);
    expect(await poll(sessionId)).toEqual({ status: 'expired', api_key: null, email: null });
  });

  it('refuses an expired request on the page and on approval', async () => {
    const { agent } = await orgWithMember(t);
    const sessionId = await newCliSession();
    const token = csrfTokenOf(await reviewPage(agent, sessionId));
    await t.sql(`UPDATE cli_sessions SET expires_at = now() - interval '1 minute' WHERE id_hash = $1`, [
      createHash('sha256').update(sessionId).digest('hex'),
    ]);
    expect((await agent.get(`/device?session_id=${sessionId}`).expect(410)).text).toMatch(/expired/);
    const late = await agent
      .post('/device/approve')
      .type('form')
      .send({ session_id: sessionId, csrf_token: token })
      .expect(410);
    expect(late.text).toMatch(/expired/);
  });

  it('asks a signed-out caller to sign in instead of approving', async () => {
    const sessionId = await newCliSession();
    const response = await t
      .http()
      .post('/device/approve')
      .type('form')
      .send({ session_id: sessionId, csrf_token: 'x' })
      .expect(401);
    expect(response.text).toContain('action="/device/login"');
    expect((await poll(sessionId)).status).toBe('pending');
  });

  it('refuses forms posted from another site', async () => {
    const { user, agent } = await orgWithMember(t);
    const sessionId = await newCliSession();
    const token = csrfTokenOf(await reviewPage(agent, sessionId));
    await t
      .http()
      .post('/device/login')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send({ session_id: sessionId, email: user.email, password: PASSWORD })
      .expect(403);
    await agent
      .post('/device/approve')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send({ session_id: sessionId, csrf_token: token })
      .expect(403);
    expect((await poll(sessionId)).status).toBe('pending');
    await agent
      .post('/device/approve')
      .set('Origin', new URL(t.config.baseUrl).origin)
      .type('form')
      .send({ session_id: sessionId, csrf_token: token })
      .expect(200);
  });

  it('lets a member of several organizations approve for another one', async () => {
    const first = await createOrg(t, { name: 'First Co' });
    const second = await createOrg(t, { name: 'Second Co' });
    const user = await createUser(t, { org: first, role: 'owner' });
    await t.sql(
      `INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, 'member', now() + interval '1 second')`,
      [second.id, user.id],
    );
    const agent = await signIn(t, user.email);
    const sessionId = await newCliSession();
    const page = await reviewPage(agent, sessionId);
    expect(page).toMatch(/id="organization">First Co/);
    expect(page).toContain('Use Second Co');
    const token = csrfTokenOf(page);

    await agent
      .post('/device/organization')
      .type('form')
      .send({ session_id: sessionId, csrf_token: token, slug: second.slug })
      .expect(303);
    expect(await reviewPage(agent, sessionId)).toMatch(/id="organization">Second Co/);
    await agent.post('/device/approve').type('form').send({ session_id: sessionId, csrf_token: token }).expect(200);
    const [row] = await t.sql(`SELECT organization_id FROM cli_sessions WHERE id_hash = $1`, [
      createHash('sha256').update(sessionId).digest('hex'),
    ]);
    expect(row).toEqual({ organization_id: second.id });

    const stranger = await createOrg(t);
    const refused = await agent
      .post('/device/organization')
      .type('form')
      .send({ session_id: sessionId, csrf_token: token, slug: stranger.slug });
    expect(refused.status).toBe(403);
  });

  it('escapes every value it shows', async () => {
    const org = await createOrg(t, { name: '<script>alert("x")</script> & Co' });
    const user = await createUser(t, { org });
    const agent = await signIn(t, user.email);
    const sessionId = await newCliSession();
    const page = await reviewPage(agent, sessionId);
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Co');
  });

  it('signs out with the form token and shows the sign-in form again', async () => {
    const { agent } = await orgWithMember(t);
    const sessionId = await newCliSession();
    const token = csrfTokenOf(await reviewPage(agent, sessionId));
    await agent.post('/device/logout').type('form').send({ session_id: sessionId, csrf_token: token }).expect(303);
    expect(await reviewPage(agent, sessionId)).toContain('action="/device/login"');
    await agent.get('/api/v1/auth/me').expect(401);
  });

  it('limits failed sign-ins per client address like the login API, answering with the page', async () => {
    const sessionId = await newCliSession();
    const ip = randomClientIp();
    const attempt = () =>
      t
        .http()
        .post('/device/login')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ session_id: sessionId, email: uniqueEmail(), password: 'wrong-password' });
    for (let i = 0; i < 30; i++) expect((await attempt()).status).toBe(401);
    const refused = await attempt();
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.text).toMatch(/Rate limit exceeded/);
  });

  it('lets the browser that signed in before through to a throttled account, through the same gate as the login API', async () => {
    const user = await createUser(t, { org: await createOrg(t) });
    const browser = t.agent();
    // Known from a dashboard sign-in: the device cookie holds for the CLI's page too.
    await browser.post('/api/v1/auth/login').send({ email: user.email, password: PASSWORD }).expect(200);
    const sessionId = await newCliSession();
    const signIn = (client: HttpClient, password: string) =>
      client
        .post('/device/login')
        .set('X-Forwarded-For', randomClientIp())
        .type('form')
        .send({ session_id: sessionId, email: user.email, password });
    for (let i = 0; i < 11; i++) expect((await signIn(t.http(), 'wrong-password')).status).toBe(401);
    const stranger = await signIn(t.http(), PASSWORD);
    expect(stranger.status).toBe(401);
    expect(stranger.text).toMatch(/Invalid e-mail or password/);
    expect((await signIn(browser, PASSWORD)).status).toBe(303);
    // The API answers the same: locked for strangers, open to the known browser.
    await t.http().post('/api/v1/auth/login').send({ email: user.email, password: PASSWORD }).expect(401);
    await browser.post('/api/v1/auth/login').send({ email: user.email, password: PASSWORD }).expect(200);
  });

  it('throttles an account after ten wrong passwords with the wrong-password page, and spends nothing on success', async () => {
    const sessionId = await newCliSession();
    const user = await createUser(t, { org: await createOrg(t) });
    const attempt = (password: string) =>
      t
        .http()
        .post('/device/login')
        .set('X-Forwarded-For', randomClientIp())
        .type('form')
        .send({ session_id: sessionId, email: user.email, password });
    // Successful sign-ins spend nothing: many in a row leave the account's budget whole.
    for (let i = 0; i < 12; i++) expect((await attempt(PASSWORD)).status).toBe(303);
    for (let i = 0; i < 10; i++) expect((await attempt('wrong-password')).status).toBe(401);
    const throttled = await attempt(PASSWORD);
    expect(throttled.status).toBe(401);
    expect(throttled.text).toMatch(/Invalid e-mail or password/);
  });
});
