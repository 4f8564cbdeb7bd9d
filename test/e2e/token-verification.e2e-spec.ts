import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt, SignJWT } from 'jose';
import { SigningKeysService } from '../../src/device-tokens/signing-keys.service.js';
import { ConsumedTokensJob } from '../../src/device-tokens/consumed-tokens.job.js';
import { createApiKey } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import {
  attestDevice,
  fabricatedRootEnv,
  registerApp,
  sdk,
  TEAM_ID,
  type RegisteredApp,
} from '../support/sdk-client.js';

const t: TestApp = await startTestApp(await fabricatedRootEnv());

afterAll(async () => {
  await t.close();
});

const VERIFY = '/api/v1/tokens/verify';

describe('backend verification of device tokens', () => {
  let app: RegisteredApp;
  let key: string;

  beforeAll(async () => {
    app = await registerApp(t, 'professional');
    key = await createApiKey(t, app.org, ['tokens:verify']);
  });

  const verify = (body: Record<string, unknown>, instance: TestApp = t, apiKey = key) =>
    instance.http().post(VERIFY).set('Authorization', `Bearer ${apiKey}`).send(body);

  /** A token signed with the service's own current key: what only the service can make. */
  async function signed(claims: Record<string, unknown>, exp: number) {
    const signing = await t.app.get(SigningKeysService).signingKey();
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: signing.kid, typ: 'JWT' })
      .setSubject('some-key')
      .setIssuedAt(exp - 3600)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(signing.privateKey);
  }

  it('accepts a valid token with its claims, counted in the apikey bucket', async () => {
    const { device, token } = await attestDevice(t, app);
    const response = await verify({ token });
    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBe('1000');
    expect(response.body).toEqual({ valid: true, claims: decodeJwt(token) });
    expect(response.body.claims).toMatchObject({ sub: device.keyId, app_id: app.id, org_id: app.org.id });
  });

  it('refuses tampered tokens: a changed claim, a changed signature, garbage', async () => {
    const { token } = await attestDevice(t, app);
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, risk_score: 0, env: 'production', sub: 'x' })).toString(
      'base64url',
    );
    const flipped = `${signature.slice(0, -4)}${signature.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    for (const [tampered, reason] of [
      [`${header}.${forged}.${signature}`, 'invalid_signature'],
      [`${header}.${payload}.${flipped}`, 'invalid_signature'],
      [`${header}.${payload}`, 'malformed'],
      ['not a token', 'malformed'],
    ]) {
      const response = await verify({ token: tampered });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ valid: false, claims: null, reason });
    }
  });

  it('refuses an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await signed({ app_id: app.id, org_id: app.org.id }, now - 1);
    expect((await verify({ token: expired })).body).toEqual({ valid: false, claims: null, reason: 'expired' });
    const fresh = await signed({ app_id: app.id, org_id: app.org.id }, now + 60);
    expect((await verify({ token: fresh })).body.valid).toBe(true);
  });

  it('refuses a token of another organization’s app, whatever the token says', async () => {
    const other = await registerApp(t, 'professional');
    const { token } = await attestDevice(t, other);
    expect((await verify({ token })).body).toEqual({ valid: false, claims: null, reason: 'wrong_organization' });
    // A token naming the caller's organization for an app it does not own.
    const mixed = await signed({ app_id: other.id, org_id: app.org.id }, Math.floor(Date.now() / 1000) + 60);
    expect((await verify({ token: mixed })).body.reason).toBe('wrong_organization');
    // Its own organization's key accepts it.
    const otherKey = await createApiKey(t, other.org, ['tokens:verify']);
    expect((await verify({ token }, t, otherKey)).body.valid).toBe(true);
  });

  it('refuses the token of a blocked device, and of a revoked debug token', async () => {
    const { device, token } = await attestDevice(t, app);
    await app.owner
      .post(`/api/v1/devices/${encodeURIComponent(device.keyId)}/block`)
      .send({ reason: 'stolen' })
      .expect(200);
    expect((await verify({ token })).body).toEqual({ valid: false, claims: null, reason: 'device_blocked' });

    const debug = await app.owner.post(`/api/v1/apps/${app.id}/debug-tokens`).send({ name: 'CI' }).expect(201);
    const minted = await sdk(t, app)
      .post('/api/v1/attestation/debug')
      .send({ debugToken: debug.body.token })
      .expect(200);
    expect((await verify({ token: minted.body.token })).body).toMatchObject({
      valid: true,
      claims: { env: 'debug', debug: true },
    });
    await app.owner.delete(`/api/v1/apps/${app.id}/debug-tokens/${debug.body.id}`).expect(204);
    expect((await verify({ token: minted.body.token })).body.reason).toBe('debug_token_revoked');
  });

  it('consumes a token once across two instances, kept until the token expires', async () => {
    const peer = await t.startPeer();
    const { token } = await attestDevice(t, app);
    const answers = await Promise.all([
      verify({ token, consume: true }),
      verify({ token, consume: true }, peer),
      verify({ token, consume: true }),
      verify({ token, consume: true }, peer),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(answers.filter((answer) => answer.body.valid === true)).toHaveLength(1);
    expect(answers.filter((answer) => answer.body.reason === 'already_used')).toHaveLength(3);
    for (const instance of [t, peer]) {
      expect((await verify({ token }, instance)).body).toEqual({ valid: false, claims: null, reason: 'already_used' });
    }
    const { exp, jti } = decodeJwt(token);
    const [row] = await t.sql<{ expires_at: Date }>(`SELECT expires_at FROM consumed_tokens WHERE jti = $1`, [jti]);
    expect(row.expires_at.getTime()).toBe(exp! * 1000);

    // Forgotten by the hourly job only after the token has expired.
    const job = t.app.get(ConsumedTokensJob);
    await job.run(new Date());
    expect(await t.sql(`SELECT 1 FROM consumed_tokens WHERE jti = $1`, [jti])).toHaveLength(1);
    await job.run(new Date((exp! + 1) * 1000));
    expect(await t.sql(`SELECT 1 FROM consumed_tokens WHERE jti = $1`, [jti])).toHaveLength(0);
  });

  it('mints a five-minute limited-use token on refresh when the SDK asks', async () => {
    const { device } = await attestDevice(t, app);
    const challenge = (await sdk(t, app).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
    const assertion = device.assert({ challenge, counter: 1, teamId: TEAM_ID, bundleId: app.bundleId });
    const refreshed = await sdk(t, app)
      .post('/api/v1/attestation/refresh')
      .send({ keyId: device.keyId, assertion, challenge, limitedUse: true })
      .expect(200);
    const claims = decodeJwt(refreshed.body.token as string);
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(claims.limited_use).toBe(true);
    expect((await verify({ token: refreshed.body.token, consume: true })).body.valid).toBe(true);
    expect((await verify({ token: refreshed.body.token, consume: true })).body.reason).toBe('already_used');
  });

  it('needs an API key with tokens:verify, and a token in the body', async () => {
    const { token } = await attestDevice(t, app);
    const readOnly = await createApiKey(t, app.org, ['org:read']);
    expect((await verify({ token }, t, readOnly)).status).toBe(403);
    expect((await t.http().post(VERIFY).send({ token })).status).toBe(401);
    const missing = await verify({});
    expect(missing.status).toBe(422);
    expect(missing.body.fields[0].field).toBe('token');
    expect((await verify({ token, consume: 'yes' })).status).toBe(422);
  });
});
