import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { eventually } from '../support/webhook-receiver.js';
import {
  createApiKey,
  createOrg,
  createUser,
  orgWithMember,
  signIn,
  uniqueEmail,
  type TestOrg,
  type TestUser,
} from '../factories/identity.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEYS = '/api/v1/org/api-keys';

interface KeyRecord {
  id: string;
  name: string;
  type: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  key?: string;
}

describe('API key management (/api/v1/org/api-keys)', () => {
  let t: TestApp;
  let org: TestOrg;
  let owner: TestUser;
  let ownerAgent: HttpClient;

  beforeAll(async () => {
    t = await startTestApp();
    ({ org, user: owner, agent: ownerAgent } = await orgWithMember(t, { tier: 'professional', role: 'owner' }));
  });
  afterAll(async () => {
    await t.close();
  });

  async function createKey(
    body: Record<string, unknown>,
    agent: HttpClient = ownerAgent,
  ): Promise<KeyRecord & { key: string }> {
    const response = await agent.post(KEYS).send(body);
    expect(response.status).toBe(201);
    return response.body as KeyRecord & { key: string };
  }

  function me(key: string) {
    return t.http().get('/api/v1/auth/me').set('Authorization', `Bearer ${key}`);
  }

  async function list(agent: HttpClient = ownerAgent): Promise<KeyRecord[]> {
    const response = await agent.get(KEYS).expect(200);
    return response.body as KeyRecord[];
  }

  it('creates a key for an Owner and shows it once, with its prefix, scopes, name and dates', async () => {
    const created = await createKey({ name: 'CI pipeline', scopes: ['org:read', 'feedback:read'] });
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'CI pipeline',
      type: 'service',
      prefix: expect.any(String),
      scopes: ['org:read', 'feedback:read'],
      createdAt: expect.any(String),
      lastUsedAt: null,
      expiresAt: null,
      key: expect.stringMatching(/^service_[A-Za-z0-9_-]{32,64}$/),
    });
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);
    expect(Date.now() - new Date(created.createdAt).getTime()).toBeLessThan(60_000);
    // The prefix is the type prefix plus the first characters of the secret, never the whole key.
    expect(created.prefix).toMatch(/^service_[A-Za-z0-9_-]+$/);
    expect(created.prefix.length).toBeGreaterThan('service_'.length);
    expect(created.prefix.length).toBeLessThan(created.key.length);
    expect(created.key.startsWith(created.prefix)).toBe(true);

    const identity = await me(created.key).expect(200);
    expect(identity.body).toEqual({ email: owner.email, apiKeyPrefix: created.prefix });
  });

  it('issues a key of the requested type with a future expiry, and echoes that expiry', async () => {
    const expiresAt = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString();
    const created = await createKey({ name: 'CLI token', scopes: ['release_notes:read'], type: 'gpat', expiresAt });
    expect(created.type).toBe('gpat');
    expect(created.key).toMatch(/^gpat_/);
    expect(created.prefix).toMatch(/^gpat_.+/);
    expect(created.expiresAt).toBe(expiresAt);
    await me(created.key).expect(200);
  });

  it('lets an Admin (not only the Owner) create and list keys', async () => {
    const admin = await createUser(t, { org, role: 'admin' });
    const adminAgent = await signIn(t, admin.email);
    const created = await createKey({ name: 'admin key', scopes: ['org:read'] }, adminAgent);
    expect((await list(adminAgent)).map((k) => k.id)).toContain(created.id);
  });

  it('lists the organization keys without the key text, without the hash and without revoked keys', async () => {
    const kept = await createKey({ name: 'kept', scopes: ['org:read'] });
    const revoked = await createKey({ name: 'revoked', scopes: ['org:read'] });
    await ownerAgent.delete(`${KEYS}/${revoked.id}`).expect(204);

    const keys = await list();
    const ids = keys.map((k) => k.id);
    expect(ids).toContain(kept.id);
    expect(ids).not.toContain(revoked.id);
    const listed = keys.find((k) => k.id === kept.id);
    expect(listed).toEqual({
      id: kept.id,
      name: 'kept',
      type: 'service',
      prefix: kept.prefix,
      scopes: ['org:read'],
      createdAt: kept.createdAt,
      lastUsedAt: null,
      expiresAt: null,
    });
    for (const record of keys) {
      expect(record).not.toHaveProperty('key');
      expect(Object.keys(record).some((name) => /hash/i.test(name))).toBe(false);
    }
    const text = JSON.stringify(keys);
    expect(text).not.toContain(kept.key);
    expect(text).not.toContain(revoked.key);
  });

  it('refuses a Member with 403 on every key route', async () => {
    const target = await createKey({ name: 'target', scopes: ['org:read'] });
    const member = await createUser(t, { org, role: 'member' });
    const memberAgent = await signIn(t, member.email);
    const listing = await memberAgent.get(KEYS).expect(403);
    expect(listing.body).toMatchObject({ code: 'forbidden', requestId: listing.headers['x-request-id'] });
    await memberAgent
      .post(KEYS)
      .send({ name: 'x', scopes: ['org:read'] })
      .expect(403);
    await memberAgent.post(`${KEYS}/${target.id}/rotate`).expect(403);
    await memberAgent.delete(`${KEYS}/${target.id}`).expect(403);
    await me(target.key).expect(200);
  });

  it('refuses a caller without a session with 401', async () => {
    const target = await createKey({ name: 'target', scopes: ['org:read'] });
    const response = await t.http().get(KEYS).expect(401);
    expect(response.body).toMatchObject({ code: 'unauthorized', requestId: response.headers['x-request-id'] });
    await t
      .http()
      .post(KEYS)
      .send({ name: 'x', scopes: ['org:read'] })
      .expect(401);
    await t.http().post(`${KEYS}/${target.id}/rotate`).expect(401);
    await t.http().delete(`${KEYS}/${target.id}`).expect(401);
    await me(target.key).expect(200);
  });

  it('refuses a Bearer API key with 401 on the key management routes, even with every scope', async () => {
    const target = await createKey({ name: 'target', scopes: ['org:read'] });
    const apiKey = await createApiKey(t, org, ['org:read', 'feedback:read', 'feedback:manage', 'release_notes:write'], {
      createdBy: owner.id,
    });
    const bearer = `Bearer ${apiKey}`;
    const listing = await t.http().get(KEYS).set('Authorization', bearer).expect(401);
    expect(listing.body.code).toBe('unauthorized');
    const created = await t
      .http()
      .post(KEYS)
      .set('Authorization', bearer)
      .send({ name: 'x', scopes: ['org:read'] })
      .expect(401);
    expect(created.body.key).toBeUndefined();
    await t.http().post(`${KEYS}/${target.id}/rotate`).set('Authorization', bearer).expect(401);
    await t.http().delete(`${KEYS}/${target.id}`).set('Authorization', bearer).expect(401);
    await me(target.key).expect(200);
    // The key itself is valid: it is the route that refuses keys.
    await me(apiKey).expect(200);
  });

  it('answers 422 naming scopes for an unknown scope, and creates nothing', async () => {
    const before = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1`, [
      org.id,
    ]);
    const response = await ownerAgent
      .post(KEYS)
      .send({ name: 'bad', scopes: ['org:read', 'org:destroy'] })
      .expect(422);
    expect(response.body).toMatchObject({
      code: 'unprocessable_entity',
      requestId: response.headers['x-request-id'],
      fields: [{ field: 'scopes', message: expect.stringContaining('org:read') }],
    });
    const after = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys WHERE organization_id = $1`, [
      org.id,
    ]);
    expect(after[0].n).toBe(before[0].n);
  });

  it('answers 422 naming scopes when scopes are missing or empty', async () => {
    for (const body of [{ name: 'no scopes' }, { name: 'empty scopes', scopes: [] }]) {
      const response = await ownerAgent.post(KEYS).send(body).expect(422);
      expect(response.body.fields).toEqual([expect.objectContaining({ field: 'scopes' })]);
    }
  });

  it('answers 422 naming name when the name is missing', async () => {
    const response = await ownerAgent
      .post(KEYS)
      .send({ scopes: ['org:read'] })
      .expect(422);
    expect(response.body.code).toBe('unprocessable_entity');
    expect(response.body.fields).toEqual([expect.objectContaining({ field: 'name' })]);
  });

  it('answers 422 on unknown body fields, naming them', async () => {
    const response = await ownerAgent
      .post(KEYS)
      .send({ name: 'sneaky', scopes: ['org:read'], organizationId: '00000000-0000-4000-8000-000000000000' })
      .expect(422);
    expect(response.body.fields).toEqual([expect.objectContaining({ field: 'organizationId' })]);
  });

  it('answers 422 naming expiresAt when it is in the past or not a timestamp', async () => {
    const past = await ownerAgent
      .post(KEYS)
      .send({ name: 'stale', scopes: ['org:read'], expiresAt: new Date(Date.now() - 60_000).toISOString() })
      .expect(422);
    expect(past.body.fields).toEqual([expect.objectContaining({ field: 'expiresAt' })]);
    const garbage = await ownerAgent
      .post(KEYS)
      .send({ name: 'stale', scopes: ['org:read'], expiresAt: 'tomorrow' })
      .expect(422);
    expect(garbage.body.fields).toEqual([expect.objectContaining({ field: 'expiresAt' })]);
  });

  it('answers 422 naming type for an unknown key type', async () => {
    const response = await ownerAgent
      .post(KEYS)
      .send({ name: 'odd', scopes: ['org:read'], type: 'root' })
      .expect(422);
    expect(response.body.fields).toEqual([expect.objectContaining({ field: 'type' })]);
  });

  it('refuses the admin:team scope with 403 below Enterprise and grants it on Enterprise', async () => {
    const refused = await ownerAgent
      .post(KEYS)
      .send({ name: 'team', scopes: ['org:read', 'admin:team'] })
      .expect(403);
    expect(refused.body).toMatchObject({ code: 'forbidden', error: expect.stringContaining('Enterprise') });
    const leaked = await t.sql(`SELECT 1 FROM api_keys WHERE organization_id = $1 AND 'admin:team' = ANY(scopes)`, [
      org.id,
    ]);
    expect(leaked).toHaveLength(0);

    const enterprise = await orgWithMember(t, { tier: 'enterprise', role: 'admin' });
    const response = await enterprise.agent
      .post(KEYS)
      .send({ name: 'team', scopes: ['admin:team'] })
      .expect(201);
    expect(response.body.scopes).toEqual(['admin:team']);
    await me(response.body.key as string).expect(200);
  });

  it('rotates a key: a new key for the same record, the old key stops working at once', async () => {
    const original = await createKey({ name: 'rotating', scopes: ['org:read'] });
    await me(original.key).expect(200);

    const response = await ownerAgent.post(`${KEYS}/${original.id}/rotate`).expect(200);
    const rotated = response.body as KeyRecord & { key: string };
    expect(rotated).toMatchObject({ id: original.id, name: 'rotating', scopes: ['org:read'], type: 'service' });
    expect(rotated.key).toMatch(/^service_/);
    expect(rotated.key).not.toBe(original.key);
    expect(rotated.key.startsWith(rotated.prefix)).toBe(true);

    const old = await me(original.key).expect(401);
    expect(old.body.code).toBe('unauthorized');
    const fresh = await me(rotated.key).expect(200);
    expect(fresh.body).toEqual({ email: owner.email, apiKeyPrefix: rotated.prefix });

    const listed = (await list()).find((k) => k.id === original.id);
    expect(listed?.prefix).toBe(rotated.prefix);
  });

  it('revokes a key with DELETE (204): it then gets 401, and a second DELETE is 404', async () => {
    const created = await createKey({ name: 'doomed', scopes: ['org:read'] });
    await me(created.key).expect(200);
    const response = await ownerAgent.delete(`${KEYS}/${created.id}`).expect(204);
    expect(response.text).toBe('');
    const refused = await me(created.key).expect(401);
    expect(refused.body.code).toBe('unauthorized');
    await ownerAgent.delete(`${KEYS}/${created.id}`).expect(404);
    await ownerAgent.post(`${KEYS}/${created.id}/rotate`).expect(404);
  });

  it('refuses an expired key with 401', async () => {
    const expired = await createApiKey(t, org, ['org:read'], { expiresAt: new Date(Date.now() - 60_000) });
    await me(expired).expect(401);

    // A key that expires while in use stops working at its expiry, even though it was just used.
    const created = await createKey({
      name: 'short-lived',
      scopes: ['org:read'],
      expiresAt: new Date(Date.now() + 1500).toISOString(),
    });
    await me(created.key).expect(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const response = await me(created.key).expect(401);
    expect(response.body.code).toBe('unauthorized');
  });

  it('answers 404 when rotating or deleting a key of another organization, which keeps working', async () => {
    const other = await createOrg(t, { tier: 'professional' });
    const otherOwner = await createUser(t, { org: other, role: 'owner' });
    const otherAgent = await signIn(t, otherOwner.email);
    const foreign = await createKey({ name: 'foreign', scopes: ['org:read'] }, otherAgent);

    const rotate = await ownerAgent.post(`${KEYS}/${foreign.id}/rotate`).expect(404);
    expect(rotate.body.code).toBe('not_found');
    await ownerAgent.delete(`${KEYS}/${foreign.id}`).expect(404);
    expect((await list()).map((k) => k.id)).not.toContain(foreign.id);

    await me(foreign.key).expect(200);
    const [row] = await t.sql<{ revoked_at: Date | null; prefix: string }>(
      `SELECT revoked_at, prefix FROM api_keys WHERE id = $1`,
      [foreign.id],
    );
    expect(row).toEqual({ revoked_at: null, prefix: foreign.prefix });
    expect((await list(otherAgent)).map((k) => k.id)).toContain(foreign.id);
  });

  it('sets lastUsedAt once the key is used', async () => {
    const created = await createKey({ name: 'used', scopes: ['org:read'] });
    expect((await list()).find((k) => k.id === created.id)?.lastUsedAt).toBeNull();
    const before = Date.now();
    await me(created.key).expect(200);

    // The timestamp is written beside the request; give it a moment.
    let lastUsedAt: string | null | undefined = null;
    for (let attempt = 0; attempt < 40 && !lastUsedAt; attempt++) {
      lastUsedAt = (await list()).find((k) => k.id === created.id)?.lastUsedAt;
      if (!lastUsedAt) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(lastUsedAt).toEqual(expect.any(String));
    const usedAt = new Date(lastUsedAt as string).getTime();
    expect(usedAt).toBeGreaterThanOrEqual(before - 5_000);
    expect(usedAt).toBeLessThanOrEqual(Date.now() + 5_000);
  });

  it('records apikey.created, apikey.rotated and apikey.revoked in the audit log of the organization', async () => {
    const created = await createKey({ name: 'audited', scopes: ['org:read'] });
    await ownerAgent.post(`${KEYS}/${created.id}/rotate`).expect(200);
    await ownerAgent.delete(`${KEYS}/${created.id}`).expect(204);
    const rows = await t.sql<{ action: string; organization_id: string; actor_user_id: string; resource_type: string }>(
      `SELECT action, organization_id, actor_user_id, resource_type FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`,
      [created.id],
    );
    expect(rows.map((row) => row.action).sort()).toEqual(['apikey.created', 'apikey.revoked', 'apikey.rotated']);
    for (const row of rows) {
      expect(row).toMatchObject({ organization_id: org.id, actor_user_id: owner.id, resource_type: 'api_key' });
    }
    const text = JSON.stringify(await t.sql(`SELECT * FROM audit_logs WHERE resource_id = $1`, [created.id]));
    expect(text).not.toContain(created.key);
  });

  it('stores only a SHA-256 hash of the key, never the key text', async () => {
    const created = await createKey({ name: 'hashed', scopes: ['org:read'] });
    const rotated = (await ownerAgent.post(`${KEYS}/${created.id}/rotate`).expect(200)).body as { key: string };
    const rows = await t.sql<{ row: string }>(`SELECT row_to_json(k)::text AS row FROM api_keys k`);
    expect(rows.length).toBeGreaterThan(0);
    for (const { row } of rows) {
      expect(row).not.toContain(created.key);
      expect(row).not.toContain(rotated.key);
    }
    const [stored] = await t.sql<{ key_hash: string }>(`SELECT key_hash FROM api_keys WHERE id = $1`, [created.id]);
    expect(stored.key_hash).toBe(createHash('sha256').update(rotated.key).digest('hex'));
  });

  it('answers 400 naming the id for a non-UUID id', async () => {
    const rotate = await ownerAgent.post(`${KEYS}/not-a-uuid/rotate`).expect(400);
    expect(rotate.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining('id') });
    const remove = await ownerAgent.delete(`${KEYS}/12345`).expect(400);
    expect(remove.body.code).toBe('bad_request');
  });
});

