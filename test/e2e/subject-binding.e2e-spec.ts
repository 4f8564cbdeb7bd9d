// Subject binding: an app can accept `subjectId` only when the tenant's backend signed it, so a
// device cannot claim a paying user's subscription by sending that user's id.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { signSubject } from '../../src/attestation/subject-signature.js';
import { createApiKey } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { appAttestAuthority, type FabricatedDevice } from '../support/app-attest-fabricator.js';
import { fabricatedRootEnv, registerApp, sdk, TEAM_ID, type RegisteredApp } from '../support/sdk-client.js';

describe('subject binding', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  /** An app whose organization has ingested an active Pro entitlement for `user-42`. */
  async function appWithPayingUser(): Promise<RegisteredApp> {
    const app = await registerApp(t, 'professional');
    const key = await createApiKey(t, app.org, ['entitlements:write']);
    await t
      .http()
      .post('/api/v1/entitlements/events')
      .set('Authorization', `Bearer ${key}`)
      .send({
        event_id: `evt_${app.id}`,
        subject_id: 'user-42',
        tier: 'pro',
        status: 'active',
        interval: 'month',
        source: 'app_store',
        product_id: 'pro.monthly',
        expires_at: '2030-01-01T00:00:00.000Z',
        source_subscription_id: '2000000123',
        environment: 'production',
        auto_renew: true,
      })
      .expect(200);
    return app;
  }

  async function challenge(app: RegisteredApp): Promise<string> {
    return (await sdk(t, app).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
  }

  async function validate(app: RegisteredApp, device: FabricatedDevice, extra: Record<string, unknown>) {
    const value = await challenge(app);
    const attestationObject = await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId });
    return sdk(t, app)
      .post('/api/v1/attestation/validate')
      .send({ keyId: device.keyId, attestationObject, challenge: value, ...extra });
  }

  async function refresh(app: RegisteredApp, device: FabricatedDevice, counter: number, extra = {}) {
    const value = await challenge(app);
    const assertion = device.assert({ challenge: value, counter, teamId: TEAM_ID, bundleId: app.bundleId });
    return sdk(t, app)
      .post('/api/v1/attestation/refresh')
      .send({ keyId: device.keyId, assertion, challenge: value, ...extra });
  }

  function subscriptionOf(token: string): Record<string, unknown> {
    const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as {
      subscription: Record<string, unknown>;
    };
    return payload.subscription;
  }

  async function turnOn(app: RegisteredApp): Promise<string> {
    const generated = await app.owner.post(`/api/v1/apps/${app.id}/subject-signing-secret`).expect(200);
    await app.owner.put(`/api/v1/apps/${app.id}`).send({ requireSignedSubject: true }).expect(200);
    return generated.body.subjectSigningSecret as string;
  }

  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

  it('is off by default: an unsigned subjectId gets that subject’s subscription claim', async () => {
    const app = await appWithPayingUser();
    const shown = await app.owner.get(`/api/v1/apps/${app.id}`).expect(200);
    expect(shown.body).toMatchObject({ requireSignedSubject: false, hasSubjectSigningSecret: false });
    const response = await validate(app, (await appAttestAuthority()).createDevice(), { subjectId: 'user-42' });
    expect(response.status).toBe(200);
    expect(subscriptionOf(response.body.token)).toMatchObject({ subject_id: 'user-42', status: 'active', tier: 'pro' });
  });

  it('needs a secret before it can be turned on; the secret is shown once and never again', async () => {
    const app = await appWithPayingUser();
    const refused = await app.owner.put(`/api/v1/apps/${app.id}`).send({ requireSignedSubject: true }).expect(400);
    expect(refused.body.code).toBe('subject_secret_missing');
    const generated = await app.owner.post(`/api/v1/apps/${app.id}/subject-signing-secret`).expect(200);
    expect(generated.body.subjectSigningSecret).toMatch(/^subsec_[A-Za-z0-9_-]{43}$/);
    await app.owner.put(`/api/v1/apps/${app.id}`).send({ requireSignedSubject: true }).expect(200);
    const shown = await app.owner.get(`/api/v1/apps/${app.id}`).expect(200);
    expect(shown.body).toMatchObject({ requireSignedSubject: true, hasSubjectSigningSecret: true });
    expect(JSON.stringify(shown.body)).not.toContain(generated.body.subjectSigningSecret);
    const listed = await app.owner.get('/api/v1/apps').expect(200);
    expect(JSON.stringify(listed.body)).not.toContain(generated.body.subjectSigningSecret);
  });

  it('when on, refuses an unsigned, badly signed or expired subject and admits a signed one with its subscription', async () => {
    const app = await appWithPayingUser();
    const secret = await turnOn(app);
    const authority = await appAttestAuthority();
    const refusal = async (extra: Record<string, unknown>) => {
      const response = await validate(app, authority.createDevice(), extra);
      return [response.status, response.body.code as string];
    };
    const expiresAt = inAnHour();
    expect(await refusal({ subjectId: 'user-42' })).toEqual([401, 'subject_signature_invalid']);
    expect(
      await refusal({
        subjectId: 'user-42',
        subjectExpiresAt: expiresAt,
        subjectSignature: signSubject(secret, app.id, 'user-43', expiresAt),
      }),
    ).toEqual([401, 'subject_signature_invalid']);
    expect(
      await refusal({
        subjectId: 'user-42',
        subjectExpiresAt: expiresAt,
        subjectSignature: signSubject('subsec_another-secret', app.id, 'user-42', expiresAt),
      }),
    ).toEqual([401, 'subject_signature_invalid']);
    const past = Math.floor(Date.now() / 1000) - 1;
    expect(
      await refusal({
        subjectId: 'user-42',
        subjectExpiresAt: past,
        subjectSignature: signSubject(secret, app.id, 'user-42', past),
      }),
    ).toEqual([401, 'subject_signature_invalid']);

    const admitted = await validate(app, authority.createDevice(), {
      subjectId: 'user-42',
      subjectExpiresAt: expiresAt,
      subjectSignature: signSubject(secret, app.id, 'user-42', expiresAt),
    });
    expect(admitted.status).toBe(200);
    expect(subscriptionOf(admitted.body.token)).toMatchObject({ subject_id: 'user-42', status: 'active' });
    // Without a subject, a device is simply admitted without a subscription.
    const anonymous = await validate(app, authority.createDevice(), {});
    expect(anonymous.status).toBe(200);
    expect(subscriptionOf(anonymous.body.token)).toEqual({ status: 'none' });
  });

  it('when turned on, no longer trusts a subject a device sent unsigned before', async () => {
    const app = await appWithPayingUser();
    const device = (await appAttestAuthority()).createDevice();
    const before = await validate(app, device, { subjectId: 'user-42' });
    expect(subscriptionOf(before.body.token)).toMatchObject({ status: 'active' });
    await turnOn(app);
    const refreshed = await refresh(app, device, 1);
    expect(refreshed.status).toBe(200);
    expect(subscriptionOf(refreshed.body.token)).toEqual({ status: 'none' });
  });

  it('records a subject change on refresh as a device event, and no event when the subject stays', async () => {
    const app = await appWithPayingUser();
    const secret = await turnOn(app);
    const device = (await appAttestAuthority()).createDevice();
    const signed = (subjectId: string) => {
      const expiresAt = inAnHour();
      return {
        subjectId,
        subjectExpiresAt: expiresAt,
        subjectSignature: signSubject(secret, app.id, subjectId, expiresAt),
      };
    };
    expect((await validate(app, device, signed('user-42'))).status).toBe(200);
    expect((await refresh(app, device, 1, signed('user-42'))).status).toBe(200);
    const changed = await refresh(app, device, 2, signed('user-77'));
    expect(changed.status).toBe(200);
    expect(subscriptionOf(changed.body.token)).toEqual({ status: 'none' });
    const events = await t.sql<{ event_type: string; result: string }>(
      `SELECT event_type, result FROM device_events WHERE key_id = $1 ORDER BY created_at, event_type`,
      [device.keyId],
    );
    expect(events.map((event) => event.event_type)).toEqual([
      'attestation',
      'assertion',
      'assertion',
      'subject_changed',
    ]);
    const listed = await app.owner.get(`/api/v1/analytics/events?type=subject_changed`).expect(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ keyId: device.keyId, type: 'subject_changed' })]);
  });
});
