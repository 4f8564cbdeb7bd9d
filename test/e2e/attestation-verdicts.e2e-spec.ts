// Every verdict spends the challenge (docs/security.md): whatever refuses a validate or refresh
// after its challenge was looked up, the challenge is used up and the failure is recorded, with
// its device.attestation_failed webhook in the outbox; a used or forgotten challenge keeps
// answering challenge_expired once it expired; and a failure's score becomes the device's score.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChallengeService } from '../../src/attestation/challenge.service.js';
import { tierDefinition } from '../../src/common/tiers.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import {
  appAttestAuthority,
  type FabricatedAuthority,
  type FabricatedDevice,
} from '../support/app-attest-fabricator.js';
import { TEAM_ID, fabricatedRootEnv, registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';
import { WebhookReceivers } from '../support/webhook-receiver.js';

describe('attestation verdicts', () => {
  let t: TestApp;
  let authority: FabricatedAuthority;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    authority = await appAttestAuthority();
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
    await receivers.closeAll();
  });

  /** An app whose organization listens to device.attestation_failed. */
  async function listeningApp(app: Record<string, unknown> = {}): Promise<RegisteredApp> {
    const registered = await registerApp(t, 'professional', app);
    const receiver = await receivers.start();
    await registered.owner
      .post('/api/v1/org/webhooks')
      .send({ url: receiver.url, events: ['device.attestation_failed'] })
      .expect(201);
    return registered;
  }

  async function challenge(app: RegisteredApp): Promise<string> {
    return (await sdk(t, app).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
  }

  async function validateWith(app: RegisteredApp, device: FabricatedDevice, value: string, extra = {}) {
    const attestationObject = await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId });
    return sdk(t, app)
      .post('/api/v1/attestation/validate')
      .send({ keyId: device.keyId, attestationObject, challenge: value, ...extra });
  }

  async function attest(app: RegisteredApp, device: FabricatedDevice, extra = {}) {
    return validateWith(app, device, await challenge(app), extra);
  }

  async function refreshWith(app: RegisteredApp, device: FabricatedDevice, value: string, counter: number) {
    const assertion = device.assert({ challenge: value, counter, teamId: TEAM_ID, bundleId: app.bundleId });
    return sdk(t, app).post('/api/v1/attestation/refresh').send({ keyId: device.keyId, assertion, challenge: value });
  }

  /** The failure events of the key, and the device.attestation_failed webhooks of the organization naming it. */
  async function recordedFailures(app: RegisteredApp, keyId: string) {
    const events = await t.sql<{ error_code: string }>(
      `SELECT error_code FROM device_events WHERE key_id = $1 AND result = 'failure' ORDER BY created_at`,
      [keyId],
    );
    const webhooks = await t.sql<{ error_code: string }>(
      `SELECT data->>'error_code' AS error_code FROM webhook_events
        WHERE organization_id = $1 AND event_type = 'device.attestation_failed' AND data->>'key_id' = $2
        ORDER BY occurred_at`,
      [app.org.id, keyId],
    );
    return { events: events.map((row) => row.error_code), webhooks: webhooks.map((row) => row.error_code) };
  }

  /** The challenge of a refused attempt no longer admits anything: a new device sent with it is refused as used. */
  async function expectSpent(app: RegisteredApp, value: string): Promise<void> {
    const reuse = await validateWith(app, authority.createDevice(), value);
    expect([reuse.status, reuse.body.code]).toEqual([400, 'challenge_invalid']);
  }

  describe('a refused refresh spends its challenge and records its failure', () => {
    it("refused for the app's maxDeviceAge: the challenge is used up, the failure and its webhook recorded", async () => {
      const app = await listeningApp({ riskThresholds: { maxDeviceAge: 30 } });
      const device = authority.createDevice();
      expect((await attest(app, device)).status).toBe(200);
      await t.sql(`UPDATE devices SET first_seen_at = now() - interval '31 days' WHERE key_id = $1`, [device.keyId]);
      const value = await challenge(app);
      const refused = await refreshWith(app, device, value, 1);
      expect([refused.status, refused.body.code]).toEqual([401, 'reattest_required']);
      await expectSpent(app, value);
      expect(await recordedFailures(app, device.keyId)).toEqual({
        events: ['reattest_required'],
        webhooks: ['reattest_required'],
      });
    });

    it('refused for a blocked device: the challenge is used up, the failure and its webhook recorded', async () => {
      const app = await listeningApp();
      const device = authority.createDevice();
      expect((await attest(app, device)).status).toBe(200);
      await app.owner
        .post(`/api/v1/devices/${encodeURIComponent(device.keyId)}/block`)
        .send({})
        .expect(200);
      const value = await challenge(app);
      const refused = await refreshWith(app, device, value, 1);
      expect([refused.status, refused.body.code]).toEqual([401, 'reattest_required']);
      await expectSpent(app, value);
      expect(await recordedFailures(app, device.keyId)).toEqual({
        events: ['reattest_required'],
        webhooks: ['reattest_required'],
      });
      // Its counter did not move: the refusal rolled the refresh back.
      const [row] = await t.sql<{ sign_counter: string }>(`SELECT sign_counter FROM devices WHERE key_id = $1`, [
        device.keyId,
      ]);
      expect(row.sign_counter).toBe('0');
    });

    it('refused for an unknown key: the challenge is used up, the failure and its webhook recorded', async () => {
      const app = await listeningApp();
      const stranger = authority.createDevice();
      const value = await challenge(app);
      const refused = await refreshWith(app, stranger, value, 1);
      expect([refused.status, refused.body.code]).toEqual([401, 'reattest_required']);
      await expectSpent(app, value);
      expect(await recordedFailures(app, stranger.keyId)).toEqual({
        events: ['reattest_required'],
        webhooks: ['reattest_required'],
      });
      expect(await t.sql(`SELECT 1 FROM devices WHERE key_id = $1`, [stranger.keyId])).toEqual([]);
    });
  });

  describe('a refused validate spends its challenge and records its failure', () => {
    it("refused for the app's risk threshold: the challenge is used up, the failure and its webhook recorded", async () => {
      const app = await listeningApp({ riskThresholds: { maxAllowedRiskScore: 30 } });
      const device = authority.createDevice();
      const value = await challenge(app);
      const refused = await validateWith(app, device, value, { jailbreakDetected: true });
      expect([refused.status, refused.body.code]).toEqual([403, 'risk_threshold_exceeded']);
      await expectSpent(app, value);
      expect(await recordedFailures(app, device.keyId)).toEqual({
        events: ['risk_threshold_exceeded'],
        webhooks: ['risk_threshold_exceeded'],
      });
    });

    it('refused for the monthly active device quota: the challenge is used up, the failure and its webhook recorded', async () => {
      const app = await listeningApp();
      expect((await attest(app, authority.createDevice())).status).toBe(200);
      const limit = tierDefinition('professional').limits.maxMAD!;
      await t.sql(
        `UPDATE mad_counters SET active_devices = $2, over_limit_since = now() - interval '8 days'
          WHERE organization_id = $1`,
        [app.org.id, limit + 1],
      );
      const device = authority.createDevice();
      const value = await challenge(app);
      const refused = await validateWith(app, device, value);
      expect([refused.status, refused.body.code]).toEqual([402, 'quota_exceeded']);
      await expectSpent(app, value);
      expect(await recordedFailures(app, device.keyId)).toEqual({
        events: ['quota_exceeded'],
        webhooks: ['quota_exceeded'],
      });
    });
  });

  describe('challenge_expired for as long as a client may retry', () => {
    it('answers challenge_expired to a used and to a never-used challenge days after the purge forgot them, challenge_invalid to anything else', async () => {
      const app = await registerApp(t);
      const other = await registerApp(t);
      const challenges = t.app.get(ChallengeService);
      const used = await challenge(app);
      const device = authority.createDevice();
      expect((await validateWith(app, device, used)).status).toBe(200);
      const forgotten = await challenge(app);
      const foreign = await challenge(other);
      const answer = async (target: RegisteredApp, value: string): Promise<string> => {
        const response = await validateWith(target, authority.createDevice(), value);
        expect(response.status).toBe(400);
        return response.body.code as string;
      };
      // Within its five minutes, a used challenge is used.
      expect(await answer(app, used)).toBe('challenge_invalid');
      const start = Date.now();
      try {
        // Three days later, the cleanup job has run: no row is left for either challenge.
        challenges.now = () => start + 3 * 86_400_000;
        await challenges.purgeExpired();
        expect(await t.sql(`SELECT 1 FROM attestation_challenges WHERE app_id = $1`, [app.id])).toEqual([]);
        for (let i = 0; i < 2; i++) {
          expect(await answer(app, used)).toBe('challenge_expired');
          expect(await answer(app, forgotten)).toBe('challenge_expired');
        }
        // Another app's challenge, or bytes the service never issued, are not this app's expired challenges.
        expect(await answer(app, foreign)).toBe('challenge_invalid');
        expect(await answer(app, randomBytes(32).toString('base64'))).toBe('challenge_invalid');
      } finally {
        challenges.now = Date.now;
      }
    });
  });

  describe('the stored risk score', () => {
    it('follows failures: the device list and details show the score of its latest refused attempt', async () => {
      const app = await registerApp(t, 'professional', { riskThresholds: { maxAllowedRiskScore: 30 } });
      const device = authority.createDevice();
      expect((await attest(app, device)).status).toBe(200);
      const stored = async () => {
        const [row] = await t.sql<{ risk_score: number }>(`SELECT risk_score FROM devices WHERE key_id = $1`, [
          device.keyId,
        ]);
        return row.risk_score;
      };
      const listed = async (minRisk: number) =>
        (
          (await app.owner.get(`/api/v1/devices?minRisk=${minRisk}&appId=${app.id}`).expect(200)).body.items as {
            keyId: string;
            riskScore: number;
          }[]
        ).map((item) => [item.keyId, item.riskScore]);
      expect(await stored()).toBe(0);

      // A replayed assertion: 15 for the counter anomaly, 5 for the failure.
      expect((await refreshWith(app, device, await challenge(app), 3)).status).toBe(200);
      const replay = await refreshWith(app, device, await challenge(app), 2);
      expect(replay.body.code).toBe('counter_not_increasing');
      expect(await stored()).toBe(20);
      expect(await listed(10)).toEqual([[device.keyId, 20]]);

      // The key attested again, reporting a jailbreak, refused after scoring: the event's score is the device's.
      const jailbroken = await attest(app, device, { jailbreakDetected: true });
      expect(jailbroken.body.code).toBe('risk_threshold_exceeded');
      const [event] = await t.sql<{ risk_score: number }>(
        `SELECT risk_score FROM device_events WHERE key_id = $1 AND error_code = 'risk_threshold_exceeded'`,
        [device.keyId],
      );
      expect(event.risk_score).toBeGreaterThan(30);
      expect(await stored()).toBe(event.risk_score);
      expect(await listed(10)).toEqual([[device.keyId, event.risk_score]]);
      const details = await app.owner
        .get(`/api/v1/analytics/devices/${encodeURIComponent(device.keyId)}?appId=${app.id}`)
        .expect(200);
      expect(details.body.deviceProfile.riskScore).toBe(event.risk_score);
    });
  });
});