describe("personal keys (gpat_) act with their user's current role", () => {
  let t: TestApp;
  let peer: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    peer = await t.startPeer();
  });
  afterAll(async () => {
    await t.close();
  });

  /** An Enterprise organization whose Admin holds a CLI-style key with every write scope. */
  async function adminWithKey() {
    const org = await createOrg(t, { tier: 'enterprise' });
    const owner = await createUser(t, { org, role: 'owner' });
    const admin = await createUser(t, { org, role: 'admin' });
    const key = await createApiKey(
      t,
      org,
      ['org:read', 'apps:read', 'admin:team', 'release_notes:write', 'feedback:manage', 'claims:write', 'flags:write'],
      { type: 'gpat', createdBy: admin.id },
    );
    const asKey = () => ({ Authorization: `Bearer ${key}` });
    return { org, owner, admin, key, asKey };
  }

  it("refuses a demoted Admin's key on its next request, the demotion made on another instance", async () => {
    const { owner, admin, asKey } = await adminWithKey();
    const app = await t.http().get('/api/v1/apps').set(asKey()).expect(200);
    expect(app.body).toEqual([]);
    await t
      .http()
      .post('/api/v1/org/invites')
      .set(asKey())
      .send({ email: uniqueEmail('before') })
      .expect(200);

    // The Owner demotes the Admin through the other instance; this instance's very next request sees it.
    const ownerOnPeer = await signIn(peer, owner.email);
    await ownerOnPeer.patch(`/api/v1/org/members/${admin.id}`).send({ role: 'viewer' }).expect(200);

    const refusals = [
      await t
        .http()
        .post('/api/v1/org/invites')
        .set(asKey())
        .send({ email: uniqueEmail('after') }),
      await t.http().patch(`/api/v1/org/members/${admin.id}`).set(asKey()).send({ role: 'admin' }),
      await t.http().post('/api/v1/org/release-notes').set(asKey()).send({}),
      await t.http().post('/api/v1/org/claims').set(asKey()).send({}),
    ];
    expect(refusals.map((response) => [response.status, (response.body as { code?: string }).code])).toEqual([
      [403, 'forbidden'],
      [403, 'forbidden'],
      [403, 'forbidden'],
      [403, 'forbidden'],
    ]);
    // Reads a Viewer may do still work with the same key.
    await t.http().get('/api/v1/org/members').set(asKey()).expect(200);
    const [member] = await t.sql<{ role: string }>(`SELECT role FROM memberships WHERE user_id = $1`, [admin.id]);
    expect(member.role).toBe('viewer');
  });

  it('forgets a key revoked or rotated on another instance at once, though this instance remembered it', async () => {
    for (const change of ['revoke', 'rotate'] as const) {
      const { owner, org } = await adminWithKey();
      const key = await createApiKey(t, org, ['org:read']);
      const [{ id }] = await t.sql<{ id: string }>(`SELECT id FROM api_keys WHERE key_hash = $1`, [
        createHash('sha256').update(key).digest('hex'),
      ]);
      const asKey = { Authorization: `Bearer ${key}` };
      // Remembered here (a key is otherwise trusted for ten seconds without a query).
      await t.http().get('/api/v1/org/members').set(asKey).expect(200);
      const ownerOnPeer = await signIn(peer, owner.email);
      if (change === 'revoke') await ownerOnPeer.delete(`/api/v1/org/api-keys/${id}`).expect(204);
      else await ownerOnPeer.post(`/api/v1/org/api-keys/${id}/rotate`).expect(200);
      const started = Date.now();
      await eventually(async () => (await t.http().get('/api/v1/org/members').set(asKey)).status === 401, {
        timeoutMs: 3_000,
      });
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });

  it('refuses the key of a removed member or a deactivated user at once (401)', async () => {
    const removed = await adminWithKey();
    await t.http().get('/api/v1/org/members').set(removed.asKey()).expect(200);
    const ownerOnPeer = await signIn(peer, removed.owner.email);
    await ownerOnPeer.delete(`/api/v1/org/members/${removed.admin.id}`).expect(204);
    // Refused however the key is looked at: the user is no longer a member, and the removal also
    // revoked the key, which every instance forgets at once (either answer is a 401).
    const gone = await t.http().get('/api/v1/org/members').set(removed.asKey()).expect(401);
    expect(gone.body.error).toMatch(
      /^(The API key's user is no longer an active member of its organization|The API key is invalid, revoked or expired)$/,
    );

    const disabled = await adminWithKey();
    await t.http().get('/api/v1/apps').set(disabled.asKey()).expect(200);
    await t.sql(`UPDATE users SET status = 'disabled' WHERE id = $1`, [disabled.admin.id]);
    await t.http().get('/api/v1/apps').set(disabled.asKey()).expect(401);
  });

  it('takes organization keys (aat_, service_) on dashboard app and flag routes nowhere', async () => {
    const { org } = await adminWithKey();
    for (const type of ['aat', 'service']) {
      const key = await createApiKey(t, org, ['apps:read', 'flags:read'], { type });
      const refused = await t.http().get('/api/v1/apps').set('Authorization', `Bearer ${key}`).expect(401);
      expect(refused.body.error).toMatch(/Only personal API keys/);
    }
  });
});
