// The claims of docs/security.md that no other test showed: cookie flags behind HTTPS, the Origin
// check with dashboard origins, secrets kept out of logs, tokens stored only as hashes, login
// timing that does not tell known addresses apart, and the SSRF rule applied at connection time.
import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import bcrypt from 'bcrypt';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/common/logging/logger.js';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.js';
import { WebhookOutboxRepository } from '../../src/webhooks/webhook-outbox.repository.js';
import {
  createOrg,
  createUser,
  orgWithMember,
  PASSWORD,
  randomClientIp,
  signIn,
  uniqueEmail,
} from '../factories/identity.js';
import { afterAnswers, sentMails, startTestApp, type TestApp } from '../harness/test-app.js';
import { eventually, startWebhookReceiver } from '../support/webhook-receiver.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

function sessionCookieOf(response: { headers: Record<string, unknown> }): string | undefined {
  const cookies = (response.headers['set-cookie'] as string[] | undefined) ?? [];
  return cookies.find((cookie) => cookie.startsWith('attestly.sid='));
}

describe('security: cookies and the Origin check', () => {
  it('sets the session cookie HttpOnly, SameSite=Lax and Secure behind HTTPS, and checks Origin against BASE_URL', async () => {
    const t = await startTestApp({ BASE_URL: 'https://attestly.example' });
    try {
      const user = await createUser(t, { org: await createOrg(t) });
      const login = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-Proto', 'https')
        .send({ email: user.email, password: PASSWORD })
        .expect(200);
      const cookie = sessionCookieOf(login)!;
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).toMatch(/; SameSite=Lax/);
      const sid = cookie.split(';')[0];
      const post = (origin: string) =>
        t
          .http()
          .post('/api/v1/auth/clear-org')
          .set('X-Forwarded-Proto', 'https')
          .set('Cookie', sid)
          .set('Origin', origin);
      expect((await post('http://attestly.example')).status).toBe(403);
      expect((await post('https://attestly.example.evil.test')).status).toBe(403);
      expect((await post('https://attestly.example')).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('admits DASHBOARD_ORIGINS for cookie requests and CORS with credentials, and no other origin', async () => {
    const t = await startTestApp({ DASHBOARD_ORIGINS: 'https://dashboard.example' });
    try {
      const { agent } = await orgWithMember(t);
      await agent.post('/api/v1/auth/clear-org').set('Origin', 'https://dashboard.example').expect(200);
      const refused = await agent.post('/api/v1/auth/clear-org').set('Origin', 'https://evil.example').expect(403);
      expect(refused.body.code).toBe('forbidden');
      const preflight = await t
        .http()
        .options('/api/v1/auth/clear-org')
        .set('Origin', 'https://dashboard.example')
        .set('Access-Control-Request-Method', 'POST');
      expect(preflight.headers['access-control-allow-origin']).toBe('https://dashboard.example');
      expect(preflight.headers['access-control-allow-credentials']).toBe('true');
      const foreign = await t
        .http()
        .options('/api/v1/auth/clear-org')
        .set('Origin', 'https://evil.example')
        .set('Access-Control-Request-Method', 'POST');
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});

describe('security: login CSRF, JSON-only bodies and security headers', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ DASHBOARD_ORIGINS: 'https://dashboard.example' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a sign-in from a foreign Origin without any cookie, JSON or form, and admits the dashboard', async () => {
    const { user } = await orgWithMember(t);
    const credentials = { email: user.email, password: PASSWORD };
    const foreignJson = await t
      .http()
      .post('/api/v1/auth/login')
      .set('Origin', 'https://evil.example')
      .send(credentials);
    expect([foreignJson.status, foreignJson.body.code]).toEqual([403, 'forbidden']);
    expect(foreignJson.headers['set-cookie']).toBeUndefined();
    const foreignForm = await t
      .http()
      .post('/api/v1/auth/login')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send(credentials);
    // A form never reaches the sign-in: the API takes JSON only.
    expect([foreignForm.status, foreignForm.headers['set-cookie']]).toEqual([415, undefined]);
    await t.http().post('/api/v1/auth/login').set('Origin', 'https://dashboard.example').send(credentials).expect(200);
    // The CLI and scripts send no Origin at all.
    await t.http().post('/api/v1/auth/login').send(credentials).expect(200);
  });

  it('answers a form-encoded or text body on the JSON API with 415, also with a session, and keeps forms for /device', async () => {
    const { user, agent } = await orgWithMember(t);
    const form = await t.http().post('/api/v1/auth/login').type('form').send({ email: user.email, password: PASSWORD });
    expect([form.status, form.body.code]).toEqual([415, 'unsupported_media_type']);
    const text = await agent.put('/api/v1/org/settings').set('Content-Type', 'text/plain').send('name=Evil');
    expect([text.status, text.body.code]).toEqual([415, 'unsupported_media_type']);
    const formWrite = await agent.put('/api/v1/org/settings').type('form').send({ name: 'Evil' });
    expect(formWrite.status).toBe(415);
    await agent.put('/api/v1/org/settings').send({ name: 'Still JSON' }).expect(200);
    // The device-login page's own forms keep working.
    const session = (await t.http().post('/api/v1/auth/cli/sessions').expect(201)).body.session_id as string;
    await t
      .http()
      .post('/device/login')
      .type('form')
      .send({ session_id: session, email: user.email, password: PASSWORD })
      .expect(303);
  });

  it('sends nosniff, frame denial and no-referrer on API answers, /docs and errors; HSTS only on https', async () => {
    for (const path of ['/health', '/api/v1/openapi.json', '/docs', '/api/v1/no-such-route']) {
      const response = await t.http().get(path);
      expect([path, response.headers['x-content-type-options']]).toEqual([path, 'nosniff']);
      expect([path, response.headers['x-frame-options']]).toEqual([path, 'DENY']);
      expect([path, response.headers['referrer-policy']]).toEqual([path, 'no-referrer']);
      expect([path, response.headers['strict-transport-security']]).toEqual([path, undefined]);
    }
    const secure = await startTestApp({ BASE_URL: 'https://attestly.example' });
    try {
      const response = await secure.http().get('/health').expect(200);
      expect(response.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    } finally {
      await secure.close();
    }
  });
});

describe('security: what is stored and what is logged', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  /** The tables and columns where `text` appears verbatim. */
  async function whereStored(text: string): Promise<string[]> {
    const tables = await t.sql<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`,
    );
    const found: string[] = [];
    for (const { name } of tables) {
      const [row] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${name}" x WHERE strpos(to_jsonb(x)::text, $1) > 0`,
        [text],
      );
      if (row.n) found.push(name);
    }
    return found;
  }

  it('stores passwords as bcrypt hashes and every mailed token (verify, reset, invite, e-mail change) only as its SHA-256', async () => {
    const email = uniqueEmail('stored');
    const password = `Plain-${randomUUID()}`;
    await t.http().post('/api/v1/auth/register').send({ email, password, organizationName: 'Stored' }).expect(202);
    await afterAnswers(t);
    const [user] = await t.sql<{ password_hash: string }>(`SELECT password_hash FROM users WHERE email = $1`, [email]);
    expect(user.password_hash).toMatch(/^\$2[ab]\$\d\d\$/);
    expect(await bcrypt.compare(password, user.password_hash)).toBe(true);
    expect(await whereStored(password)).toEqual([]);

    const known = await createUser(t, { org: await createOrg(t) });
    await t
      .http()
      .post('/api/v1/auth/forgot-password')
      .set('X-Forwarded-For', randomClientIp())
      .send({ email: known.email });
    const { agent } = await orgWithMember(t, { tier: 'professional' });
    await agent
      .post('/api/v1/org/invites')
      .send({ email: uniqueEmail('invitee'), role: 'member' })
      .expect(200);
    const knownAgent = await signIn(t, known.email);
    await knownAgent
      .post('/api/v1/auth/change-email')
      .send({ new_email: uniqueEmail('changed') })
      .expect(200);

    // Mail goes out after the answer: wait for one link of each kind.
    const kinds = ['verify-email', 'reset-password', 'accept-invite', 'confirm-email-change'];
    const links = () => sentMails(t).flatMap((mail) => mail.links);
    await eventually(() =>
      kinds.every((kind) => links().some((link) => link.includes(kind) && link.includes('token='))),
    );
    const tokens = links()
      .map((link) => new URL(link).searchParams.get('token'))
      .filter((token): token is string => !!token);
    for (const token of tokens) {
      expect(await whereStored(token)).toEqual([]);
      const hash = createHash('sha256').update(token).digest('hex');
      expect(await whereStored(hash)).not.toEqual([]);
    }
  });

  it('keeps secrets out of the logs when a write that carries them fails', async () => {
    const lines: string[] = [];
    const capture = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    // A second instance on the same database whose logger writes into `lines`.
    const logged = await createApp(t.config, createLogger({ logLevel: 'info' }, capture));
    await logged.init();
    logged.get(SchedulerRegistry).deleteInterval('webhook-sweep');
    const fail = `fail_${randomUUID().replace(/-/g, '')}`;
    const { user: member } = await orgWithMember(t, { tier: 'professional' });
    try {
      await t.sql(
        `CREATE FUNCTION ${fail}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`,
      );
      for (const table of ['users', 'api_keys', 'webhook_endpoints']) {
        await t.sql(
          `CREATE TRIGGER ${fail}_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${fail}()`,
        );
      }
      const http = () => request(logged.getHttpServer());
      // Signed in through the logged instance (the users trigger only refuses new users).
      const login = await http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: member.email, password: PASSWORD })
        .expect(200);
      const sid = sessionCookieOf(login)!.split(';')[0];
      const password = `Secret-${randomUUID()}`;
      // A sign-up is answered 202 before the account is written (timing must not tell whether the
      // address is taken): its failure is logged by the background task's own logger.
      const signUp = await http()
        .post('/api/v1/auth/register')
        .send({ email: uniqueEmail(), password, organizationName: 'Logged' });
      expect(signUp.status).toBe(202);
      await afterAnswers({ app: logged });
      const failures = [
        await http()
          .post('/api/v1/org/api-keys')
          .set('Cookie', sid)
          .send({ name: 'logged', scopes: ['org:read'] }),
        await http()
          .post('/api/v1/org/webhooks')
          .set('Cookie', sid)
          .send({ url: 'http://127.0.0.1:9/hook', events: ['flag.created'] }),
      ];
      expect(failures.map((response) => response.status)).toEqual([500, 500]);
      const text = lines.join('');
      // The failures are logged, with their request ids and the database's message...
      for (const response of failures) expect(text).toContain(response.body.requestId as string);
      expect(text).toContain('injected failure');
      // ...and none of the secrets the failed statements carried, nor the caller's credentials.
      expect(text).not.toContain(password);
      expect(text).not.toMatch(/\$2[ab]\$\d\d\$/);
      expect(text).not.toMatch(/whsec_/);
      expect(text).not.toMatch(/(service|gpat|aat)_[A-Za-z0-9_-]{20,}/);
      expect(text).not.toMatch(/\b[0-9a-f]{64}\b/);
      expect(text).not.toContain(sid.split('=')[1]);
      // And a 500 answers none of it either.
      for (const response of failures)
        expect(Object.keys(response.body).sort()).toEqual(['code', 'error', 'requestId']);
    } finally {
      for (const table of ['users', 'api_keys', 'webhook_endpoints']) {
        await t.sql(`DROP TRIGGER IF EXISTS ${fail}_${table} ON ${table}`);
      }
      await t.sql(`DROP FUNCTION IF EXISTS ${fail}()`);
      await logged.close();
    }
  });
});

