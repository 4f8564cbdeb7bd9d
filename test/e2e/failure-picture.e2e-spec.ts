import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiKey } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { appAttestAuthority, type FabricatedDevice } from '../support/app-attest-fabricator.js';
import { sampleValue } from '../support/prometheus-text.js';
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

const dayOf = (date: Date) => date.toISOString().slice(0, 10);

describe('the failure picture: attestation failures by code over time', () => {
  let app: RegisteredApp;
  let other: RegisteredApp;
  let device: FabricatedDevice;

  async function refresh(target: RegisteredApp, fabricated: FabricatedDevice, counter: number) {
    const challenge = (await sdk(t, target).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
    const assertion = fabricated.assert({ challenge, counter, teamId: TEAM_ID, bundleId: target.bundleId });
    return sdk(t, target).post('/api/v1/attestation/refresh').send({ keyId: fabricated.keyId, assertion, challenge });
  }

  beforeAll(async () => {
    app = await registerApp(t, 'professional');
    other = await registerApp(t, 'professional');
    ({ device } = await attestDevice(t, app));
    expect((await refresh(app, device, 1)).status).toBe(200);
    // A replayed counter, twice: counted against the device.
    for (let i = 0; i < 2; i++) {
      const replay = await refresh(app, device, 1);
      expect(replay.body.code).toBe('counter_not_increasing');
    }
    // An attestation sent with another key's id: counted against the key id it named.
    const stranger = (await appAttestAuthority()).createDevice();
    const challenge = (await sdk(t, app).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
    const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId: app.bundleId });
    const mismatch = await sdk(t, app)
      .post('/api/v1/attestation/validate')
      .send({ keyId: stranger.keyId, attestationObject, challenge });
    expect(mismatch.body.code).toBe('key_id_mismatch');
    // A stale challenge says nothing about the device: not counted.
    const stale = await sdk(t, app)
      .post('/api/v1/attestation/validate')
      .send({ keyId: device.keyId, attestationObject, challenge });
    expect(stale.body.code).toBe('challenge_invalid');
    // Two days ago, for the device; and another app's failure.
    await t.sql(
      `INSERT INTO device_events (organization_id, app_id, key_id, event_type, result, error_code, created_at)
       VALUES ($1, $2, $3, 'attestation', 'failure', 'nonce_mismatch', now() - interval '2 days')`,
      [app.org.id, app.id, device.keyId],
    );
    const { device: otherDevice } = await attestDevice(t, other);
    await refresh(other, otherDevice, 1);
    expect((await refresh(other, otherDevice, 1)).body.code).toBe('counter_not_increasing');
  });

  it('app usage shows the failures by code and by day', async () => {
    const usage = await app.owner.get(`/api/v1/apps/${app.id}/usage`).expect(200);
    expect(usage.body.failuresByCode).toEqual([
      { code: 'counter_not_increasing', count: 2, lastSeen: expect.any(String) },
      { code: 'key_id_mismatch', count: 1, lastSeen: expect.any(String) },
      { code: 'nonce_mismatch', count: 1, lastSeen: expect.any(String) },
    ]);
    const now = new Date();
    expect(usage.body.dailyFailures).toEqual([
      { date: dayOf(now), total: 3, byCode: { counter_not_increasing: 2, key_id_mismatch: 1 } },
      { date: dayOf(new Date(now.getTime() - 2 * 86_400_000)), total: 1, byCode: { nonce_mismatch: 1 } },
    ]);
    const lastDay = await app.owner.get(`/api/v1/apps/${app.id}/usage?days=1`).expect(200);
    expect(lastDay.body.dailyFailures).toHaveLength(1);
    expect(lastDay.body.failuresByCode.map((entry: { code: string }) => entry.code)).not.toContain('nonce_mismatch');
  });

  it('device details show the device’s own failures by code and by day', async () => {
    const key = await createApiKey(t, app.org, ['org:read']);
    const path = `/api/v1/analytics/devices/${encodeURIComponent(device.keyId)}`;
    const details = await t.http().get(path).set('X-API-Key', key).expect(200);
    expect(details.body.failuresByCode).toEqual([
      { code: 'counter_not_increasing', count: 2, lastSeen: expect.any(String) },
      { code: 'nonce_mismatch', count: 1, lastSeen: expect.any(String) },
    ]);
    expect(details.body.dailyFailures.map((day: { total: number }) => day.total)).toEqual([2, 1]);
    const recent = await t.http().get(`${path}?days=1`).set('X-API-Key', key).expect(200);
    expect(recent.body.dailyFailures).toEqual([
      { date: dayOf(new Date()), total: 2, byCode: { counter_not_increasing: 2 } },
    ]);
    await t.http().get(`${path}?days=0`).set('X-API-Key', key).expect(422);
  });

  it('/metrics counts them by app and code', async () => {
    const text = (await t.http().get('/metrics').expect(200)).text;
    const failures = (appId: string, code: string) =>
      sampleValue(text, 'attestly_attestation_failures_total', { app_id: appId, code });
    expect(failures(app.id, 'counter_not_increasing')).toBe(2);
    expect(failures(app.id, 'key_id_mismatch')).toBe(1);
    expect(failures(app.id, 'challenge_invalid')).toBeUndefined();
    expect(failures(other.id, 'counter_not_increasing')).toBe(1);
  });
});
