import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WEBHOOK_EVENTS, type WebhookEventName } from '../../src/webhooks/webhook-event-catalog.js';
import { WebhookOutboxRepository } from '../../src/webhooks/webhook-outbox.repository.js';
import { createApiKey, createUser, orgWithMember, signIn, type TestOrg } from '../factories/identity.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { fabricatedRootEnv } from '../support/sdk-client.js';
import {
  appAttestAuthority,
  type FabricatedAuthority,
  type FabricatedDevice,
} from '../support/app-attest-fabricator.js';
import {
  eventually,
  respond,
  sleep,
  verifyingSignatures,
  type ReceivedWebhook,
  type WebhookReceiver,
  WebhookReceivers,
} from '../support/webhook-receiver.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

const TEAM_ID = 'ABCDE12345';
const DEVICE_EVENTS: WebhookEventName[] = [
  'device.new',
  'device.attested.first',
  'device.high_risk',
  'device.attestation_failed',
  'attestation.anomaly',
];

interface Payload {
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

describe('webhooks', () => {
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

  function create(agent: HttpClient, body: Record<string, unknown>) {
    return agent.post('/api/v1/org/webhooks').send(body);
  }

  async function auditActions(org: TestOrg) {
    return t.sql<{ action: string; resource_id: string; metadata: Record<string, unknown> }>(
      `SELECT action, resource_id, metadata FROM audit_logs WHERE organization_id = $1 AND resource_type = 'webhook'
        ORDER BY created_at`,
      [org.id],
    );
  }

  describe('access', () => {
    it('needs a dashboard session: no credentials and API keys get 401', async () => {
      const { org } = await orgWithMember(t, { tier: 'professional' });
      await t.http().get('/api/v1/org/webhooks').expect(401);
      const key = await createApiKey(t, org, ['org:read', 'admin:team']);
      const withKey = await t.http().get('/api/v1/org/webhooks').set('Authorization', `Bearer ${key}`).expect(401);
      expect(withKey.body.code).toBe('unauthorized');
      await t.http().post('/api/v1/org/webhooks').set('Authorization', `Bearer ${key}`).send({}).expect(401);
    });

    it('needs the Admin role', async () => {
      const { org } = await orgWithMember(t, { tier: 'professional' });
      for (const role of ['viewer', 'member'] as const) {
        const user = await createUser(t, { org, role });
        const agent = await signIn(t, user.email);
        await agent.get('/api/v1/org/webhooks').expect(403);
        await create(agent, { url: 'http://127.0.0.1:1/', events: ['device.new'] }).expect(403);
      }
      const admin = await createUser(t, { org, role: 'admin' });
      await (await signIn(t, admin.email)).get('/api/v1/org/webhooks').expect(200);
    });

    it('is unavailable on the Free plan (403)', async () => {
      const { agent } = await orgWithMember(t, { tier: 'free' });
      const refused = await create(agent, { url: 'http://127.0.0.1:1/', events: ['device.new'] }).expect(403);
      expect(refused.body).toMatchObject({ code: 'feature_unavailable', hint: expect.any(String) });
      await agent.get('/api/v1/org/webhooks').expect(403);
    });
  });

  describe('endpoints', () => {
    it('creates an endpoint whose whsec_ secret is shown only in the creation response', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const created = await create(agent, {
        url: 'http://127.0.0.1:9/hooks',
        events: ['device.new', 'flag.created', 'device.new'],
        description: 'Production listener',
      }).expect(201);
      expect(Object.keys(created.body).sort()).toEqual([
        'createdAt',
        'description',
        'events',
        'id',
        'isActive',
        'secret',
        'url',
      ]);
      expect(created.body).toMatchObject({
        url: 'http://127.0.0.1:9/hooks',
        events: ['device.new', 'flag.created'],
        isActive: true,
        description: 'Production listener',
      });
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);

      const listed = await agent.get('/api/v1/org/webhooks').expect(200);
      expect(listed.body).toEqual([
        {
          id: created.body.id,
          url: 'http://127.0.0.1:9/hooks',
          events: ['device.new', 'flag.created'],
          isActive: true,
          description: 'Production listener',
          createdAt: created.body.createdAt,
          updatedAt: expect.any(String),
        },
      ]);
      const [entry] = await auditActions(org);
      expect(entry).toMatchObject({ action: 'webhook.created', resource_id: created.body.id });
      expect(JSON.stringify(entry.metadata)).not.toContain(created.body.secret);
    });

    it('lists newest first and only the organization’s own endpoints', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const other = await orgWithMember(t, { tier: 'professional' });
      await create(other.agent, { url: 'http://127.0.0.1:9/other', events: ['device.new'] }).expect(201);
      const ids: string[] = [];
      for (const path of ['a', 'b', 'c']) {
        ids.push(
          (await create(agent, { url: `http://127.0.0.1:9/${path}`, events: ['device.new'] }).expect(201)).body.id,
        );
      }
      const listed = await agent.get('/api/v1/org/webhooks').expect(200);
      expect(listed.body.map((endpoint: { id: string }) => endpoint.id)).toEqual(ids.reverse());
      expect(listed.body.every((endpoint: object) => !('secret' in endpoint))).toBe(true);
    });

    it.each(['attestation.completed', 'risk_threshold_exceeded', 'device_blocked', 'device.unknown'])(
      'refuses the event name %s with 400 listing the accepted names',
      async (name) => {
        const { agent } = await orgWithMember(t, { tier: 'professional' });
        const refused = await create(agent, { url: 'http://127.0.0.1:9/', events: ['device.new', name] }).expect(400);
        expect(refused.body.code).toBe('bad_request');
        for (const accepted of WEBHOOK_EVENTS) expect(refused.body.error).toContain(accepted);
      },
    );

    it.each([
      ['no events', { url: 'http://127.0.0.1:9/', events: [] }, 'events'],
      ['events missing', { url: 'http://127.0.0.1:9/' }, 'events'],
      ['url missing', { events: ['device.new'] }, 'url'],
      ['a URL that is not one', { url: 'not a url', events: ['device.new'] }, 'url'],
      ['another scheme', { url: 'ftp://127.0.0.1/', events: ['device.new'] }, 'url'],
      ['an unknown field', { url: 'http://127.0.0.1:9/', events: ['device.new'], secret: 'mine' }, 'secret'],
      [
        'a long description',
        { url: 'http://127.0.0.1:9/', events: ['device.new'], description: 'x'.repeat(501) },
        'description',
      ],
    ])('refuses %s with 400 naming the field', async (_case, body, field) => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const refused = await create(agent, body).expect(400);
      expect(refused.body.error).toContain(field);
    });

