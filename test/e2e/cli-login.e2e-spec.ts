import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExpiredCredentialsJob } from '../../src/auth/expired-credentials.job.js';
import { CLI_SESSION_RETENTION_DAYS } from '../../src/auth/cli-login/cli-sessions.service.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { createApiKey, createUser, orgWithMember, signIn, type TestOrg, type TestUser } from '../factories/identity.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SESSIONS = '/api/v1/auth/cli/sessions';

interface PollResult {
  status: string;
  api_key: string | null;
  email: string | null;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

describe('command-line sign-in sessions (/api/v1/auth/cli/sessions)', () => {
  let t: TestApp;
  let org: TestOrg;
  let user: TestUser;
  let browser: HttpClient;

  beforeAll(async () => {
    t = await startTestApp();
    ({ org, user, agent: browser } = await orgWithMember(t, { tier: 'professional', role: 'owner' }));
  });
  afterAll(async () => {
    await t.close();
  });

  async function newSession(): Promise<string> {
    const response = await t.http().post(SESSIONS).expect(201);
    return response.body.session_id as string;
  }

  async function poll(sessionId: string): Promise<PollResult> {
    const response = await t.http().get(`${SESSIONS}/${sessionId}`).expect(200);
    return response.body as PollResult;
  }

  async function expire(sessionId: string): Promise<void> {
    await t.sql(`UPDATE cli_sessions SET expires_at = now() - interval '1 minute' WHERE id_hash = $1`, [
      sha256(sessionId),
    ]);
    const rows = await t.sql(`SELECT 1 FROM cli_sessions WHERE id_hash = $1 AND expires_at < now()`, [
      sha256(sessionId),
    ]);
    expect(rows).toHaveLength(1);
  }

  it('creates a session without authentication: a UUID, a verification URL and a 600 s lifetime', async () => {
    const response = await t.http().post(SESSIONS).expect(201);
    expect(response.body).toEqual({
      session_id: expect.stringMatching(UUID),
      user_code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/),
      verification_url: expect.any(String),
      expires_in: 600,
    });
    const url = new URL(response.body.verification_url as string);
    expect(url.origin).toBe(new URL(t.config.baseUrl).origin);
    expect(response.body.verification_url).toContain(response.body.session_id);

    const [row] = await t.sql<{ status: string; seconds: number }>(
      `SELECT status, extract(epoch FROM expires_at - now())::int AS seconds FROM cli_sessions WHERE id_hash = $1`,
      [sha256(response.body.session_id as string)],
    );
    expect(row.status).toBe('pending');
    expect(row.seconds).toBeGreaterThan(590);
    expect(row.seconds).toBeLessThanOrEqual(600);
  });

  it('gives every new session a different id', async () => {
    const ids = new Set(await Promise.all([newSession(), newSession(), newSession()]));
    expect(ids.size).toBe(3);
  });

  it('polls a new session as pending, with no key and no email', async () => {
    const sessionId = await newSession();
    expect(await poll(sessionId)).toEqual({ status: 'pending', api_key: null, email: null });
    expect(await poll(sessionId)).toEqual({ status: 'pending', api_key: null, email: null });
  });

  it('refuses approval without a session (401) or with an API key (401), and the session stays pending', async () => {
    const sessionId = await newSession();
    const anonymous = await t.http().post(`${SESSIONS}/${sessionId}/approve`).expect(401);
    expect(anonymous.body).toMatchObject({ code: 'unauthorized', requestId: anonymous.headers['x-request-id'] });
    const apiKey = await createApiKey(t, org, ['org:read'], { createdBy: user.id });
    await t.http().post(`${SESSIONS}/${sessionId}/approve`).set('Authorization', `Bearer ${apiKey}`).expect(401);
    await t.http().post(`${SESSIONS}/${sessionId}/deny`).expect(401);
    expect(await poll(sessionId)).toEqual({ status: 'pending', api_key: null, email: null });
  });

  it('after approval by a signed-in user, the first poll returns a gpat_ key and the email once', async () => {
    const sessionId = await newSession();
    const approved = await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(200);
    expect(approved.body).toEqual({ status: 'approved' });

    const first = await poll(sessionId);
    expect(first).toEqual({
      status: 'active',
      api_key: expect.stringMatching(/^gpat_[A-Za-z0-9_-]{32,}$/),
      email: user.email,
    });

    const second = await poll(sessionId);
    expect(second).toEqual({ status: 'active', api_key: null, email: user.email });

    const identity = await t.http().get('/api/v1/auth/me').set('Authorization', `Bearer ${first.api_key}`).expect(200);
    expect(identity.body).toEqual({ email: user.email, apiKeyPrefix: expect.stringMatching(/^gpat_/) });
    expect((first.api_key as string).startsWith(identity.body.apiKeyPrefix as string)).toBe(true);

    const keys = await t.sql<{ organization_id: string; created_by: string; key_type: string; key_hash: string }>(
      `SELECT k.organization_id, k.created_by, k.key_type, k.key_hash
         FROM cli_sessions s JOIN api_keys k ON k.id = s.api_key_id WHERE s.id_hash = $1`,
      [sha256(sessionId)],
    );
    expect(keys).toEqual([
      { organization_id: org.id, created_by: user.id, key_type: 'gpat', key_hash: sha256(first.api_key as string) },
    ]);
  });

  it('records the approval in the audit log of the organization', async () => {
    const before = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_logs WHERE organization_id = $1 AND action = 'cli_session.approved'`,
      [org.id],
    );
    const sessionId = await newSession();
    await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(200);
    const after = await t.sql<{ n: number; actor: string }>(
      `SELECT count(*)::int AS n, max(actor_user_id::text) AS actor FROM audit_logs WHERE organization_id = $1 AND action = 'cli_session.approved'`,
      [org.id],
    );
    expect(after[0].n).toBe(before[0].n + 1);
    expect(after[0].actor).toBe(user.id);
  });

  it('hands the key to exactly one of several simultaneous first polls', async () => {
    const sessionId = await newSession();
    await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(200);
    const results = await Promise.all(Array.from({ length: 5 }, () => poll(sessionId)));
    expect(results.every((result) => result.status === 'active' && result.email === user.email)).toBe(true);
    expect(results.filter((result) => result.api_key !== null)).toHaveLength(1);
    const minted = await t.sql(
      `SELECT 1 FROM api_keys k JOIN cli_sessions s ON s.api_key_id = k.id WHERE s.id_hash = $1`,
      [sha256(sessionId)],
    );
    expect(minted).toHaveLength(1);
  });

  it('gives a Viewer a read-only key and an Owner write scopes too', async () => {
    const viewer = await createUser(t, { org, role: 'viewer' });
    const viewerBrowser = await signIn(t, viewer.email);
    const viewerSession = await newSession();
    await viewerBrowser.post(`${SESSIONS}/${viewerSession}/approve`).expect(200);
    const viewerPoll = await poll(viewerSession);
    expect(viewerPoll.email).toBe(viewer.email);
    const [viewerKey] = await t.sql<{ scopes: string[] }>(`SELECT scopes FROM api_keys WHERE key_hash = $1`, [
      sha256(viewerPoll.api_key as string),
    ]);
    expect([...viewerKey.scopes].sort()).toEqual([
      'apps:read',
      'claims:read',
      'feedback:read',
      'flags:read',
      'org:read',
      'release_notes:read',
    ]);

    const ownerSession = await newSession();
    await browser.post(`${SESSIONS}/${ownerSession}/approve`).expect(200);
    const ownerPoll = await poll(ownerSession);
    const [ownerKey] = await t.sql<{ scopes: string[] }>(`SELECT scopes FROM api_keys WHERE key_hash = $1`, [
      sha256(ownerPoll.api_key as string),
    ]);
    expect(ownerKey.scopes).toEqual(
      expect.arrayContaining(['org:read', 'feedback:manage', 'release_notes:write', 'flags:write', 'claims:write']),
    );
    // admin:team is Enterprise only; this organization is on Business.
    expect(ownerKey.scopes).not.toContain('admin:team');
  });

  it('answers 409 when a session is approved a second time, before or after the key was fetched', async () => {
    const sessionId = await newSession();
    await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(200);
    const again = await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(409);
    expect(again.body).toMatchObject({ code: 'conflict', requestId: again.headers['x-request-id'] });
    const first = await poll(sessionId);
    expect(first.api_key).toMatch(/^gpat_/);
    await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(409);
    await browser.post(`${SESSIONS}/${sessionId}/deny`).expect(409);
    expect(await poll(sessionId)).toEqual({ status: 'active', api_key: null, email: user.email });
  });

  it('polls an expired session as expired and refuses to approve it (410)', async () => {
    const sessionId = await newSession();
    await expire(sessionId);
    expect(await poll(sessionId)).toEqual({ status: 'expired', api_key: null, email: null });
    const response = await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(410);
    expect(response.body).toMatchObject({ code: 'gone', requestId: response.headers['x-request-id'] });
    expect(await poll(sessionId)).toEqual({ status: 'expired', api_key: null, email: null });
  });

  it('mints no key for a session approved in time but first polled after it expired', async () => {
    const sessionId = await newSession();
    await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(200);
    await expire(sessionId);
    expect(await poll(sessionId)).toEqual({ status: 'expired', api_key: null, email: null });
    const minted = await t.sql<{ api_key_id: string | null }>(
      `SELECT api_key_id FROM cli_sessions WHERE id_hash = $1`,
      [sha256(sessionId)],
    );
    expect(minted).toEqual([{ api_key_id: null }]);
  });

  it('polls a denied session as expired, and it can no longer be approved', async () => {
    const sessionId = await newSession();
    const denied = await browser.post(`${SESSIONS}/${sessionId}/deny`).expect(200);
    expect(denied.body).toEqual({ status: 'denied' });
    expect(await poll(sessionId)).toEqual({ status: 'expired', api_key: null, email: null });
    await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(409);
    expect(await poll(sessionId)).toEqual({ status: 'expired', api_key: null, email: null });
  });

  it('still polls an expired session as expired after the cleanup job ran, until its retention ends', async () => {
    const job = t.app.get(ExpiredCredentialsJob);
    const pending = await newSession();
    const denied = await newSession();
    await browser.post(`${SESSIONS}/${denied}/deny`).expect(200);
    // Both expired two days ago: past the day an e-mail link is kept, well within the retention.
    await t.sql(`UPDATE cli_sessions SET expires_at = now() - interval '2 days' WHERE id_hash = ANY($1)`, [
      [sha256(pending), sha256(denied)],
    ]);
    await job.run();
    expect(await poll(pending)).toEqual({ status: 'expired', api_key: null, email: null });
    expect(await poll(denied)).toEqual({ status: 'expired', api_key: null, email: null });
    await browser.post(`${SESSIONS}/${pending}/approve`).expect(410);

    // The retention over, the job forgets them, and only then is the id unknown. (Their expiry
    // moves back rather than the job's clock forward, which would end this file's browser session.)
    const expiredDaysAgo = async (days: number) => {
      await t.sql(`UPDATE cli_sessions SET expires_at = now() - make_interval(days => $2) WHERE id_hash = ANY($1)`, [
        [sha256(pending), sha256(denied)],
        days,
      ]);
      await job.run();
    };
    await expiredDaysAgo(CLI_SESSION_RETENTION_DAYS - 1);
    expect(await poll(pending)).toEqual({ status: 'expired', api_key: null, email: null });
    await expiredDaysAgo(CLI_SESSION_RETENTION_DAYS + 1);
    await t.http().get(`${SESSIONS}/${pending}`).expect(404);
    await t.http().get(`${SESSIONS}/${denied}`).expect(404);
  });

  it('answers 400 naming the parameter for a non-UUID session id', async () => {
    const pollResponse = await t.http().get(`${SESSIONS}/not-a-uuid`).expect(400);
    expect(pollResponse.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining('sessionId') });
    const approve = await browser.post(`${SESSIONS}/not-a-uuid/approve`).expect(400);
    expect(approve.body.code).toBe('bad_request');
  });

  it('answers 404 for an unknown session id, on poll and on approve', async () => {
    const unknown = randomUUID();
    const pollResponse = await t.http().get(`${SESSIONS}/${unknown}`).expect(404);
    expect(pollResponse.body).toMatchObject({ code: 'not_found', requestId: pollResponse.headers['x-request-id'] });
    await browser.post(`${SESSIONS}/${unknown}/approve`).expect(404);
    await browser.post(`${SESSIONS}/${unknown}/deny`).expect(404);
  });

  it('stores only a hash of the session id, never the id itself', async () => {
    const sessionId = await newSession();
    await browser.post(`${SESSIONS}/${sessionId}/approve`).expect(200);
    const { api_key: apiKey } = await poll(sessionId);
    expect(apiKey).toMatch(/^gpat_/);
    const columns = await t.sql<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'cli_sessions' AND table_schema = current_schema()`,
    );
    const names = columns.map((column) => column.column_name);
    expect(names).toContain('id_hash');
    expect(names).not.toContain('id');
    expect(names).not.toContain('session_id');

    const rows = await t.sql<{ id_hash: string; row: string }>(
      `SELECT id_hash, row_to_json(s)::text AS row FROM cli_sessions s`,
    );
    expect(rows.map((row) => row.id_hash)).toContain(sha256(sessionId));
    for (const { row } of rows) {
      expect(row).not.toContain(sessionId);
      expect(row).not.toContain(apiKey);
    }
  });
});