describe('security: enumeration', () => {
  it('takes as long to refuse an unknown address as a wrong password for a known one', async () => {
    const t = await startTestApp({ BCRYPT_ROUNDS: '8' });
    try {
      const email = uniqueEmail('timing');
      await t.sql(
        `INSERT INTO users (email, password_hash, status, email_verified_at) VALUES ($1, $2, 'active', now())`,
        [email, await bcrypt.hash(PASSWORD, 8)],
      );
      const time = async (address: string) => {
        const started = performance.now();
        const response = await t
          .http()
          .post('/api/v1/auth/login')
          .set('X-Forwarded-For', randomClientIp())
          .send({ email: address, password: 'wrong-password-1' });
        expect(response.status).toBe(401);
        return { ms: performance.now() - started, body: response.body as Record<string, unknown> };
      };
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 9; i++) {
        const a = await time(email);
        const b = await time(uniqueEmail('nobody'));
        known.push(a.ms);
        unknown.push(b.ms);
        expect({ ...b.body, requestId: null }).toEqual({ ...a.body, requestId: null });
      }
      // Both run one bcrypt comparison of the same cost (~15 ms): without the decoy hash, an
      // unknown address would answer in about a millisecond.
      expect(median(unknown)).toBeGreaterThan(median(known) * 0.4);
      expect(median(unknown)).toBeLessThan(median(known) * 2.5);
    } finally {
      await t.close();
    }
  });
});

