import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { createUser, signIn } from '../factories/identity.js';
import { createWebhookEndpoint } from '../factories/webhooks.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

const t: TestApp = await startTestApp();

afterAll(async () => {
  await t.close();
});

const tokensOf = (app: RegisteredApp) => `/api/v1/apps/${app.id}/debug-tokens`;

async function createDebugToken(app: RegisteredApp, body: Record<string, unknown> = { name: 'CI' }) {
  const response = await app.owner.post(tokensOf(app)).send(body);
  expect(response.status).toBe(201);
  return response.body as { id: string; token: string; prefix: string; name: string; expiresAt: string | null };
}

async function claimsOf(token: string) {
  const jwks = (await t.http().get('/.well-known/jwks.json').expect(200)).body as JSONWebKeySet;
  return (await jwtVerify(token, createLocalJWKSet(jwks))).payload;
}

describe('debug tokens', () => {
  let app: RegisteredApp;

  beforeAll(async () => {
    app = await registerApp(t, 'professional');
  });

  it('shows the secret once, lists tokens without it, and audits creation', async () => {
    const created = await createDebugToken(app, { name: '  Simulator  ' });
    expect(created.token).toMatch(/^dbg_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({ name: 'Simulator', prefix: created.token.slice(0, 12), expiresAt: null });

    const listed = await app.owner.get(tokensOf(app)).expect(200);
    const entry = (listed.body as Record<string, unknown>[]).find((token) => token.id === created.id)!;
    expect(Object.keys(entry).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'prefix']);
    expect(JSON.stringify(listed.body)).not.toContain(created.token);
    const [stored] = await t.sql<{ token_hash: string }>(`SELECT token_hash FROM debug_tokens WHERE id = $1`, [
      created.id,
    ]);
    expect(stored.token_hash).not.toContain(created.token.slice(4));

    const audit = await app.owner.get('/api/v1/org/audit-log').expect(200);
    expect(audit.body.items).toContainEqual(
      expect.objectContaining({ action: 'debug_token.created', resourceType: 'debug_token', resourceId: created.id }),
    );
  });

  it('is for Admins and Owners of the app’s organization only', async () => {
    const member = await createUser(t, { org: app.org, role: 'member' });
    const memberAgent = await signIn(t, member.email);
    await memberAgent.get(tokensOf(app)).expect(403);
    await memberAgent.post(tokensOf(app)).send({ name: 'x' }).expect(403);

    const stranger = await registerApp(t, 'professional');
    const foreign = await stranger.owner.post(tokensOf(app)).send({ name: 'x' });
    expect(foreign.status).toBe(404);
    await stranger.owner.get(tokensOf(app)).expect(404);
    const mine = await createDebugToken(app);
    await stranger.owner.delete(`${tokensOf(stranger)}/${mine.id}`).expect(404);
    await stranger.owner.delete(`${tokensOf(app)}/${mine.id}`).expect(404);
  });

  it('refuses bad input with the field named', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 'x', expiresAt: 'tomorrow' },
      { name: 'x', expiresAt: new Date(Date.now() - 1000).toISOString() },
      { name: 'x', expiresAt: new Date(Date.now() + 400 * 86_400_000).toISOString() },
    ]) {
      const response = await app.owner.post(tokensOf(app)).send(body);
      expect(response.status).toBe(422);
      expect(response.body.fields.length).toBeGreaterThan(0);
    }
    await app.owner.post('/api/v1/apps/not-a-uuid/debug-tokens').send({ name: 'x' }).expect(400);
    const exchange = await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: 'nope' });
    expect(exchange.status).toBe(422);
    expect(exchange.body.fields[0].field).toBe('debugToken');
  });

  it('mints a device token marked debug, in the attest bucket, and nothing else', async () => {
    const fresh = await registerApp(t, 'professional');
    await createWebhookEndpoint(fresh.owner, 'http://127.0.0.1:9/hook', ['device.new', 'device.attested.first']);
    const { token: secret, id } = await createDebugToken(fresh);
    const response = await sdk(t, fresh)
      .post('/api/v1/attestation/debug')
      .send({ debugToken: secret, deviceId: 'ci-runner-7' });
    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBe('2000');
    expect(response.body).toEqual({
      token: expect.any(String),
      tokenType: 'Bearer',
      expiresAt: expect.any(String),
      riskScore: 0,
    });
    const claims = await claimsOf(response.body.token);
    expect(claims).toMatchObject({
      sub: `debug:${id}:ci-runner-7`,
      env: 'debug',
      debug: true,
      app_id: fresh.id,
      org_id: fresh.org.id,
      aud: fresh.bundleId,
    });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims.limited_use).toBeUndefined();

    // The token opens the SDK routes that take one.
    await sdk(t, fresh).get('/api/v1/flags').set('Authorization', `Bearer ${response.body.token}`).expect(200);

    // No device, no monthly active device, no webhook event; one device event marked debug.
    expect(await t.sql(`SELECT 1 FROM devices WHERE app_id = $1`, [fresh.id])).toHaveLength(0);
    expect(await t.sql(`SELECT 1 FROM mad_devices WHERE organization_id = $1`, [fresh.org.id])).toHaveLength(0);
    const usage = await fresh.owner.get('/api/v1/tenants/me/usage').expect(200);
    expect(usage.body.currentMAD).toBe(0);
    expect(await t.sql(`SELECT 1 FROM webhook_events WHERE organization_id = $1`, [fresh.org.id])).toHaveLength(0);
    const events = await fresh.owner.get(`/api/v1/analytics/events?appId=${fresh.id}`).expect(200);
    expect(events.body.data).toEqual([
      expect.objectContaining({ keyId: `debug:${id}:ci-runner-7`, result: 'success', debug: true }),
    ]);
    const stats = await fresh.owner.get('/api/v1/apps/stats').expect(200);
    expect(stats.body[0]).toMatchObject({ appId: fresh.id, totalAttestations: 0 });
    const listed = await fresh.owner.get(tokensOf(fresh)).expect(200);
    expect(listed.body[0].lastUsedAt).not.toBeNull();
  });

  it('mints a five-minute limited-use token on request, never past the debug token’s own expiry', async () => {
    const { token: secret } = await createDebugToken(app);
    const limited = await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: secret, limitedUse: true });
    expect(limited.status).toBe(200);
    const claims = await claimsOf(limited.body.token);
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(claims.limited_use).toBe(true);

    const soon = new Date(Date.now() + 120_000);
    const { token: shortLived } = await createDebugToken(app, { name: 'two minutes', expiresAt: soon.toISOString() });
    const capped = await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: shortLived });
    expect(capped.status).toBe(200);
    expect((await claimsOf(capped.body.token)).exp).toBeLessThanOrEqual(Math.floor(soon.getTime() / 1000));
  });

  it('answers 401 for another app’s headers, an unknown token and an expired one', async () => {
    const { token: secret, id } = await createDebugToken(app);
    const other = await registerApp(t, 'professional');
    const foreign = await sdk(t, other).post('/api/v1/attestation/debug').send({ debugToken: secret });
    expect(foreign.status).toBe(401);
    expect(foreign.body.code).toBe('debug_token_invalid');

    const unknown = await sdk(t, app)
      .post('/api/v1/attestation/debug')
      .send({ debugToken: `dbg_${'A'.repeat(43)}` });
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('debug_token_invalid');

    await t.sql(`UPDATE debug_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const expired = await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: secret });
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('debug_token_expired');
  });

  it('revoked: refused at once on every instance, and the device tokens it minted stop working', async () => {
    const peer = await t.startPeer();
    const { token: secret, id } = await createDebugToken(app);
    const minted = await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: secret }).expect(200);
    await sdk(peer, app).post('/api/v1/attestation/debug').send({ debugToken: secret }).expect(200);
    const bearer = `Bearer ${minted.body.token as string}`;
    await sdk(t, app).get('/api/v1/flags').set('Authorization', bearer).expect(200);

    await app.owner.delete(`${tokensOf(app)}/${id}`).expect(204);
    for (const instance of [t, peer]) {
      const refused = await sdk(instance, app).post('/api/v1/attestation/debug').send({ debugToken: secret });
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('debug_token_revoked');
    }
    await sdk(t, app).get('/api/v1/flags').set('Authorization', bearer).expect(401);

    // Revoking twice is a no-op, audited once; the token leaves the list.
    await app.owner.delete(`${tokensOf(app)}/${id}`).expect(204);
    const audit = await app.owner.get('/api/v1/org/audit-log').expect(200);
    const revocations = (audit.body.items as { action: string; resourceId: string }[]).filter(
      (entry) => entry.action === 'debug_token.revoked' && entry.resourceId === id,
    );
    expect(revocations).toHaveLength(1);
    const listed = await app.owner.get(tokensOf(app)).expect(200);
    expect((listed.body as { id: string }[]).map((token) => token.id)).not.toContain(id);
  });

  it('is turned off entirely by the app setting debugTokensEnabled', async () => {
    const { token: secret } = await createDebugToken(app);
    const off = await app.owner.put(`/api/v1/apps/${app.id}`).send({ debugTokensEnabled: false }).expect(200);
    expect(off.body.debugTokensEnabled).toBe(false);
    const refused = await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: secret });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('debug_tokens_disabled');
    await app.owner.put(`/api/v1/apps/${app.id}`).send({ debugTokensEnabled: true }).expect(200);
    await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: secret }).expect(200);
  });

  it('holds at most 20 live tokens per app; a revoked or expired one frees its place', async () => {
    const full = await registerApp(t, 'professional');
    const created = await Promise.all(
      Array.from({ length: 22 }, (_, i) => full.owner.post(tokensOf(full)).send({ name: `runner ${i}` })),
    );
    expect(created.filter((response) => response.status === 201)).toHaveLength(20);
    const refused = created.filter((response) => response.status !== 201);
    expect(refused.map((response): [number, string] => [response.status, response.body.code as string])).toEqual([
      [403, 'debug_token_limit_reached'],
      [403, 'debug_token_limit_reached'],
    ]);
    const ids = created.filter((response) => response.status === 201).map((response) => response.body.id as string);
    await full.owner.delete(`${tokensOf(full)}/${ids[0]}`).expect(204);
    await t.sql(`UPDATE debug_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [ids[1]]);
    await createDebugToken(full);
    await createDebugToken(full);
    await full.owner.post(tokensOf(full)).send({ name: 'one too many' }).expect(403);
  });
});
