// One tenant cannot make every instance's deny set costly (issue 30): debug-token creations and
// revocations are limited per app and per organization, the deny set rereads only what changed
// since its last read (a transaction-id cursor that reads a transaction committed out of order at
// the next pass), and it holds only revoked debug tokens that were exchanged for a device token.
import { afterAll, describe, expect, it } from '@jest/globals';
import { DenySet } from '../../src/devices/deny-set.js';
import type { LimitName } from '../../src/rate-limit/limits.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { expectRateLimited, spendRateLimit } from '../support/rate-limits.js';
import { registerApp, sdk, TEAM_ID, type RegisteredApp } from '../support/sdk-client.js';
import { eventually } from '../support/webhook-receiver.js';

const t: TestApp = await startTestApp();

afterAll(async () => {
  await t.close();
});

const tokensOf = (app: RegisteredApp) => `/api/v1/apps/${app.id}/debug-tokens`;

async function createDebugToken(app: RegisteredApp) {
  const response = await app.owner.post(tokensOf(app)).send({ name: 'CI' });
  expect(response.status).toBe(201);
  return response.body as { id: string; token: string };
}

async function exchange(on: TestApp, app: RegisteredApp, secret: string): Promise<string> {
  const minted = await sdk(on, app).post('/api/v1/attestation/debug').send({ debugToken: secret }).expect(200);
  return minted.body.token as string;
}

/** Spends all of a budget but `left` requests directly in the store, as earlier requests would have. */
const spend = (name: LimitName, subject: string, left: number) => spendRateLimit(t, name, subject, left);

/** A reread that starts after this call (one already under way may have read before the change). */
async function reread(on: TestApp): Promise<void> {
  const denySet = on.app.get(DenySet);
  await denySet.reload();
  await denySet.reload();
}

describe('debug-token limits', () => {
  it('refuses creations of one app beyond its hourly budget with 429 and Retry-After; its other apps and other organizations naming it are not counted against it', async () => {
    const app = await registerApp(t, 'professional');
    const stranger = await registerApp(t, 'free');
    // Another organization naming the app is 404 and spends a budget of its own.
    for (let i = 0; i < 3; i++) await stranger.owner.post(tokensOf(app)).send({ name: 'x' }).expect(404);
    await spend('debug-token-create-app', `${app.org.id}:${app.id}`, 1);
    await createDebugToken(app);
    expectRateLimited(await app.owner.post(tokensOf(app)).send({ name: 'CI' }));
    expect(await t.sql(`SELECT 1 FROM debug_tokens WHERE app_id = $1`, [app.id])).toHaveLength(1);

    const other = await app.owner
      .post('/api/v1/apps')
      .send({ appName: 'Second', bundleId: `${app.bundleId}.second`, teamId: TEAM_ID });
    expect(other.status).toBe(201);
    await app.owner.post(`/api/v1/apps/${other.body.id}/debug-tokens`).send({ name: 'CI' }).expect(201);
  });

  it('refuses creations of one organization beyond its hourly budget, whichever app', async () => {
    const app = await registerApp(t, 'free');
    await spend('debug-token-create-organization', app.org.id, 0);
    expectRateLimited(await app.owner.post(tokensOf(app)).send({ name: 'CI' }));
    expect(await t.sql(`SELECT 1 FROM debug_tokens WHERE app_id = $1`, [app.id])).toHaveLength(0);
  });

  it('refuses revocations of one app beyond its hourly budget with 429 and Retry-After, leaving the token live', async () => {
    const app = await registerApp(t, 'free');
    const first = await createDebugToken(app);
    const second = await createDebugToken(app);
    await spend('debug-token-revoke-app', `${app.org.id}:${app.id}`, 1);
    await app.owner.delete(`${tokensOf(app)}/${first.id}`).expect(204);
    expectRateLimited(await app.owner.delete(`${tokensOf(app)}/${second.id}`));
    const [row] = await t.sql<{ revoked_at: Date | null }>(`SELECT revoked_at FROM debug_tokens WHERE id = $1`, [
      second.id,
    ]);
    expect(row.revoked_at).toBeNull();
  });

  it('refuses revocations of one organization beyond its hourly budget, whichever app', async () => {
    const app = await registerApp(t, 'free');
    const token = await createDebugToken(app);
    await spend('debug-token-revoke-organization', app.org.id, 0);
    expectRateLimited(await app.owner.delete(`${tokensOf(app)}/${token.id}`));
  });
});

