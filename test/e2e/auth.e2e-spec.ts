import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import {
  PASSWORD,
  createApiKey,
  createOrg,
  createUser,
  orgWithMember,
  randomClientIp,
  signIn,
  uniqueEmail,
} from '../factories/identity.js';
import { afterAnswers, sentMails, startTestApp, type TestApp } from '../harness/test-app.js';

function tokenFrom(link: string): string {
  return new URL(link).searchParams.get('token')!;
}

function sessionCookie(response: { headers: Record<string, unknown> }): string | undefined {
  const cookies = (response.headers['set-cookie'] as string[] | undefined) ?? [];
  return cookies.find((cookie) => cookie.startsWith('attestly.sid='))?.split(';')[0];
}

describe('dashboard authentication', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('sign-up and e-mail verification', () => {
    it('registers an inactive owner of a new Free organization, activated by the mailed link', async () => {
      const email = uniqueEmail('signup');
      const response = await t
        .http()
        .post('/api/v1/auth/register')
        .send({ email, password: 'long-enough-1', organizationName: 'Signup Co' })
        .expect(202);
      expect(response.body.message).toEqual(expect.any(String));
      // The account is made after the answer, so the answer takes as long for a taken address.
      await afterAnswers(t);

      const login = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email, password: 'long-enough-1' })
        .expect(403);
      expect(login.body.code).toBe('email_unverified');

      await waitFor(() => sentMails(t, email).length === 1);
      const [mail] = sentMails(t, email);
      expect(mail.subject).toMatch(/confirm/i);
      const link = mail.links.find((l) => l.includes('/api/v1/auth/verify-email'))!;
      const browser = t.agent();
      const verified = await browser.get(new URL(link).pathname + new URL(link).search).expect(200);
      expect(verified.body.user).toMatchObject({ email, role: 'owner', isActive: true });
      expect(verified.body.organization).toMatchObject({ name: 'Signup Co', slug: 'signup-co', serviceTier: 'free' });
      expect(verified.body.entitlements).toMatchObject({ tier: 'free', tierDisplay: 'Free' });
      await browser.get('/api/v1/auth/me').expect(200);

      const again = await t
        .http()
        .get(`/api/v1/auth/verify-email?token=${tokenFrom(link)}`)
        .expect(422);
      expect(again.body.code).toBe('unprocessable_entity');
    });

    it('answers an already registered address exactly like a new one and creates nothing', async () => {
      const org = await createOrg(t);
      const user = await createUser(t, { org });
      const response = await t
        .http()
        .post('/api/v1/auth/register')
        .send({ email: user.email.toUpperCase(), password: 'long-enough-1', organizationName: 'Dup' })
        .expect(202);
      const fresh = await t
        .http()
        .post('/api/v1/auth/register')
        .send({ email: uniqueEmail(), password: 'long-enough-1', organizationName: 'Dup' })
        .expect(202);
      expect(response.body).toEqual(fresh.body);
      const users = await t.sql(`SELECT 1 FROM users WHERE lower(email) = lower($1)`, [user.email]);
      expect(users).toHaveLength(1);
      await waitFor(() => sentMails(t, user.email).length === 1);
      const [notice] = sentMails(t, user.email);
      expect(notice.subject).toMatch(/tried to sign up/i);
      // The dashboard's sign-in and forgot-password pages (no dashboard origin set: the service's
      // own address), and no token: the notice grants nothing.
      expect(notice.links).toEqual([`${t.config.baseUrl}/login`, `${t.config.baseUrl}/forgot-password`]);
    });

    it('names each invalid field with 422', async () => {
      const response = await t
        .http()
        .post('/api/v1/auth/register')
        .send({ email: 'not-an-email', password: 'short', organizationName: '', extra: 1 })
        .expect(422);
      expect(response.body.code).toBe('unprocessable_entity');
      const fields = response.body.fields.map((f: { field: string }) => f.field);
      expect(fields).toEqual(expect.arrayContaining(['email', 'password', 'organizationName', 'extra']));
    });

    it('answers verify-email without a token with 400 and an unknown token with 422', async () => {
      expect((await t.http().get('/api/v1/auth/verify-email').expect(400)).body.code).toBe('bad_request');
      await t.http().get('/api/v1/auth/verify-email?token=nope').expect(422);
    });
  });

  describe('login, sessions and logout', () => {
    it('gives the same 401 for a wrong password and an unknown address', async () => {
      const { user } = await orgWithMember(t);
      const wrong = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email, password: 'wrong-password' })
        .expect(401);
      const unknown = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: uniqueEmail(), password: 'wrong-password' })
        .expect(401);
      expect(wrong.body.error).toBe(unknown.body.error);
      expect(wrong.body.code).toBe('invalid_credentials');
    });

    it.each([
      ['disabled', 'account_disabled'],
      ['suspended', 'account_suspended'],
    ])('refuses a %s account with 403 %s', async (status, code) => {
      const user = await createUser(t, { status });
      const response = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email, password: PASSWORD })
        .expect(403);
      expect(response.body.code).toBe(code);
    });

    it('starts the session in the oldest organization and answers the auth response', async () => {
      const first = await createOrg(t, { tier: 'professional' });
      const second = await createOrg(t);
      const user = await createUser(t, { org: first, role: 'admin' });
      await t.sql(
        `INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, 'viewer', now() + interval '1 second')`,
        [second.id, user.id],
      );
      const response = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email, password: PASSWORD })
        .expect(200);
      expect(response.body.user).toEqual({
        id: user.id,
        email: user.email,
        role: 'admin',
        organizationId: first.id,
        isActive: true,
      });
      expect(response.body.entitlements.limits).toMatchObject({ maxSeats: 10, maxEnvironments: 10 });
      const cookie = (response.headers['set-cookie'] as unknown as string[])[0];
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Lax/);
      const [audit] = await t.sql(`SELECT action FROM audit_logs WHERE organization_id = $1 AND actor_user_id = $2`, [
        first.id,
        user.id,
      ]);
      expect(audit).toEqual({ action: 'user.login' });
    });

    it('issues a new session id at login, so a fixed session cookie is worthless', async () => {
      const { user } = await orgWithMember(t);
      const first = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email, password: PASSWORD })
        .expect(200);
      const fixed = sessionCookie(first)!;
      const second = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .set('Cookie', fixed)
        .send({ email: user.email, password: PASSWORD })
        .expect(200);
      const renewed = sessionCookie(second)!;
      expect(renewed).toBeDefined();
      expect(renewed).not.toBe(fixed);
      await t.http().get('/api/v1/auth/me').set('Cookie', fixed).expect(401);
      await t.http().get('/api/v1/auth/me').set('Cookie', renewed).expect(200);
    });

    it('logout destroys the session', async () => {
      const { agent } = await orgWithMember(t);
      await agent.get('/api/v1/auth/me').expect(200);
      await agent.post('/api/v1/auth/logout').expect(204);
      await agent.get('/api/v1/auth/me').expect(401);
    });

    it('refuses a state-changing cookie request from a foreign Origin', async () => {
      const { agent } = await orgWithMember(t);
      const refused = await agent.post('/api/v1/auth/clear-org').set('Origin', 'https://evil.example').expect(403);
      expect(refused.body.code).toBe('forbidden');
      await agent.post('/api/v1/auth/clear-org').set('Origin', 'http://127.0.0.1:3000').expect(200);
    });

    it('limits failed sign-ins per client address with 429 and rate-limit headers', async () => {
      const ip = '192.0.2.77';
      const attempt = () =>
        t
          .http()
          .post('/api/v1/auth/login')
          .set('X-Forwarded-For', ip)
          .send({ email: uniqueEmail(), password: 'whatever-1' });
      for (let i = 0; i < 30; i++) expect((await attempt()).status).toBe(401);
      const last = await attempt();
      expect(last.status).toBe(429);
      expect(last.body.code).toBe('rate_limited');
      expect(last.body.error).toMatch(/\d+ seconds?/);
      expect(Number(last.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(last.headers['x-ratelimit-limit']).toBe('30');
      expect(last.headers['x-ratelimit-remaining']).toBe('0');
    });
  });

  describe('GET /auth/me', () => {
    it('answers 401 with neither a session nor a key', async () => {
      await t.http().get('/api/v1/auth/me').expect(401);
      await t.http().get('/api/v1/auth/me').set('Authorization', 'Bearer not-a-key').expect(401);
    });

    it('answers a minimal identity for an API key: its creator and its prefix', async () => {
      const org = await createOrg(t);
      const user = await createUser(t, { org });
      const key = await createApiKey(t, org, ['org:read'], { createdBy: user.id });
      const response = await t.http().get('/api/v1/auth/me').set('Authorization', `Bearer ${key}`).expect(200);
      expect(response.body).toEqual({ email: user.email, apiKeyPrefix: key.slice(0, 'service_'.length + 8) });
    });

    it('refuses revoked, expired and unknown keys', async () => {
      const org = await createOrg(t);
      const revoked = await createApiKey(t, org, ['org:read'], { revoked: true });
      const expired = await createApiKey(t, org, ['org:read'], { expiresAt: new Date(Date.now() - 1000) });
      for (const key of [revoked, expired, `service_${'x'.repeat(43)}`]) {
        await t.http().get('/api/v1/auth/me').set('Authorization', `Bearer ${key}`).expect(401);
      }
    });
  });

  describe('password reset', () => {
    it('answers the same message whether or not the account exists, and mails only real accounts', async () => {
      const { user } = await orgWithMember(t);
      const stranger = uniqueEmail('stranger');
      const known = await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email })
        .expect(200);
      const unknown = await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', '198.51.100.1')
        .send({ email: stranger })
        .expect(200);
      expect(known.body).toEqual(unknown.body);
      await waitFor(() => sentMails(t, user.email).length === 1);
      expect(sentMails(t, stranger)).toHaveLength(0);
    });

    it('keeps at most three active reset links per account', async () => {
      const { user } = await orgWithMember(t);
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const response = await t
          .http()
          .post('/api/v1/auth/forgot-password')
          .set('X-Forwarded-For', `198.51.100.${10 + i}`)
          .send({ email: user.email });
        statuses.push(response.status);
      }
      // The fourth request for the address within the hour is refused before any link is made.
      expect(statuses).toEqual([200, 200, 200, 429]);
      await afterAnswers(t);
      const [{ count }] = await t.sql<{ count: string }>(
        `SELECT count(*) FROM auth_tokens WHERE user_id = $1 AND purpose = 'reset_password'`,
        [user.id],
      );
      expect(Number(count)).toBe(3);
    });

    it('resets the password once, then invalidates other links and every session', async () => {
      const { user, agent } = await orgWithMember(t);
      await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', '198.51.100.40')
        .send({ email: user.email })
        .expect(200);
      await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', '198.51.100.41')
        .send({ email: user.email })
        .expect(200);
      await waitFor(() => sentMails(t, user.email).length === 2);
      const [first, second] = sentMails(t, user.email).map((mail) => tokenFrom(mail.links[0]));

      const mismatch = await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ token: first, password: 'new-password-1', confirm_password: 'other-password' })
        .expect(400);
      expect(mismatch.body.error).toMatch(/differ/);
      await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ token: first, password: 'short', confirm_password: 'short' })
        .expect(400);
      await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ token: 'bogus', password: 'new-password-1', confirm_password: 'new-password-1' })
        .expect(400);
      await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ token: first })
        .expect(400);

      await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ token: first, password: 'new-password-1', confirm_password: 'new-password-1' })
        .expect(200);
      await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ token: first, password: 'new-password-2', confirm_password: 'new-password-2' })
        .expect(400);
      await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ token: second, password: 'new-password-2', confirm_password: 'new-password-2' })
        .expect(400);

      await agent.get('/api/v1/auth/me').expect(401);
      await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email, password: PASSWORD })
        .expect(401);
      await signIn(t, user.email, 'new-password-1');
    });

    it('stores reset tokens only as hashes', async () => {
      const { user } = await orgWithMember(t);
      await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', '198.51.100.60')
        .send({ email: user.email })
        .expect(200);
      await waitFor(() => sentMails(t, user.email).length === 1);
      const token = tokenFrom(sentMails(t, user.email)[0].links[0]);
      const rows = await t.sql<{ token_hash: string }>(`SELECT token_hash FROM auth_tokens WHERE user_id = $1`, [
        user.id,
      ]);
      expect(rows[0].token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    });
  });

  describe('e-mail change', () => {
    it('needs a session', async () => {
      await t.http().post('/api/v1/auth/change-email').send({ new_email: uniqueEmail() }).expect(401);
    });

    it('mails the new address, keeps the old one until confirmed, then switches', async () => {
      const { user, agent } = await orgWithMember(t);
      const next = uniqueEmail('moved');
      await agent.post('/api/v1/auth/change-email').send({ new_email: next }).expect(200);
      await waitFor(() => sentMails(t, next).length === 1);
      await signIn(t, user.email);

      const token = tokenFrom(sentMails(t, next)[0].links[0]);
      await t.http().post('/api/v1/auth/confirm-email-change').send({ token: 'bogus' }).expect(400);
      const confirmed = await t.http().post('/api/v1/auth/confirm-email-change').send({ token }).expect(200);
      expect(confirmed.body).toEqual({ message: expect.any(String), email: next });
      await t.http().post('/api/v1/auth/confirm-email-change').send({ token }).expect(400);
      await signIn(t, next);
      await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email, password: PASSWORD })
        .expect(401);
    });

    it('answers 409 for an address of another account, also when it is taken meanwhile', async () => {
      const { agent } = await orgWithMember(t);
      const other = await createUser(t);
      const taken = await agent.post('/api/v1/auth/change-email').send({ new_email: other.email }).expect(409);
      expect(taken.body.code).toBe('conflict');

      const wanted = uniqueEmail('race');
      await agent.post('/api/v1/auth/change-email').send({ new_email: wanted }).expect(200);
      await waitFor(() => sentMails(t, wanted).length === 1);
      await createUser(t, { email: wanted });
      await t
        .http()
        .post('/api/v1/auth/confirm-email-change')
        .send({ token: tokenFrom(sentMails(t, wanted)[0].links[0]) })
        .expect(409);
    });

    it('allows at most three pending changes, then 429', async () => {
      const { agent } = await orgWithMember(t);
      for (let i = 0; i < 3; i++)
        await agent.post('/api/v1/auth/change-email').send({ new_email: uniqueEmail() }).expect(200);
      const refused = await agent.post('/api/v1/auth/change-email').send({ new_email: uniqueEmail() }).expect(429);
      expect(refused.body.code).toBe('rate_limited');
      // The oldest pending link expires in an hour: that is the wait, in the header and the sentence.
      const seconds = Number(refused.headers['retry-after']);
      expect(seconds).toBeGreaterThan(3500);
      expect(seconds).toBeLessThanOrEqual(3600);
      expect(refused.body.error).toContain(`Try again in ${seconds} seconds.`);
    });

    it('names an invalid new_email with 422', async () => {
      const { agent } = await orgWithMember(t);
      const response = await agent.post('/api/v1/auth/change-email').send({ new_email: 'nope' }).expect(422);
      expect(response.body.fields).toEqual([{ field: 'new_email', message: 'must be an e-mail address' }]);
    });
  });

  describe('invites', () => {
    async function invite(orgId: string, email: string, overrides: { status?: string; expiresAt?: Date } = {}) {
      const token = `invite-${Math.random().toString(36).slice(2)}`;
      await t.sql(
        `INSERT INTO invites (organization_id, email, role, token_hash, status, expires_at) VALUES ($1, $2, 'member', $3, $4, $5)`,
        [
          orgId,
          email,
          createHash('sha256').update(token).digest('hex'),
          overrides.status ?? 'pending',
          overrides.expiresAt ?? new Date(Date.now() + 86_400_000),
        ],
      );
      return token;
    }

    it('joins the organization once, idempotently for the same user', async () => {
      const org = await createOrg(t, { name: 'Inviting Org' });
      const user = await createUser(t);
      const agent = await signIn(t, user.email);
      const token = await invite(org.id, user.email.toUpperCase());
      const accepted = await agent.post('/api/v1/auth/accept-invite').send({ token }).expect(200);
      expect(accepted.body).toEqual({ orgId: org.id, orgName: 'Inviting Org', orgSlug: org.slug });
      await agent.post('/api/v1/auth/accept-invite').send({ token }).expect(200);
      const memberships = await t.sql(`SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2`, [
        org.id,
        user.id,
      ]);
      expect(memberships).toEqual([{ role: 'member' }]);

      const other = await createUser(t);
      const otherAgent = await signIn(t, other.email);
      await otherAgent.post('/api/v1/auth/accept-invite').send({ token }).expect(404);
    });

    it('answers 403 for another address, 404 for unknown or revoked, 410 for expired, 401 without a session', async () => {
      const org = await createOrg(t);
      const user = await createUser(t);
      const agent = await signIn(t, user.email);
      await agent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await invite(org.id, uniqueEmail()) })
        .expect(403);
      await agent.post('/api/v1/auth/accept-invite').send({ token: 'unknown' }).expect(404);
      await agent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await invite(org.id, user.email, { status: 'revoked' }) })
        .expect(404);
      const expired = await agent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await invite(org.id, user.email, { expiresAt: new Date(Date.now() - 1000) }) })
        .expect(410);
      expect(expired.body.code).toBe('gone');
      await t.http().post('/api/v1/auth/accept-invite').send({ token: 'x' }).expect(401);
    });

    it('creates one membership when the same invite is accepted twice at once', async () => {
      const org = await createOrg(t);
      const user = await createUser(t);
      const agent = await signIn(t, user.email);
      const token = await invite(org.id, user.email);
      const results = await Promise.all([1, 2, 3].map(() => agent.post('/api/v1/auth/accept-invite').send({ token })));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(
        await t.sql(`SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2`, [org.id, user.id]),
      ).toHaveLength(1);
    });
  });

  describe('organizations of a session', () => {
    it('lists the memberships, marks the active one, and switches and clears', async () => {
      const a = await createOrg(t, { name: 'Alpha' });
      const b = await createOrg(t, { name: 'Beta', tier: 'enterprise' });
      const user = await createUser(t, { org: a });
      await t.sql(
        `INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, 'viewer', now() + interval '1 second')`,
        [b.id, user.id],
      );
      const agent = await signIn(t, user.email);
      const orgs = await agent.get('/api/v1/auth/orgs').expect(200);
      expect(orgs.body).toEqual([
        { id: a.id, name: 'Alpha', slug: a.slug, serviceTier: 'free', isActive: true },
        { id: b.id, name: 'Beta', slug: b.slug, serviceTier: 'enterprise', isActive: false },
      ]);

      const switched = await agent.post('/api/v1/auth/switch-org').send({ slug: b.slug }).expect(200);
      expect(switched.body.user).toMatchObject({ role: 'viewer', organizationId: b.id });
      expect(switched.body.entitlements.tierDisplay).toBe('Enterprise');
      expect((await agent.get('/api/v1/auth/me').expect(200)).body.organization.id).toBe(b.id);

      const cleared = await agent.post('/api/v1/auth/clear-org').expect(200);
      expect(cleared.body.organization).toBeNull();
      expect(cleared.body.entitlements).toBeNull();
      expect(cleared.body.user.organizationId).toBeNull();
    });

    it('refuses to switch to an organization the user is not a member of (403) or that does not exist (404)', async () => {
      const { agent } = await orgWithMember(t);
      const foreign = await createOrg(t);
      expect((await agent.post('/api/v1/auth/switch-org').send({ slug: foreign.slug }).expect(403)).body.code).toBe(
        'forbidden',
      );
      await agent.post('/api/v1/auth/switch-org').send({ slug: 'no-such-org' }).expect(404);
    });

    it('lets a super admin see and switch to every organization', async () => {
      const foreign = await createOrg(t, { name: 'Somebody Else' });
      const admin = await createUser(t, { superAdmin: true });
      const agent = await signIn(t, admin.email);
      const orgs = await agent.get('/api/v1/auth/orgs').expect(200);
      expect(orgs.body.map((o: { id: string }) => o.id)).toContain(foreign.id);
      const switched = await agent.post('/api/v1/auth/switch-org').send({ slug: foreign.slug }).expect(200);
      expect(switched.body.organization.id).toBe(foreign.id);
      expect(switched.body.user.role).toBe('owner');
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
