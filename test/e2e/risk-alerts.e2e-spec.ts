import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RiskAlertsService } from '../../src/risk-alerts/risk-alerts.service.js';
import { createApiKey, createUser, orgWithMember, randomClientIp, signIn } from '../factories/identity.js';
import { subscribedReceiver } from '../factories/webhooks.js';
import { sentMails, startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { appAttestAuthority, type FabricatedDevice } from '../support/app-attest-fabricator.js';
import {
  TEAM_ID,
  attestDevice,
  fabricatedRootEnv,
  registerApp,
  sdk,
  type RegisteredApp,
} from '../support/sdk-client.js';
import { eventually, type WebhookReceiver, WebhookReceivers } from '../support/webhook-receiver.js';

interface Alert {
  pattern: string;
  key_id: string;
  app_id: string;
  risk_score: number;
  error_code: string | null;
  detail: string;
  observed: number;
  rule: {
    id: string;
    name: string;
    app_id: string | null;
    condition: { type: string; threshold: number; window_minutes: number | null };
    cooldown_minutes: number;
  };
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('risk alerts', () => {
  let t: TestApp;
  let alerts: RiskAlertsService;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
    alerts = t.app.get(RiskAlertsService);
  });
  afterAll(async () => {
    await t.close();
    await receivers.closeAll();
  });

  function createRule(agent: HttpClient, body: Record<string, unknown>) {
    return agent.post('/api/v1/org/risk-alerts').send({
      name: 'Failure storm',
      condition: { type: 'failed_attestations_per_app', threshold: 3, windowMinutes: 10 },
      channel: 'webhook',
      ...body,
    });
  }

  /**
   * A validate the service refuses (the attestation names another app): one failure event. From
   * a client address of its own, so storms stay clear of the per-IP validate limit.
   */
  async function failAttestation(app: RegisteredApp, device: FabricatedDevice, instance: TestApp = t): Promise<void> {
    const ip = randomClientIp();
    const challenge = (
      await sdk(instance, app).get('/api/v1/attestation/challenge').set('X-Forwarded-For', ip).expect(200)
    ).body.challenge as string;
    const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId: 'com.someone.else' });
    await sdk(instance, app)
      .post('/api/v1/attestation/validate')
      .set('X-Forwarded-For', ip)
      .send({ keyId: device.keyId, attestationObject, challenge })
      .expect(401);
  }

  async function failTimes(app: RegisteredApp, times: number, device?: FabricatedDevice): Promise<void> {
    const authority = await appAttestAuthority();
    for (let i = 0; i < times; i++) await failAttestation(app, device ?? authority.createDevice());
    // Evaluation runs after the answer; wait for it before looking at its outcome.
    await alerts.idle();
  }

  /** The alerts written to the outbox for the organization, oldest first. */
  async function alertsOf(app: RegisteredApp): Promise<Alert[]> {
    const rows = await t.sql<{ data: Alert }>(
      `SELECT data FROM webhook_events WHERE organization_id = $1 AND event_type = 'attestation.anomaly'
          AND data->>'pattern' = 'alert_rule'
        ORDER BY occurred_at`,
      [app.org.id],
    );
    return rows.map((row) => row.data);
  }

  function listen(app: RegisteredApp): Promise<WebhookReceiver> {
    return subscribedReceiver(receivers, app.owner, ['attestation.anomaly']);
  }

  /** Moves the rule's last alert `minutes` into the past, as the passing of time would. */
  async function ageLastAlert(app: RegisteredApp, ruleId: string, minutes: number): Promise<void> {
    await t.sql(`UPDATE risk_alert_rules SET last_fired_at = last_fired_at - make_interval(mins => $2) WHERE id = $1`, [
      ruleId,
      minutes,
    ]);
    // This instance keeps the rules (and when they last fired) for up to 30 seconds; time moved
    // under it in SQL, so it forgets them as a rule change does.
    alerts.forget(app.org.id);
  }

  describe('access', () => {
    it('needs an Admin session: no credentials and API keys get 401, Members and Viewers 403', async () => {
      const { org } = await orgWithMember(t, { tier: 'professional' });
      await t.http().get('/api/v1/org/risk-alerts').expect(401);
      const key = await createApiKey(t, org, ['org:read']);
      await t.http().get('/api/v1/org/risk-alerts').set('Authorization', `Bearer ${key}`).expect(401);
      for (const role of ['viewer', 'member'] as const) {
        const agent = await signIn(t, (await createUser(t, { org, role })).email);
        await agent.get('/api/v1/org/risk-alerts').expect(403);
        await createRule(agent, {}).expect(403);
      }
      const admin = await signIn(t, (await createUser(t, { org, role: 'admin' })).email);
      await admin.get('/api/v1/org/risk-alerts').expect(200);
    });

    it.each(['free', 'basic'])('is unavailable on the %s plan (403 feature_unavailable)', async (tier) => {
      const { agent } = await orgWithMember(t, { tier });
      const refused = await createRule(agent, {}).expect(403);
      expect(refused.body).toMatchObject({ code: 'feature_unavailable', hint: expect.any(String) });
      expect((await agent.get('/api/v1/org/risk-alerts').expect(403)).body.code).toBe('feature_unavailable');
      await agent.delete(`/api/v1/org/risk-alerts/${UNKNOWN}`).expect(403);
    });
  });

  describe('rules', () => {
    it('are created with defaults, listed, read, changed and deleted, each change audited', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const created = await createRule(agent, {
        name: '  Per app  ',
        condition: { type: 'failed_attestations_per_app', threshold: 5 },
      }).expect(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        name: 'Per app',
        appId: null,
        condition: { type: 'failed_attestations_per_app', threshold: 5, windowMinutes: 60 },
        channel: 'webhook',
        cooldownMinutes: 60,
        isActive: true,
        lastFiredAt: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const id = created.body.id as string;
      const second = await createRule(agent, {
        name: 'Risky devices',
        condition: { type: 'risk_score_above', threshold: 70 },
        channel: 'email',
        cooldownMinutes: 15,
      }).expect(201);
      expect(second.body.condition).toEqual({ type: 'risk_score_above', threshold: 70, windowMinutes: null });

      const listed = await agent.get('/api/v1/org/risk-alerts').expect(200);
      expect(listed.body.map((rule: { id: string }) => rule.id)).toEqual([id, second.body.id]);
      expect((await agent.get(`/api/v1/org/risk-alerts/${id}`).expect(200)).body).toEqual(created.body);

      const patched = await agent
        .patch(`/api/v1/org/risk-alerts/${id}`)
        .send({
          isActive: false,
          condition: { type: 'failed_attestations_per_device', threshold: 2, windowMinutes: 5 },
        })
        .expect(200);
      expect(patched.body).toMatchObject({
        name: 'Per app',
        isActive: false,
        condition: { type: 'failed_attestations_per_device', threshold: 2, windowMinutes: 5 },
      });

      await agent.delete(`/api/v1/org/risk-alerts/${id}`).expect(204);
      await agent.get(`/api/v1/org/risk-alerts/${id}`).expect(404);
      await agent.delete(`/api/v1/org/risk-alerts/${id}`).expect(404);

      const audit = await t.sql<{ action: string; resource_id: string }>(
        `SELECT action, resource_id FROM audit_logs WHERE organization_id = $1 AND resource_type = 'risk_alert_rule'
          ORDER BY created_at`,
        [org.id],
      );
      expect(audit).toEqual([
        { action: 'risk_alert_rule.created', resource_id: id },
        { action: 'risk_alert_rule.created', resource_id: second.body.id },
        { action: 'risk_alert_rule.updated', resource_id: id },
        { action: 'risk_alert_rule.deleted', resource_id: id },
      ]);
    });

    it("are scoped to an app of the organization, and another organization's rules are 404", async () => {
      const app = await registerApp(t, 'professional');
      const scoped = await createRule(app.owner, { appId: app.id }).expect(201);
      expect(scoped.body.appId).toBe(app.id);

      const other = await registerApp(t, 'professional');
      await createRule(app.owner, { appId: other.id }).expect(404);
      await other.owner.get(`/api/v1/org/risk-alerts/${scoped.body.id}`).expect(404);
      await other.owner.patch(`/api/v1/org/risk-alerts/${scoped.body.id}`).send({ isActive: false }).expect(404);
      await other.owner.delete(`/api/v1/org/risk-alerts/${scoped.body.id}`).expect(404);
      await app.owner.get('/api/v1/org/risk-alerts/not-a-uuid').expect(400);
    });

    it.each([
      [{ name: '' }, 'name'],
      [{ condition: { type: 'velocity', threshold: 1 } }, 'condition.type'],
      [{ condition: { type: 'failed_attestations_per_app', threshold: -1 } }, 'condition.threshold'],
      [
        { condition: { type: 'failed_attestations_per_app', threshold: 1, windowMinutes: 1441 } },
        'condition.windowMinutes',
      ],
      [{ condition: { type: 'risk_score_above', threshold: 100 } }, 'condition.threshold'],
      [{ condition: { type: 'risk_score_above', threshold: 50, windowMinutes: 10 } }, 'condition.windowMinutes'],
      [{ condition: { type: 'new_devices_per_hour', threshold: 5, windowMinutes: 30 } }, 'condition.windowMinutes'],
      [{ condition: 'failures' }, 'condition'],
      [{ channel: 'sms' }, 'channel'],
      [{ cooldownMinutes: 0 }, 'cooldownMinutes'],
      [{ appId: 'not-a-uuid' }, 'appId'],
    ])('refuses %j with 422 naming %s', async (body, field) => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const refused = await createRule(agent, body).expect(422);
      expect(refused.body.fields.map((error: { field: string }) => error.field)).toContain(field);
    });

    it('refuses an update without fields with 400', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const { id } = (await createRule(agent, {}).expect(201)).body;
      expect((await agent.patch(`/api/v1/org/risk-alerts/${id}`).send({}).expect(400)).body.code).toBe('bad_request');
    });
  });

  describe('evaluation', () => {
    it('fires once for a burst of failures within the window, and again only after the cooldown', async () => {
      const app = await registerApp(t, 'professional');
      const receiver = await listen(app);
      const rule = (
        await createRule(app.owner, {
          name: 'Failure storm',
          condition: { type: 'failed_attestations_per_app', threshold: 3, windowMinutes: 10 },
          cooldownMinutes: 30,
        }).expect(201)
      ).body as { id: string };

      // Three failures are not above the threshold; the fourth is; the storm goes on.
      await failTimes(app, 3);
      expect(await alertsOf(app)).toEqual([]);
      await failTimes(app, 5);
      const [first, ...more] = await alertsOf(app);
      expect(more).toEqual([]);
      expect(first).toMatchObject({
        pattern: 'alert_rule',
        app_id: app.id,
        error_code: 'rp_id_mismatch',
        rule: {
          id: rule.id,
          name: 'Failure storm',
          app_id: null,
          condition: { type: 'failed_attestations_per_app', threshold: 3, window_minutes: 10 },
          cooldown_minutes: 30,
        },
      });
      expect(first.observed).toBeGreaterThan(3);
      expect(first.detail).toContain('failed attestations of the app within 10 minutes');

      // Delivered for real, signed like every event.
      await eventually(() => receiver.received.length === 1);
      expect(JSON.parse(receiver.received[0].body)).toMatchObject({
        event: 'attestation.anomaly',
        data: { pattern: 'alert_rule', rule: { id: rule.id } },
      });
      const { lastFiredAt } = (await app.owner.get(`/api/v1/org/risk-alerts/${rule.id}`).expect(200)).body;
      expect(lastFiredAt).toEqual(expect.any(String));

      // 29 minutes later the storm still counts, but the rule is cooling down.
      await ageLastAlert(app, rule.id, 29);
      await failTimes(app, 2);
      expect(await alertsOf(app)).toHaveLength(1);

      // Past the cooldown, the storm still above the threshold alerts once more.
      await ageLastAlert(app, rule.id, 2);
      await failTimes(app, 3);
      const alerted = await alertsOf(app);
      expect(alerted).toHaveLength(2);
      expect(alerted[1].observed).toBeGreaterThanOrEqual(11);
    });

    it('sends one alert for a storm hitting two instances at once', async () => {
      const app = await registerApp(t, 'professional');
      await listen(app);
      const peer = await t.startPeer();
      const peerAlerts = peer.app.get(RiskAlertsService);
      await createRule(app.owner, {
        condition: { type: 'failed_attestations_per_app', threshold: 1, windowMinutes: 10 },
      }).expect(201);
      const authority = await appAttestAuthority();
      await Promise.all(
        Array.from({ length: 12 }, (_, i) => failAttestation(app, authority.createDevice(), i % 2 ? peer : t)),
      );
      await Promise.all([alerts.idle(), peerAlerts.idle()]);
      expect(await alertsOf(app)).toHaveLength(1);
    });

    it('counts only failures within the window', async () => {
      const app = await registerApp(t, 'professional');
      await listen(app);
      const { id } = (
        await createRule(app.owner, {
          condition: { type: 'failed_attestations_per_app', threshold: 3, windowMinutes: 10 },
          cooldownMinutes: 1,
        }).expect(201)
      ).body as { id: string };
      await failTimes(app, 3);
      // The three failures happened 11 minutes ago: out of the window.
      await t.sql(`UPDATE device_events SET created_at = created_at - interval '11 minutes' WHERE app_id = $1`, [
        app.id,
      ]);
      await failTimes(app, 3);
      expect(await alertsOf(app)).toEqual([]);
      await failTimes(app, 1);
      expect(await alertsOf(app)).toHaveLength(1);
      expect((await alertsOf(app))[0]).toMatchObject({ observed: 4, rule: { id } });
    });

    it('counts failures per device key, and mails Admins and Owners for an email rule', async () => {
      const app = await registerApp(t, 'professional');
      const admin = await createUser(t, { org: app.org, role: 'admin' });
      const viewer = await createUser(t, { org: app.org, role: 'viewer' });
      const [owner] = await t.sql<{ email: string }>(
        `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
          WHERE m.organization_id = $1 AND m.role = 'owner'`,
        [app.org.id],
      );
      await createRule(app.owner, {
        name: 'One device hammering',
        condition: { type: 'failed_attestations_per_device', threshold: 2, windowMinutes: 15 },
        channel: 'email',
      }).expect(201);
      const riskMails = (email: string) =>
        sentMails(t, email).filter((mail) => mail.subject === 'Risk alert: One device hammering');

      // Many devices failing once each is no device failing often.
      await failTimes(app, 4);
      expect(riskMails(owner.email)).toEqual([]);

      const device = (await appAttestAuthority()).createDevice();
      await failTimes(app, 5, device);
      expect(riskMails(owner.email)).toHaveLength(1);
      expect(riskMails(admin.email)).toHaveLength(1);
      expect(riskMails(viewer.email)).toEqual([]);
      expect(riskMails(admin.email)[0].text).toContain(device.keyId);
      expect(riskMails(admin.email)[0].text).toContain('failed attestations of one device within 15 minutes, above 2');
      // The email channel writes no webhook event.
      expect(await alertsOf(app)).toEqual([]);
    });

    it('fires for a risk score above its threshold, in its own app only', async () => {
      const app = await registerApp(t, 'professional');
      await listen(app);
      const other = (
        await app.owner
          .post('/api/v1/apps')
          .send({ appName: 'Other', bundleId: `${app.bundleId}.other`, teamId: TEAM_ID })
          .expect(201)
      ).body as { id: string; bundleId: string };
      await createRule(app.owner, {
        name: 'Risky',
        condition: { type: 'risk_score_above', threshold: 30 },
        appId: app.id,
      }).expect(201);

      await attestDevice(t, { bundleId: other.bundleId }, { jailbreakDetected: true });
      await attestDevice(t, app, {});
      await alerts.idle();
      expect(await alertsOf(app)).toEqual([]);

      // Jailbreak weighs 40.
      const { device } = await attestDevice(t, app, { jailbreakDetected: true });
      await alerts.idle();
      await attestDevice(t, app, { jailbreakDetected: true });
      await alerts.idle();
      expect(await alertsOf(app)).toEqual([
        expect.objectContaining({
          key_id: device.keyId,
          risk_score: 40,
          jailbreak_detected: true,
          error_code: null,
          observed: 40,
          rule: expect.objectContaining({ app_id: app.id, condition: expect.objectContaining({ threshold: 30 }) }),
        }),
      ]);
    });

    it('fires for new devices above the hourly threshold', async () => {
      const app = await registerApp(t, 'professional');
      await listen(app);
      await createRule(app.owner, {
        name: 'Device wave',
        condition: { type: 'new_devices_per_hour', threshold: 2 },
      }).expect(201);
      const { device: first } = await attestDevice(t, app);
      // The same key again is not a new device.
      const challenge = (await sdk(t, app).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
      const attestationObject = await first.attest({ challenge, teamId: TEAM_ID, bundleId: app.bundleId });
      await sdk(t, app)
        .post('/api/v1/attestation/validate')
        .send({ keyId: first.keyId, attestationObject, challenge })
        .expect(200);
      await attestDevice(t, app);
      await alerts.idle();
      expect(await alertsOf(app)).toEqual([]);

      await attestDevice(t, app);
      await alerts.idle();
      await attestDevice(t, app);
      await alerts.idle();
      expect(await alertsOf(app)).toEqual([
        expect.objectContaining({
          observed: 3,
          rule: expect.objectContaining({
            condition: { type: 'new_devices_per_hour', threshold: 2, window_minutes: 60 },
          }),
        }),
      ]);
    });

    it('ignores inactive rules and organizations that left Business', async () => {
      const app = await registerApp(t, 'professional');
      await listen(app);
      const { id } = (await createRule(app.owner, { isActive: false }).expect(201)).body as { id: string };
      await failTimes(app, 5);
      expect(await alertsOf(app)).toEqual([]);

      await app.owner.patch(`/api/v1/org/risk-alerts/${id}`).send({ isActive: true }).expect(200);
      await t.sql(`UPDATE organizations SET service_tier = 'basic' WHERE id = $1`, [app.org.id]);
      await failTimes(app, 2);
      expect(await alertsOf(app)).toEqual([]);
      const [{ last_fired_at }] = await t.sql<{ last_fired_at: Date | null }>(
        `SELECT last_fired_at FROM risk_alert_rules WHERE id = $1`,
        [id],
      );
      expect(last_fired_at).toBeNull();
    });
  });
});