describe('the incremental deny set', () => {
  it('denies, after the reread, a debug token revoked on another instance whose notification was lost, and holds no revoked token that was never exchanged', async () => {
    const app = await registerApp(t, 'professional');
    const peer = await t.startPeer();
    const read = (on: TestApp, token: string) =>
      sdk(on, app).get('/api/v1/flags').set('Authorization', `Bearer ${token}`);
    const exchanged = await createDebugToken(app);
    const deviceToken = await exchange(t, app, exchanged.token);
    // The peer has read its deny set whole; what follows reaches it by the incremental reread only.
    await read(peer, deviceToken).expect(200);

    // Revoked as another instance would, its announcement lost.
    await t.sql(`UPDATE debug_tokens SET revoked_at = now() WHERE id = $1`, [exchanged.id]);
    await eventually(async () => (await read(peer, deviceToken)).status === 401, { timeoutMs: 8_000, intervalMs: 250 });
    const refused = await read(peer, deviceToken).expect(401);
    expect(refused.body.error).toBe('The attestation token was minted from a revoked debug token');

    // Never exchanged: revoked through the API, announced to nobody, held by no instance.
    const unused = await createDebugToken(app);
    await app.owner.delete(`${tokensOf(app)}/${unused.id}`).expect(204);
    await Promise.all([reread(t), reread(peer)]);
    for (const instance of [t, peer]) {
      const denySet = instance.app.get(DenySet);
      expect(denySet.holdsRevokedDebugToken(app.id, exchanged.id)).toBe(true);
      expect(denySet.holdsRevokedDebugToken(app.id, unused.id)).toBe(false);
    }
    // And it cannot be exchanged any more, so it never will be.
    const late = await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: unused.token });
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('debug_token_revoked');
  });

  it('reads a revocation whose transaction commits after a later one, at the next reread', async () => {
    const app = await registerApp(t, 'professional');
    const early = await createDebugToken(app);
    const late = await createDebugToken(app);
    await exchange(t, app, early.token);
    await exchange(t, app, late.token);
    const denySet = t.app.get(DenySet);
    await reread(t);

    // The early revocation's transaction starts first and commits last.
    const slow = t.dataSource.createQueryRunner();
    await slow.connect();
    try {
      await slow.startTransaction();
      await slow.query(`UPDATE debug_tokens SET revoked_at = now() WHERE id = $1`, [early.id]);
      await t.sql(`UPDATE debug_tokens SET revoked_at = now() WHERE id = $1`, [late.id]);
      await reread(t);
      expect(denySet.holdsRevokedDebugToken(app.id, late.id)).toBe(true);
      expect(denySet.holdsRevokedDebugToken(app.id, early.id)).toBe(false);
      await slow.commitTransaction();
    } finally {
      await slow.release();
    }
    await reread(t);
    expect(denySet.holdsRevokedDebugToken(app.id, early.id)).toBe(true);
  });

  it('reads a device blocked and then unblocked by hand at the next reread, as changes', async () => {
    const app = await registerApp(t, 'professional');
    const denySet = t.app.get(DenySet);
    await t.sql(
      `INSERT INTO devices (organization_id, app_id, key_id, public_key_pem, environment, is_blocked)
       VALUES ($1, $2, 'hand-made-key', 'none', 'production', true)`,
      [app.org.id, app.id],
    );
    await reread(t);
    expect((await denySet.refusalFor(app.id, 'hand-made-key'))?.message).toBe(
      'The attestation token belongs to a blocked device',
    );
    await t.sql(`UPDATE devices SET is_blocked = false WHERE app_id = $1`, [app.id]);
    await reread(t);
    expect(await denySet.refusalFor(app.id, 'hand-made-key')).toBeNull();
  });
});