describe('security: rate limits on credentials', () => {
  it('limits password reset per client address: forgot-password and reset-password share one budget of 5 a minute', async () => {
    const t = await startTestApp();
    try {
      const ip = randomClientIp();
      const forgot = () =>
        t.http().post('/api/v1/auth/forgot-password').set('X-Forwarded-For', ip).send({ email: uniqueEmail() });
      for (let i = 0; i < 5; i++) await forgot().expect(200);
      const refused = await forgot().expect(429);
      expect(refused.body.code).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      await t
        .http()
        .post('/api/v1/auth/reset-password')
        .set('X-Forwarded-For', ip)
        .send({ token: 'x'.repeat(43), password: 'new-password-1', confirm_password: 'new-password-1' })
        .expect(429);
      // Another address is not affected.
      await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: uniqueEmail() })
        .expect(200);
    } finally {
      await t.close();
    }
  });
});

describe('security: SSRF at connection time', () => {
  it('refuses to deliver a webhook to a loopback address stored before the rule applied', async () => {
    const t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    const receiver = await startWebhookReceiver();
    try {
      t.app.get(SchedulerRegistry).deleteInterval('webhook-sweep');
      const org = await createOrg(t, { tier: 'professional' });
      const port = new URL(receiver.url).port;
      // As if created while private networks were allowed, or a name that now resolves to loopback.
      for (const url of [
        `https://localhost:${port}/hook`,
        `http://127.0.0.1:${port}/hook`,
        `https://127.0.0.1:${port}/hook`,
      ]) {
        await t.sql(
          `INSERT INTO webhook_endpoints (organization_id, url, events, secret, is_active) VALUES ($1, $2, $3, 'whsec_test', true)`,
          [org.id, url, ['flag.created']],
        );
      }
      await t.app
        .get(UnitOfWork)
        .run(() =>
          t.app
            .get(WebhookOutboxRepository)
            .enqueue(trustOrganizationId(org.id), 'flag.created', { flag_id: 'f', flag_key: 'k', app_id: 'a' }),
        );
      const dispatcher = t.app.get(WebhookDispatcher);
      await eventually(
        async () => {
          const rows = await t.sql<{ attempts: number }>(
            `SELECT count(*)::int AS attempts FROM webhook_delivery_attempts WHERE organization_id = $1`,
            [org.id],
          );
          return rows[0].attempts >= 3;
        },
        { step: () => dispatcher.sweep() },
      );
      expect(receiver.received).toHaveLength(0);
      const errors = await t.sql<{ error: string }>(
        `SELECT error FROM webhook_delivery_attempts WHERE organization_id = $1`,
        [org.id],
      );
      for (const { error } of errors) expect(error).toMatch(/https|public/);
    } finally {
      await receiver.close();
      await t.close();
    }
  });
});
