import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, orgWithMember, signIn } from '../factories/identity.js';
import { subscribedReceiver } from '../factories/webhooks.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { attestDevice, fabricatedRootEnv, registerApp, type RegisteredApp } from '../support/sdk-client.js';
import {
  eventually,
  type ReceivedWebhook,
  type WebhookReceiver,
  WebhookReceivers,
} from '../support/webhook-receiver.js';

const DEFAULTS = {
  maxRiskScore: 50,
  minOsVersion: null,
  minAppVersion: null,
  blockOnJailbreak: false,
  allowedCountries: null,
  updatedAt: null,
};

describe('compliance settings', () => {
  let t: TestApp;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
    await receivers.closeAll();
  });

  function put(agent: HttpClient, body: Record<string, unknown>) {
    return agent.put('/api/v1/org/compliance').send(body);
  }

  async function complianceStatus(app: RegisteredApp, keyId: string) {
    const response = await app.owner.get(`/api/v1/analytics/devices/${encodeURIComponent(keyId)}`).expect(200);
    return response.body.complianceStatus as { isCompliant: boolean; checks: Record<string, unknown>[] };
  }

  describe('settings', () => {
    it('start at the defaults on every plan and are readable by any member', async () => {
      await t.http().get('/api/v1/org/compliance').expect(401);
      for (const tier of ['free', 'basic', 'professional']) {
        const { agent } = await orgWithMember(t, { tier, role: 'viewer' });
        expect((await agent.get('/api/v1/org/compliance').expect(200)).body).toEqual(DEFAULTS);
      }
    });

    it('are changed by Admins from the Business plan, field by field, with an audit entry', async () => {
      const { org, agent: owner } = await orgWithMember(t, { tier: 'professional' });
      const updated = await put(owner, {
        maxRiskScore: 30,
        minOsVersion: '17.0',
        allowedCountries: ['us', 'DE', 'US'],
      });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({
        ...DEFAULTS,
        maxRiskScore: 30,
        minOsVersion: '17.0',
        allowedCountries: ['US', 'DE'],
        updatedAt: expect.any(String),
      });

      const admin = await signIn(t, (await createUser(t, { org, role: 'admin' })).email);
      // Left out keeps its value; null clears.
      const cleared = await put(admin, { minOsVersion: null, blockOnJailbreak: true }).expect(200);
      expect(cleared.body).toMatchObject({
        maxRiskScore: 30,
        minOsVersion: null,
        blockOnJailbreak: true,
        allowedCountries: ['US', 'DE'],
      });
      expect((await owner.get('/api/v1/org/compliance').expect(200)).body).toEqual(cleared.body);

      const audit = await t.sql<{ action: string; resource_type: string; metadata: { changes: unknown } }>(
        `SELECT action, resource_type, metadata FROM audit_logs WHERE organization_id = $1 AND action = 'compliance.updated'
          ORDER BY created_at`,
        [org.id],
      );
      expect(audit).toHaveLength(2);
      expect(audit[0].resource_type).toBe('compliance_settings');
      expect(audit[1].metadata.changes).toEqual({
        minOsVersion: { from: '17.0', to: null },
        blockOnJailbreak: { from: false, to: true },
      });

      // Saving the same values again changes nothing and is not audited.
      await put(owner, { maxRiskScore: 30 }).expect(200);
      const [{ count }] = await t.sql<{ count: number }>(
        `SELECT count(*)::int AS count FROM audit_logs WHERE organization_id = $1 AND action = 'compliance.updated'`,
        [org.id],
      );
      expect(count).toBe(2);
    });

    it('refuses Members and Viewers', async () => {
      const { org } = await orgWithMember(t, { tier: 'professional' });
      for (const role of ['viewer', 'member'] as const) {
        const agent = await signIn(t, (await createUser(t, { org, role })).email);
        await put(agent, { maxRiskScore: 10 }).expect(403);
      }
    });

    it.each(['free', 'basic'])('are not changeable on the %s plan (403 feature_unavailable)', async (tier) => {
      const { agent } = await orgWithMember(t, { tier });
      const refused = await put(agent, { maxRiskScore: 10 }).expect(403);
      expect(refused.body).toMatchObject({ code: 'feature_unavailable', hint: expect.any(String) });
    });

    it.each([
      [{ maxRiskScore: 101 }, 'maxRiskScore'],
      [{ maxRiskScore: 2.5 }, 'maxRiskScore'],
      [{ maxRiskScore: null }, 'maxRiskScore'],
      [{ minOsVersion: 'latest' }, 'minOsVersion'],
      [{ minAppVersion: 17 }, 'minAppVersion'],
      [{ blockOnJailbreak: 'yes' }, 'blockOnJailbreak'],
      [{ allowedCountries: [] }, 'allowedCountries'],
      [{ allowedCountries: ['USA'] }, 'allowedCountries'],
      [{ allowedCountries: 'US' }, 'allowedCountries'],
      [{ maxRiskScroe: 10 }, 'maxRiskScroe'],
    ])('refuses %j with 422 naming %s', async (body, field) => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const refused = await put(agent, body).expect(422);
      expect(refused.body.fields.map((error: { field: string }) => error.field)).toContain(field);
    });

    it('refuses an update that changes nothing with 400', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      expect((await put(agent, {}).expect(400)).body.code).toBe('bad_request');
    });
  });

  describe("a device's complianceStatus", () => {
    it('checks risk, versions, jailbreak and country against the settings', async () => {
      const app = await registerApp(t, 'professional');
      const { device } = await attestDevice(t, app, {
        osVersion: '16.4',
        appVersion: '2.3.0',
        country: 'fr',
        jailbreakDetected: true,
      });
      // Jailbreak weighs 40: within the default maximum of 50, and the defaults ignore a jailbreak itself.
      expect(await complianceStatus(app, device.keyId)).toEqual({
        isCompliant: true,
        checks: [
          { name: 'max_risk_score', passed: true, expected: 50, actual: 40 },
          { name: 'not_blocked', passed: true, expected: false, actual: false },
        ],
      });

      await put(app.owner, {
        maxRiskScore: 30,
        minOsVersion: '16.10',
        minAppVersion: '2.3',
        blockOnJailbreak: true,
        allowedCountries: ['US', 'DE'],
      }).expect(200);
      expect(await complianceStatus(app, device.keyId)).toEqual({
        isCompliant: false,
        checks: [
          { name: 'max_risk_score', passed: false, expected: 30, actual: 40 },
          // 16.4 is below 16.10: versions compare by number, not as text.
          { name: 'min_os_version', passed: false, expected: '16.10', actual: '16.4' },
          { name: 'min_app_version', passed: true, expected: '2.3', actual: '2.3.0' },
          { name: 'no_jailbreak', passed: false, expected: false, actual: true },
          { name: 'allowed_country', passed: false, expected: ['US', 'DE'], actual: 'FR' },
          { name: 'not_blocked', passed: true, expected: false, actual: false },
        ],
      });

      await put(app.owner, {
        maxRiskScore: 40,
        minOsVersion: '16.4',
        blockOnJailbreak: false,
        allowedCountries: ['FR'],
      }).expect(200);
      const relaxed = await complianceStatus(app, device.keyId);
      expect(relaxed.isCompliant).toBe(true);
      expect(relaxed.checks.map((check) => check.name)).toEqual([
        'max_risk_score',
        'min_os_version',
        'min_app_version',
        'allowed_country',
        'not_blocked',
      ]);
    });

    it('falls back to the defaults when the organization leaves Business, and returns on upgrade', async () => {
      const app = await registerApp(t, 'professional');
      const { device } = await attestDevice(t, app, { osVersion: '15.0' });
      await put(app.owner, { maxRiskScore: 10, minOsVersion: '16' }).expect(200);
      expect((await complianceStatus(app, device.keyId)).isCompliant).toBe(false);

      await t.sql(`UPDATE organizations SET service_tier = 'basic' WHERE id = $1`, [app.org.id]);
      expect((await app.owner.get('/api/v1/org/compliance').expect(200)).body).toEqual(DEFAULTS);
      // Device details are themselves Business (deviceIntelligence): Pro reads no compliance status.
      const details = `/api/v1/analytics/devices/${encodeURIComponent(device.keyId)}`;
      expect((await app.owner.get(details).expect(403)).body.code).toBe('feature_unavailable');

      await t.sql(`UPDATE organizations SET service_tier = 'enterprise' WHERE id = $1`, [app.org.id]);
      expect((await app.owner.get('/api/v1/org/compliance').expect(200)).body).toMatchObject({
        maxRiskScore: 10,
        minOsVersion: '16',
      });
      expect((await complianceStatus(app, device.keyId)).isCompliant).toBe(false);
    });
  });

  describe('the device.high_risk threshold', () => {
    function listen(app: RegisteredApp): Promise<WebhookReceiver> {
      return subscribedReceiver(receivers, app.owner, ['device.high_risk']);
    }

    function highRiskPayloads(receiver: WebhookReceiver) {
      return receiver.received
        .filter((request: ReceivedWebhook) => request.event === 'device.high_risk')
        .map((request) => JSON.parse(request.body) as { data: Record<string, unknown> });
    }

    async function outboxThresholds(orgId: string): Promise<unknown[]> {
      const rows = await t.sql<{ data: { threshold: number; key_id: string } }>(
        `SELECT data FROM webhook_events WHERE organization_id = $1 AND event_type = 'device.high_risk'
          ORDER BY occurred_at`,
        [orgId],
      );
      return rows.map((row) => [row.data.key_id, row.data.threshold]);
    }

    it("is the organization's maxRiskScore, carried in the payload", async () => {
      const app = await registerApp(t, 'professional');
      const receiver = await listen(app);
      await put(app.owner, { maxRiskScore: 30 }).expect(200);

      // Jailbreak 40: above 30, below the default of 50 and the app's own limit of 80.
      const { device: risky } = await attestDevice(t, app, { jailbreakDetected: true });
      await eventually(() => highRiskPayloads(receiver).length === 1);
      expect(highRiskPayloads(receiver)[0].data).toMatchObject({
        key_id: risky.keyId,
        risk_score: 40,
        threshold: 30,
        jailbreak_detected: true,
      });

      // Raised to 45, the same score no longer counts as high risk.
      await put(app.owner, { maxRiskScore: 45 }).expect(200);
      await attestDevice(t, app, { jailbreakDetected: true });
      expect(await outboxThresholds(app.org.id)).toEqual([[risky.keyId, 30]]);

      // Lowered to 0, any risk at all is.
      await put(app.owner, { maxRiskScore: 0 }).expect(200);
      const { device: slight } = await attestDevice(t, app, { jailbreakDetected: true });
      expect(await outboxThresholds(app.org.id)).toEqual([
        [risky.keyId, 30],
        [slight.keyId, 0],
      ]);
    });

    it('stays at the default of 50 without compliance settings', async () => {
      const app = await registerApp(t, 'professional');
      await listen(app);
      await attestDevice(t, app, { jailbreakDetected: true });
      expect(await outboxThresholds(app.org.id)).toEqual([]);
    });
  });
});