    it('refuses plain http and non-public addresses unless private networks are allowed', async () => {
      const strict = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
      try {
        const { agent } = await orgWithMember(strict, { tier: 'professional' });
        for (const url of [
          'http://example.com/hook',
          'https://127.0.0.1/hook',
          'https://10.1.2.3/hook',
          'https://[::1]/hook',
          'https://localhost/hook',
        ]) {
          const refused = await create(agent, { url, events: ['device.new'] }).expect(400);
          expect(refused.body.error).toMatch(/^url: /);
        }
        expect((await agent.get('/api/v1/org/webhooks').expect(200)).body).toEqual([]);
      } finally {
        await strict.close();
      }
    });

    it('limits the endpoint count by plan, also under concurrent creation', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => create(agent, { url: `http://127.0.0.1:9/${i}`, events: ['device.new'] })),
      );
      expect(results.map((result) => result.status).sort()).toEqual([201, 201, 201, 403, 403]);
      const refused = results.find((result) => result.status === 403)!;
      expect(refused.body).toMatchObject({
        code: 'webhook_limit_reached',
        error: 'Your plan allows 3 webhook endpoints',
      });
      expect((await agent.get('/api/v1/org/webhooks').expect(200)).body).toHaveLength(3);
    });

    it('refuses subscription.changed below Enterprise with 400 saying why, on create and update, and takes it on Enterprise', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const refused = await create(agent, {
        url: 'http://127.0.0.1:9/',
        events: ['flag.created', 'subscription.changed'],
      });
      expect([refused.status, refused.body.error]).toEqual([
        400,
        'events: subscription.changed is delivered on the Enterprise plan only; this plan would never send it',
      ]);
      const { id } = (await create(agent, { url: 'http://127.0.0.1:9/', events: ['flag.created'] }).expect(201)).body;
      await agent
        .patch(`/api/v1/org/webhooks/${id}`)
        .send({ events: ['subscription.changed'] })
        .expect(400);
      const enterprise = await orgWithMember(t, { tier: 'enterprise' });
      await create(enterprise.agent, { url: 'http://127.0.0.1:9/', events: ['subscription.changed'] }).expect(201);
    });

    it('updates isActive, events and description only', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const { id, createdAt } = (
        await create(agent, { url: 'http://127.0.0.1:9/', events: ['device.new'] }).expect(201)
      ).body;
      const updated = await agent
        .patch(`/api/v1/org/webhooks/${id}`)
        .send({ isActive: false, events: ['flag.created', 'flag.deleted'], description: 'Flags only' })
        .expect(200);
      expect(updated.body).toEqual({
        id,
        url: 'http://127.0.0.1:9/',
        events: ['flag.created', 'flag.deleted'],
        isActive: false,
        description: 'Flags only',
        createdAt,
        updatedAt: expect.any(String),
      });
      await agent.patch(`/api/v1/org/webhooks/${id}`).send({ url: 'http://127.0.0.1:10/' }).expect(400);
      await agent
        .patch(`/api/v1/org/webhooks/${id}`)
        .send({ events: ['attestation.completed'] })
        .expect(400);
      await agent.patch(`/api/v1/org/webhooks/${id}`).send({ events: [] }).expect(400);
      await agent.patch(`/api/v1/org/webhooks/not-a-uuid`).send({ isActive: true }).expect(400);
      expect((await agent.get('/api/v1/org/webhooks').expect(200)).body[0]).toMatchObject({
        isActive: false,
        url: 'http://127.0.0.1:9/',
      });
      expect((await auditActions(org)).map((entry) => entry.action)).toEqual(['webhook.created', 'webhook.updated']);
    });

    it('deletes with 204 and answers 404 for endpoints of other organizations', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const other = await orgWithMember(t, { tier: 'professional' });
      const { id } = (await create(agent, { url: 'http://127.0.0.1:9/', events: ['device.new'] }).expect(201)).body;
      for (const request of [
        other.agent.patch(`/api/v1/org/webhooks/${id}`).send({ isActive: false }),
        other.agent.delete(`/api/v1/org/webhooks/${id}`),
        other.agent.post(`/api/v1/org/webhooks/${id}/test`),
        other.agent.get(`/api/v1/org/webhooks/${id}/deliveries`),
      ]) {
        expect((await request.expect(404)).body.code).toBe('not_found');
      }
      await agent.delete(`/api/v1/org/webhooks/${id}`).expect(204);
      await agent.delete(`/api/v1/org/webhooks/${id}`).expect(404);
      expect((await agent.get('/api/v1/org/webhooks').expect(200)).body).toEqual([]);
      expect((await auditActions(org)).map((entry) => entry.action)).toEqual(['webhook.created', 'webhook.deleted']);
    });
  });

  describe('test delivery', () => {
    it('sends a signed synthetic attestation.completed and reports status, body and latency', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      let secret = '';
      const target = await receivers.start(verifyingSignatures(() => secret));
      const created = (await create(agent, { url: target.url, events: ['device.new'] }).expect(201)).body;
      secret = created.secret;

      const result = await agent.post(`/api/v1/org/webhooks/${created.id}/test`).expect(200);
      expect(result.body).toEqual({
        success: true,
        statusCode: 200,
        responseBody: 'verified',
        latencyMs: expect.any(Number),
        error: null,
      });
      expect(target.received).toHaveLength(1);
      const payload = JSON.parse(target.received[0].body) as Payload;
      expect(target.received[0].event).toBe('attestation.completed');
      expect(payload).toMatchObject({
        event: 'attestation.completed',
        data: { test: true, device_id: '', device_model: 'unknown' },
      });
      expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);

      // Not recorded, and not retried.
      const history = await agent.get(`/api/v1/org/webhooks/${created.id}/deliveries`).expect(200);
      expect(history.body).toEqual({ items: [], metadata: { page: 1, per: 20, total: 0 } });
    });

    it('reports a failing endpoint without retrying it', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const target = await receivers.start(respond(500, 'nope'));
      const { id } = (await create(agent, { url: target.url, events: ['device.new'] }).expect(201)).body;
      const result = await agent.post(`/api/v1/org/webhooks/${id}/test`).expect(200);
      expect(result.body).toMatchObject({
        success: false,
        statusCode: 500,
        responseBody: 'nope',
        error: 'endpoint answered 500',
      });
      await sleep(1_500);
      expect(target.received).toHaveLength(1);

      await target.close();
      const unreachable = await agent.post(`/api/v1/org/webhooks/${id}/test`).expect(200);
      expect(unreachable.body).toMatchObject({
        success: false,
        statusCode: null,
        responseBody: null,
        error: 'connection refused',
      });
    });
  });

  describe('delivery history', () => {
    it('pages deliveries newest first and refuses bad pages and unknown deliveries', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const target = await receivers.start();
      const { id } = (await create(agent, { url: target.url, events: ['flag.updated'] }).expect(201)).body;
      const outbox = t.app.get(WebhookOutboxRepository);
      for (const key of ['first', 'second', 'third']) {
        await t.app
          .get(UnitOfWork)
          .run(() =>
            outbox.enqueue(trustOrganizationId(org.id), 'flag.updated', { flag_id: key, flag_key: key, app_id: 'a' }),
          );
      }
      const page = await agent.get(`/api/v1/org/webhooks/${id}/deliveries?per=2`).expect(200);
      expect(page.body.metadata).toEqual({ page: 1, per: 2, total: 3 });
      expect(page.body.items.map((item: { payload: Payload }) => item.payload.data.flag_key)).toEqual([
        'third',
        'second',
      ]);
      const last = await agent.get(`/api/v1/org/webhooks/${id}/deliveries?per=2&page=2`).expect(200);
      expect(last.body.items.map((item: { payload: Payload }) => item.payload.data.flag_key)).toEqual(['first']);

      await agent.get(`/api/v1/org/webhooks/${id}/deliveries?per=101`).expect(400);
      await agent.get(`/api/v1/org/webhooks/${id}/deliveries?page=0`).expect(400);
      const unknown = '00000000-0000-4000-8000-000000000000';
      await agent.post(`/api/v1/org/webhooks/${id}/deliveries/${unknown}/retry`).expect(404);
      await agent.post(`/api/v1/org/webhooks/${id}/deliveries/nope/retry`).expect(400);
      // Delivered by the scheduled sweep, without anyone asking.
      await eventually(() => target.received.length === 3);
    });
  });

  describe('device events from attestation', () => {
    interface SdkApp {
      id: string;
      bundleId: string;
      org: TestOrg;
      owner: HttpClient;
    }

    let sequence = 0;
    async function registerApp(
      app: Record<string, unknown> = {},
      owner?: { org: TestOrg; agent: HttpClient },
    ): Promise<SdkApp> {
      const { org, agent } = owner ?? (await orgWithMember(t, { tier: 'professional' }));
      const bundleId = `com.example.hooks${++sequence}`;
      const created = await agent
        .post('/api/v1/apps')
        .send({ appName: `App ${sequence}`, bundleId, teamId: TEAM_ID, ...app })
        .expect(201);
      return { id: created.body.id, bundleId, org, owner: agent };
    }

    async function listen(app: SdkApp, events: WebhookEventName[] = DEVICE_EVENTS): Promise<WebhookReceiver> {
      const target = await receivers.start();
      await create(app.owner, { url: target.url, events }).expect(201);
      return target;
    }

    function sdk(app: SdkApp, path: string) {
      return t.http().post(path).set('X-Bundle-ID', app.bundleId).set('X-Team-ID', TEAM_ID);
    }

    async function challenge(app: SdkApp): Promise<string> {
      const response = await t
        .http()
        .get('/api/v1/attestation/challenge')
        .set('X-Bundle-ID', app.bundleId)
        .set('X-Team-ID', TEAM_ID)
        .expect(200);
      return response.body.challenge as string;
    }

    async function attest(
      app: SdkApp,
      device: FabricatedDevice,
      extra: Record<string, unknown> = {},
      options: { environment?: 'development' | 'production'; bundleId?: string } = {},
    ) {
      const value = await challenge(app);
      const attestationObject = await device.attest({
        challenge: value,
        teamId: TEAM_ID,
        bundleId: options.bundleId ?? app.bundleId,
        environment: options.environment,
      });
      return sdk(app, '/api/v1/attestation/validate').send({
        keyId: device.keyId,
        attestationObject,
        challenge: value,
        ...extra,
      });
    }

    async function refresh(app: SdkApp, device: FabricatedDevice, counter: number) {
      const value = await challenge(app);
      const assertion = device.assert({ challenge: value, counter, teamId: TEAM_ID, bundleId: app.bundleId });
      return sdk(app, '/api/v1/attestation/refresh').send({ keyId: device.keyId, assertion, challenge: value });
    }

    /** The response, after checking its status (showing the body when it differs). */
    async function expectStatus(pending: Promise<{ status: number; body: unknown }>, status: number) {
      const response = await pending;
      expect({ status: response.status, body: response.body }).toMatchObject({ status });
      return response as { status: number; body: { code?: string } };
    }

    function payloads(target: WebhookReceiver, event: string): Payload[] {
      return target.received
        .filter((request: ReceivedWebhook) => request.event === event)
        .map((request) => JSON.parse(request.body) as Payload);
    }

    it('announces a new device with device.new and device.attested.first, once', async () => {
      const app = await registerApp();
      const target = await listen(app);
      const device = authority.createDevice();
      await expectStatus(attest(app, device, { deviceModel: 'iPhone15,2', deviceId: 'client-device-7' }), 200);

      await eventually(() => target.received.length === 2);
      const expected = {
        key_id: device.keyId,
        device_id: 'client-device-7',
        risk_score: 0,
        jailbreak_detected: false,
        device_model: 'iPhone15,2',
        os_version: 'unknown',
        app_id: app.id,
        bundle_id: app.bundleId,
      };
      expect(payloads(target, 'device.new')).toEqual([
        { event: 'device.new', timestamp: expect.any(String), data: expected },
      ]);
      expect(payloads(target, 'device.attested.first')).toEqual([
        { event: 'device.attested.first', timestamp: expect.any(String), data: expected },
      ]);

      // The same key again, and a clean refresh, announce nothing.
      await expectStatus(attest(app, device), 200);
      await expectStatus(refresh(app, device, 1), 200);
      await sleep(1_500);
      expect(target.received).toHaveLength(2);
    });

    it('announces device.high_risk above the default threshold of 50, with the threshold', async () => {
      const app = await registerApp();
      const target = await listen(app);
      const device = authority.createDevice();
      // jailbreak 40 + development environment 15 = 55: above 50, below the app's own limit of 80.
      await expectStatus(attest(app, device, { jailbreakDetected: true }, { environment: 'development' }), 200);

      await eventually(() => payloads(target, 'device.high_risk').length === 1);
      expect(payloads(target, 'device.high_risk')[0].data).toMatchObject({
        key_id: device.keyId,
        risk_score: 55,
        threshold: 50,
        jailbreak_detected: true,
        device_model: 'unknown',
      });
    });

    it('announces device.high_risk again on a refresh above the threshold, and not on one below it', async () => {
      const app = await registerApp();
      const target = await listen(app);
      const risky = authority.createDevice();
      const clean = authority.createDevice();
      await expectStatus(attest(app, risky, { jailbreakDetected: true }, { environment: 'development' }), 200);
      await expectStatus(attest(app, clean, {}, { environment: 'development' }), 200);
      const refreshed = await expectStatus(refresh(app, risky, 1), 200);
      expect((refreshed.body as { riskScore?: number }).riskScore).toBe(55);
      // Development alone scores 15: admitted, below 50, nothing to announce.
      const calm = await expectStatus(refresh(app, clean, 1), 200);
      expect((calm.body as { riskScore?: number }).riskScore).toBe(15);

      await eventually(() => payloads(target, 'device.high_risk').length === 2);
      expect(payloads(target, 'device.high_risk').map((payload) => payload.data.key_id)).toEqual([
        risky.keyId,
        risky.keyId,
      ]);
    });

    it('announces a refusal with device.attestation_failed, and device.high_risk when it was for risk', async () => {
      const app = await registerApp({ riskThresholds: { maxAllowedRiskScore: 30 } });
      const target = await listen(app);
      const risky = authority.createDevice();
      const refused = await expectStatus(
        attest(app, risky, { jailbreakDetected: true }, { environment: 'development' }),
        403,
      );
      expect(refused.body.code).toBe('risk_threshold_exceeded');
      const forged = authority.createDevice();
      const mismatch = await expectStatus(attest(app, forged, {}, { bundleId: 'com.someone.else' }), 401);

      await eventually(
        () =>
          payloads(target, 'device.attestation_failed').length === 2 &&
          payloads(target, 'device.high_risk').length === 1,
      );
      const failures = payloads(target, 'device.attestation_failed').map((payload) => payload.data);
      expect(failures).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            key_id: risky.keyId,
            error_code: 'risk_threshold_exceeded',
            risk_score: 55,
            jailbreak_detected: true,
          }),
          expect.objectContaining({
            key_id: forged.keyId,
            error_code: mismatch.body.code,
            risk_score: 0,
            device_model: 'unknown',
            os_version: 'unknown',
          }),
        ]),
      );
      // The refused new device was rolled back; the payloads still describe it as it was scored.
      expect(payloads(target, 'device.high_risk')[0].data).toMatchObject({
        key_id: risky.keyId,
        risk_score: 55,
        threshold: 50,
        jailbreak_detected: true,
      });
      expect(payloads(target, 'device.new')).toEqual([]);
    });

    it('announces attestation.anomaly for a counter regression and for a burst of failures', async () => {
      const app = await registerApp();
      const target = await listen(app, ['attestation.anomaly']);
      const device = authority.createDevice();
      await expectStatus(attest(app, device), 200);
      await expectStatus(refresh(app, device, 3), 200);
      for (let i = 0; i < 5; i++) {
        expect((await expectStatus(refresh(app, device, 2), 401)).body.code).toBe('counter_not_increasing');
      }

      await eventually(() => target.received.length === 6);
      const anomalies = payloads(target, 'attestation.anomaly').map((payload) => payload.data);
      expect(anomalies.filter((data) => data.pattern === 'counter_regression')).toHaveLength(5);
      expect(anomalies.filter((data) => data.pattern === 'failure_burst')).toEqual([
        expect.objectContaining({
          key_id: device.keyId,
          error_code: 'counter_not_increasing',
          detail: expect.stringContaining('5 failed'),
        }),
      ]);
    });

    it('reports the risk score computed for each failed attempt, not the stored one, in failure and anomaly webhooks and events', async () => {
      const app = await registerApp();
      const target = await listen(app, ['device.attestation_failed', 'attestation.anomaly']);
      const device = authority.createDevice();
      await expectStatus(attest(app, device), 200);
      await expectStatus(refresh(app, device, 3), 200);
      for (let i = 0; i < 6; i++) {
        expect((await expectStatus(refresh(app, device, 2), 401)).body.code).toBe('counter_not_increasing');
      }
      // Each failure counts: 5 per failure (at most 25) + 15 per counter anomaly (at most 30).
      const expected = [20, 40, 45, 50, 55, 55];
      await eventually(() => payloads(target, 'device.attestation_failed').length === 6);
      const scores = (event: string, pattern?: string) =>
        payloads(target, event)
          .filter((payload) => !pattern || payload.data.pattern === pattern)
          .map((payload) => payload.data.risk_score as number)
          .sort((a, b) => a - b);
      expect(scores('device.attestation_failed')).toEqual(expected);
      await eventually(
        () =>
          payloads(target, 'attestation.anomaly').filter((p) => p.data.pattern === 'counter_regression').length === 6,
      );
      expect(scores('attestation.anomaly', 'counter_regression')).toEqual(expected);
      const events = await t.sql<{ risk_score: number }>(
        `SELECT risk_score FROM device_events WHERE key_id = $1 AND result = 'failure' ORDER BY created_at, risk_score`,
        [device.keyId],
      );
      expect(events.map((row) => row.risk_score)).toEqual(expected);
      // The stored score follows the failures: it is the one of the latest refused attempt.
      const [stored] = await t.sql<{ risk_score: number }>(`SELECT risk_score FROM devices WHERE key_id = $1`, [
        device.keyId,
      ]);
      expect(stored.risk_score).toBe(55);
    });

    it('announces attestation.anomaly for a key already attested for another app of the organization', async () => {
      const first = await registerApp();
      const second = await registerApp({}, { org: first.org, agent: first.owner });
      const target = await listen(first, ['attestation.anomaly']);
      const device = authority.createDevice();
      await expectStatus(attest(first, device), 200);
      // The same key presented to the other app (its attestation names the first app).
      await expectStatus(attest(second, device, {}, { bundleId: first.bundleId }), 401);

      await eventually(() => target.received.length === 1);
      expect(payloads(target, 'attestation.anomaly')[0].data).toMatchObject({
        pattern: 'key_seen_in_multiple_apps',
        key_id: device.keyId,
        app_id: second.id,
      });
    });

    it('announces nothing for an app with webhooks disabled', async () => {
      const app = await registerApp();
      await app.owner.put(`/api/v1/apps/${app.id}`).send({ webhookEnabled: false }).expect(200);
      const target = await listen(app);
      await expectStatus(
        attest(app, authority.createDevice(), { jailbreakDetected: true }, { environment: 'development' }),
        200,
      );
      await expectStatus(attest(app, authority.createDevice(), {}, { bundleId: 'com.someone.else' }), 401);
      await sleep(1_500);
      expect(target.received).toEqual([]);
      const [{ events }] = await t.sql<{ events: number }>(
        `SELECT count(*)::int AS events FROM webhook_events WHERE organization_id = $1`,
        [app.org.id],
      );
      expect(events).toBe(0);
    });
  });
});
