import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { createApiKey, createUser, orgWithMember, signIn, type TestOrg } from '../factories/identity.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { fabricatedRootEnv } from '../support/sdk-client.js';
import {
  appAttestAuthority,
  type FabricatedAuthority,
  type FabricatedDevice,
} from '../support/app-attest-fabricator.js';

const TEAM_ID = 'DEVICES123';

interface Tenant {
  org: TestOrg;
  owner: HttpClient;
  appId: string;
  bundleId: string;
}

interface DeviceSeed {
  appId: string;
  keyId?: string;
  clientDeviceId?: string;
  deviceModel?: string | null;
  osVersion?: string | null;
  appVersion?: string | null;
  country?: string | null;
  riskScore?: number;
  jailbreak?: boolean;
  attestationCount?: number;
  environment?: 'development' | 'production';
  platform?: 'ios' | 'android';
  /** Minutes before now. */
  lastSeenMinutesAgo?: number;
  failureCount?: number;
}

interface EventSeed {
  appId: string;
  keyId: string;
  type?: 'attestation' | 'assertion';
  result?: 'success' | 'failure';
  errorCode?: string | null;
  riskScore?: number | null;
  createdAt: Date;
}

/** A standard base64 key id that needs URL encoding: it holds `/`, `+` and padding. */
function awkwardKeyId(): string {
  return `/+${randomBytes(30).toString('base64').slice(0, 40)}+/=`;
}

describe('devices and analytics', () => {
  let t: TestApp;
  let authority: FabricatedAuthority;

  beforeAll(async () => {
    authority = await appAttestAuthority();
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  let sequence = 0;
  async function tenant(tier = 'free'): Promise<Tenant> {
    const { org, agent } = await orgWithMember(t, { tier });
    const bundleId = `com.devices${randomUUID().slice(0, 8)}.app${++sequence}`;
    const created = await agent
      .post('/api/v1/apps')
      .send({ appName: `App ${sequence}`, bundleId, teamId: TEAM_ID })
      .expect(201);
    return { org, owner: agent, appId: created.body.id as string, bundleId };
  }

  async function secondApp(owner: HttpClient): Promise<string> {
    const bundleId = `com.devices${randomUUID().slice(0, 8)}.second`;
    const created = await owner.post('/api/v1/apps').send({ appName: 'Second', bundleId, teamId: TEAM_ID }).expect(201);
    return created.body.id as string;
  }

  async function seedDevice(org: TestOrg, seed: DeviceSeed): Promise<string> {
    const keyId = seed.keyId ?? randomBytes(32).toString('base64');
    const minutes = seed.lastSeenMinutesAgo ?? 0;
    await t.sql(
      `INSERT INTO devices (organization_id, app_id, key_id, public_key_pem, environment, client_device_id, device_model,
                            os_version, app_version, country, jailbreak_detected, risk_score, attestation_count,
                            failure_count, first_seen_at, last_seen_at, updated_at, platform)
       VALUES ($1, $2, $3, 'pem', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
               now() - make_interval(days => 3), now() - make_interval(mins => $14), now() - make_interval(mins => $14),
               $15)`,
      [
        org.id,
        seed.appId,
        keyId,
        seed.environment ?? 'production',
        seed.clientDeviceId ?? '',
        seed.deviceModel === undefined ? 'iPhone15,2' : seed.deviceModel,
        seed.osVersion === undefined ? '17.4' : seed.osVersion,
        seed.appVersion === undefined ? '2.1.0' : seed.appVersion,
        seed.country === undefined ? 'DE' : seed.country,
        seed.jailbreak ?? false,
        seed.riskScore ?? 0,
        seed.attestationCount ?? 1,
        seed.failureCount ?? 0,
        minutes,
        seed.platform ?? 'ios',
      ],
    );
    return keyId;
  }

  async function seedEvent(org: TestOrg, seed: EventSeed): Promise<string> {
    const [row] = await t.sql<{ id: string }>(
      `INSERT INTO device_events (organization_id, app_id, key_id, event_type, result, error_code, risk_score, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [
        org.id,
        seed.appId,
        seed.keyId,
        seed.type ?? 'attestation',
        seed.result ?? 'success',
        seed.errorCode ?? null,
        seed.riskScore === undefined ? 0 : seed.riskScore,
        seed.createdAt,
      ],
    );
    return row.id;
  }

  async function memberOf(org: TestOrg, role: 'viewer' | 'member' | 'admin'): Promise<HttpClient> {
    const user = await createUser(t, { org, role });
    return signIn(t, user.email);
  }

  function fields(response: { body: { fields?: { field: string }[] } }): string[] {
    return (response.body.fields ?? []).map((field) => field.field);
  }

  describe('GET /api/v1/devices', () => {
    it('lists the organization devices newest lastSeenAt first with items and metadata, to a viewer', async () => {
      const { org, appId } = await tenant();
      const older = await seedDevice(org, { appId, lastSeenMinutesAgo: 30, clientDeviceId: 'client-older' });
      const newer = await seedDevice(org, {
        appId,
        lastSeenMinutesAgo: 1,
        deviceModel: 'iPad13,4',
        osVersion: '16.0',
        appVersion: '1.0.0',
        country: null,
        riskScore: 55,
        jailbreak: true,
        attestationCount: 7,
        environment: 'development',
        platform: 'android',
      });
      const other = await tenant();
      await seedDevice(other.org, { appId: other.appId });

      const viewer = await memberOf(org, 'viewer');
      const response = await viewer.get('/api/v1/devices').expect(200);
      expect(response.body.metadata).toEqual({ page: 1, per: 20, total: 2 });
      expect(response.body.items.map((item: { keyId: string }) => item.keyId)).toEqual([newer, older]);
      expect(response.body.items[0]).toEqual({
        keyId: newer,
        appId,
        platform: 'android',
        deviceId: '',
        deviceModel: 'iPad13,4',
        osVersion: '16.0',
        appVersion: '1.0.0',
        country: null,
        riskScore: 55,
        jailbreakDetected: true,
        attestationCount: 7,
        environment: 'development',
        isBlocked: false,
        blockedReason: null,
        firstSeenAt: expect.any(String),
        lastSeenAt: expect.any(String),
      });
      expect(response.body.items[1]).toMatchObject({ deviceId: 'client-older', platform: 'ios' });
    });

    it('pages with page and per (default 20, at most 100)', async () => {
      const { org, owner, appId } = await tenant();
      const keys: string[] = [];
      for (let i = 0; i < 25; i++) keys.push(await seedDevice(org, { appId, lastSeenMinutesAgo: i }));

      const first = await owner.get('/api/v1/devices').expect(200);
      expect(first.body.items).toHaveLength(20);
      expect(first.body.metadata).toEqual({ page: 1, per: 20, total: 25 });
      const second = await owner.get('/api/v1/devices?page=2').expect(200);
      expect(second.body.items.map((item: { keyId: string }) => item.keyId)).toEqual(keys.slice(20));
      const small = await owner.get('/api/v1/devices?page=3&per=4').expect(200);
      expect(small.body.items.map((item: { keyId: string }) => item.keyId)).toEqual(keys.slice(8, 12));
      expect(small.body.metadata).toEqual({ page: 3, per: 4, total: 25 });
      const beyond = await owner.get('/api/v1/devices?page=9').expect(200);
      expect(beyond.body).toEqual({ items: [], metadata: { page: 9, per: 20, total: 25 } });
      expect((await owner.get('/api/v1/devices?per=100').expect(200)).body.items).toHaveLength(25);
    });

    it('filters by appId, by a case-insensitive search of key id, model or client id, by minRisk and by platform', async () => {
      const { org, owner, appId } = await tenant();
      const otherAppId = await secondApp(owner);
      const alpha = await seedDevice(org, {
        appId,
        keyId: `AbCdEf${randomBytes(16).toString('base64')}`,
        riskScore: 10,
      });
      const beta = await seedDevice(org, { appId, deviceModel: 'iPhone14,7', riskScore: 70 });
      const gamma = await seedDevice(org, {
        appId: otherAppId,
        clientDeviceId: 'Vendor-XYZ-42',
        riskScore: 40,
        platform: 'android',
      });
      const keysOf = (response: { body: { items: { keyId: string }[] } }) =>
        response.body.items.map((item) => item.keyId).sort();

      expect(keysOf(await owner.get(`/api/v1/devices?appId=${appId}`).expect(200))).toEqual([alpha, beta].sort());
      expect(keysOf(await owner.get(`/api/v1/devices?appId=${otherAppId}`).expect(200))).toEqual([gamma]);
      expect(keysOf(await owner.get('/api/v1/devices?search=abcdef').expect(200))).toEqual([alpha]);
      expect(keysOf(await owner.get('/api/v1/devices?search=IPHONE14').expect(200))).toEqual([beta]);
      expect(keysOf(await owner.get('/api/v1/devices?search=xyz-4').expect(200))).toEqual([gamma]);
      expect(keysOf(await owner.get('/api/v1/devices?search=100%25').expect(200))).toEqual([]);
      expect(keysOf(await owner.get('/api/v1/devices?minRisk=40').expect(200))).toEqual([beta, gamma].sort());
      const combined = await owner.get(`/api/v1/devices?minRisk=40&appId=${appId}`).expect(200);
      expect(keysOf(combined)).toEqual([beta]);
      expect(combined.body.metadata.total).toBe(1);
      expect(keysOf(await owner.get('/api/v1/devices?platform=android').expect(200))).toEqual([gamma]);
      expect(keysOf(await owner.get('/api/v1/devices?platform=ios').expect(200))).toEqual([alpha, beta].sort());
      const iosRisky = await owner.get('/api/v1/devices?platform=ios&minRisk=40').expect(200);
      expect([keysOf(iosRisky), iosRisky.body.metadata.total]).toEqual([[beta], 1]);
      // Another organization's app id finds nothing rather than leaking its devices.
      const stranger = await tenant();
      await seedDevice(stranger.org, { appId: stranger.appId });
      expect((await owner.get(`/api/v1/devices?appId=${stranger.appId}`).expect(200)).body.metadata.total).toBe(0);
    });

    it('answers 422 naming the field for an invalid query', async () => {
      const { owner } = await tenant();
      for (const [query, field] of [
        ['per=101', 'per'],
        ['per=0', 'per'],
        ['page=0', 'page'],
        ['page=abc', 'page'],
        ['appId=not-a-uuid', 'appId'],
        ['minRisk=101', 'minRisk'],
        ['minRisk=-1', 'minRisk'],
        ['minRisk=high', 'minRisk'],
        ['platform=windows', 'platform'],
        ['sort=oldest', 'sort'],
      ]) {
        const response = await owner.get(`/api/v1/devices?${query}`).expect(422);
        expect(response.body.code).toBe('unprocessable_entity');
        expect(fields(response)).toContain(field);
      }
    });

    it('needs a dashboard session', async () => {
      const { org } = await tenant();
      await t.http().get('/api/v1/devices').expect(401);
      const key = await createApiKey(t, org, ['org:read']);
      await t.http().get('/api/v1/devices').set('X-API-Key', key).expect(401);
    });
  });

  describe('GET /api/v1/analytics/devices/:keyId', () => {
    it('returns the device details with the last 20 events, to a viewer session', async () => {
      const { org, appId } = await tenant('professional');
      const keyId = awkwardKeyId();
      await seedDevice(org, { appId, keyId, riskScore: 20, attestationCount: 4, lastSeenMinutesAgo: 5 });
      const base = Date.now() - 3_600_000;
      for (let i = 0; i < 25; i++) {
        await seedEvent(org, {
          appId,
          keyId,
          type: i === 0 ? 'attestation' : 'assertion',
          result: i % 5 === 4 ? 'failure' : 'success',
          riskScore: i % 5 === 4 ? null : i,
          errorCode: i % 5 === 4 ? 'counter_not_increasing' : null,
          createdAt: new Date(base + i * 60_000),
        });
      }
      // Another key's events are not this device's.
      await seedEvent(org, { appId, keyId: 'someone-else', createdAt: new Date() });

      const viewer = await memberOf(org, 'viewer');
      const response = await viewer.get(`/api/v1/analytics/devices/${encodeURIComponent(keyId)}`).expect(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      expect(response.body).toEqual({
        keyId,
        platform: 'ios',
        deviceProfile: {
          deviceModel: 'iPhone15,2',
          osVersion: '17.4',
          appVersion: '2.1.0',
          riskScore: 20,
          jailbreakDetected: false,
          attestationCount: 4,
          firstSeenAt: expect.any(String),
          lastSeenAt: expect.any(String),
        },
        recentEvents: expect.any(Array),
        complianceStatus: {
          isCompliant: true,
          checks: [
            { name: 'max_risk_score', passed: true, expected: 50, actual: 20 },
            { name: 'not_blocked', passed: true, expected: false, actual: false },
          ],
        },
        lastUpdated: expect.any(String),
        failuresByCode: [{ code: 'counter_not_increasing', count: 5, lastSeen: expect.any(String) }],
        dailyFailures: expect.any(Array),
      });
      const days = response.body.dailyFailures as { total: number }[];
      expect(days.reduce((sum, day) => sum + day.total, 0)).toBe(5);
      const events = response.body.recentEvents as {
        type: string;
        result: string;
        riskScore: number | null;
        timestamp: string;
      }[];
      expect(events).toHaveLength(20);
      expect(events[0]).toEqual({
        type: 'assertion',
        result: 'failure',
        riskScore: null,
        timestamp: new Date(base + 24 * 60_000).toISOString(),
      });
      expect(events[1]).toEqual({
        type: 'assertion',
        result: 'success',
        riskScore: 23,
        timestamp: new Date(base + 23 * 60_000).toISOString(),
      });
      expect(events[19].timestamp).toBe(new Date(base + 5 * 60_000).toISOString());
      expect(new Date(response.body.lastUpdated).getTime()).toBeGreaterThanOrEqual(
        new Date(response.body.deviceProfile.lastSeenAt).getTime(),
      );
    });

    it('reports a device above the default maximum risk of 50 as not compliant', async () => {
      const { org, owner, appId } = await tenant('professional');
      const risky = await seedDevice(org, { appId, riskScore: 51 });
      const jailbroken = await seedDevice(org, { appId, riskScore: 0, jailbreak: true });
      const borderline = await seedDevice(org, { appId, riskScore: 50 });
      const status = async (keyId: string): Promise<unknown> => {
        const response = await owner.get(`/api/v1/analytics/devices/${encodeURIComponent(keyId)}`).expect(200);
        return response.body.complianceStatus;
      };
      const maxRisk = (actual: number, passed: boolean) => ({ name: 'max_risk_score', passed, expected: 50, actual });
      const notBlocked = { name: 'not_blocked', passed: true, expected: false, actual: false };
      expect(await status(risky)).toEqual({ isCompliant: false, checks: [maxRisk(51, false), notBlocked] });
      expect(await status(borderline)).toEqual({ isCompliant: true, checks: [maxRisk(50, true), notBlocked] });
      // A jailbreak counts through its risk weight; alone it fails only with compliance blockOnJailbreak.
      expect(await status(jailbroken)).toEqual({ isCompliant: true, checks: [maxRisk(0, true), notBlocked] });
    });

    it('accepts an org:read API key as X-API-Key or Bearer, with the apikey rate-limit headers', async () => {
      const { org, appId } = await tenant('professional');
      const keyId = awkwardKeyId();
      await seedDevice(org, { appId, keyId });
      const key = await createApiKey(t, org, ['org:read']);
      const path = `/api/v1/analytics/devices/${encodeURIComponent(keyId)}`;

      const byHeader = await t.http().get(path).set('X-API-Key', key).expect(200);
      expect(byHeader.body.keyId).toBe(keyId);
      expect(byHeader.headers['x-ratelimit-limit']).toBe('1000');
      expect(Number(byHeader.headers['x-ratelimit-remaining'])).toBe(999);
      expect(Number(byHeader.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);

      const byBearer = await t.http().get(path).set('Authorization', `Bearer ${key}`).expect(200);
      expect(byBearer.body.keyId).toBe(keyId);
      expect(byBearer.headers['x-ratelimit-remaining']).toBe('998');
    });

    it('refuses an API key without org:read (403) and a request without credentials (401)', async () => {
      const { org, appId } = await tenant('professional');
      const keyId = await seedDevice(org, { appId });
      const path = `/api/v1/analytics/devices/${encodeURIComponent(keyId)}`;
      const feedbackKey = await createApiKey(t, org, ['feedback:read']);
      expect((await t.http().get(path).set('X-API-Key', feedbackKey).expect(403)).body.code).toBe('forbidden');
      await t.http().get(path).expect(401);
      await t.http().get(path).set('X-API-Key', 'service_not-a-real-key-at-all').expect(401);
    });

    it('answers 404 for an unknown key and for another organization key', async () => {
      const { org, owner } = await tenant('professional');
      const other = await tenant('professional');
      const foreign = await seedDevice(other.org, { appId: other.appId });
      const key = await createApiKey(t, org, ['org:read']);
      expect(
        (await owner.get(`/api/v1/analytics/devices/${encodeURIComponent(awkwardKeyId())}`).expect(404)).body.code,
      ).toBe('not_found');
      await owner.get(`/api/v1/analytics/devices/${encodeURIComponent(foreign)}`).expect(404);
      await t
        .http()
        .get(`/api/v1/analytics/devices/${encodeURIComponent(foreign)}`)
        .set('X-API-Key', key)
        .expect(404);
    });

    it('is the deviceIntelligence feature: 403 feature_unavailable below Business', async () => {
      for (const tier of ['free', 'basic']) {
        const { org, owner, appId } = await tenant(tier);
        const keyId = await seedDevice(org, { appId });
        const path = `/api/v1/analytics/devices/${encodeURIComponent(keyId)}`;
        expect((await owner.get(path).expect(403)).body.code).toBe('feature_unavailable');
        const key = await createApiKey(t, org, ['org:read']);
        expect((await t.http().get(path).set('X-API-Key', key).expect(403)).body.code).toBe('feature_unavailable');
      }
    });

    it('answers 429 with Retry-After once a Free organization used its 30 API-key requests this minute', async () => {
      const { org, appId } = await tenant('free');
      await seedDevice(org, { appId });
      const key = await createApiKey(t, org, ['org:read']);
      // The API-key bucket is shared by the analytics routes; Free reads events (device details are Business).
      const path = `/api/v1/analytics/events?appId=${appId}`;
      for (let i = 0; i < 30; i++) {
        const response = await t.http().get(path).set('X-API-Key', key).expect(200);
        expect(response.headers['x-ratelimit-remaining']).toBe(String(29 - i));
      }
      const refused = await t.http().get(path).set('X-API-Key', key).expect(429);
      expect(refused.body.code).toBe('rate_limited');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['x-ratelimit-limit']).toBe('30');
      // A dashboard session is not counted against the API-key bucket.
      const viewer = await memberOf(org, 'viewer');
      await viewer.get(path).expect(200);
    });
  });

  describe('GET /api/v1/analytics/events', () => {
    it('lists the organization events newest first as data and meta, with filters', async () => {
      const { org, owner, appId } = await tenant();
      const otherAppId = await secondApp(owner);
      const keyA = awkwardKeyId();
      const keyB = awkwardKeyId();
      const start = new Date('2025-03-01T00:00:00Z').getTime();
      const at = (hours: number) => new Date(start + hours * 3_600_000);
      const ids = {
        first: await seedEvent(org, { appId, keyId: keyA, type: 'attestation', createdAt: at(0), riskScore: 5 }),
        failure: await seedEvent(org, {
          appId,
          keyId: keyA,
          type: 'assertion',
          result: 'failure',
          errorCode: 'signature_invalid',
          riskScore: null,
          createdAt: at(1),
        }),
        refresh: await seedEvent(org, { appId, keyId: keyA, type: 'assertion', createdAt: at(2), riskScore: 10 }),
        otherApp: await seedEvent(org, { appId: otherAppId, keyId: keyB, type: 'attestation', createdAt: at(3) }),
      };
      const stranger = await tenant();
      await seedEvent(stranger.org, { appId: stranger.appId, keyId: keyA, createdAt: at(4) });

      const all = await owner.get('/api/v1/analytics/events').expect(200);
      expect(all.body.meta).toEqual({ page: 1, perPage: 50, total: 4, totalPages: 1 });
      expect(all.body.data.map((event: { id: string }) => event.id)).toEqual([
        ids.otherApp,
        ids.refresh,
        ids.failure,
        ids.first,
      ]);
      expect(all.body.data[2]).toEqual({
        id: ids.failure,
        appId,
        keyId: keyA,
        type: 'assertion',
        result: 'failure',
        errorCode: 'signature_invalid',
        riskScore: null,
        debug: false,
        createdAt: at(1).toISOString(),
      });

      const idsOf = async (query: string): Promise<string[]> => {
        const response = await owner.get(`/api/v1/analytics/events?${query}`).expect(200);
        return (response.body.data as { id: string }[]).map((event) => event.id);
      };
      expect(await idsOf(`appId=${otherAppId}`)).toEqual([ids.otherApp]);
      expect(await idsOf(`keyId=${encodeURIComponent(keyA)}`)).toEqual([ids.refresh, ids.failure, ids.first]);
      expect(await idsOf('result=failure')).toEqual([ids.failure]);
      expect(await idsOf('type=attestation')).toEqual([ids.otherApp, ids.first]);
      expect(
        await idsOf(`from=${encodeURIComponent(at(1).toISOString())}&to=${encodeURIComponent(at(2).toISOString())}`),
      ).toEqual([ids.refresh, ids.failure]);
      expect(await idsOf(`type=assertion&result=success&appId=${appId}`)).toEqual([ids.refresh]);
    });

    it('pages with page and perPage (default 50, at most 100)', async () => {
      const { org, owner, appId } = await tenant();
      const keyId = awkwardKeyId();
      const start = Date.now() - 86_400_000;
      const ids: string[] = [];
      for (let i = 0; i < 55; i++)
        ids.unshift(await seedEvent(org, { appId, keyId, createdAt: new Date(start + i * 1000) }));

      const first = await owner.get('/api/v1/analytics/events').expect(200);
      expect(first.body.data).toHaveLength(50);
      expect(first.body.meta).toEqual({ page: 1, perPage: 50, total: 55, totalPages: 2 });
      const second = await owner.get('/api/v1/analytics/events?page=2').expect(200);
      expect(second.body.data.map((event: { id: string }) => event.id)).toEqual(ids.slice(50));
      const small = await owner.get('/api/v1/analytics/events?page=2&perPage=10').expect(200);
      expect(small.body.data.map((event: { id: string }) => event.id)).toEqual(ids.slice(10, 20));
      expect(small.body.meta).toEqual({ page: 2, perPage: 10, total: 55, totalPages: 6 });
      expect((await owner.get('/api/v1/analytics/events?perPage=100').expect(200)).body.data).toHaveLength(55);
    });

    it('answers 422 naming the field for an invalid query', async () => {
      const { owner } = await tenant();
      for (const [query, field] of [
        ['perPage=101', 'perPage'],
        ['perPage=0', 'perPage'],
        ['page=0', 'page'],
        ['appId=123', 'appId'],
        ['result=maybe', 'result'],
        ['type=login', 'type'],
        ['from=yesterday', 'from'],
        ['to=2025-13-45T00:00:00Z', 'to'],
        ['from=2025-03-02T00:00:00Z&to=2025-03-01T00:00:00Z', 'to'],
        ['per=10', 'per'],
      ]) {
        const response = await owner.get(`/api/v1/analytics/events?${query}`).expect(422);
        expect(fields(response)).toContain(field);
      }
    });

    it('accepts an org:read key with rate-limit headers and refuses a feedback:read key', async () => {
      const { org, appId } = await tenant();
      await seedEvent(org, { appId, keyId: awkwardKeyId(), createdAt: new Date() });
      const key = await createApiKey(t, org, ['org:read']);
      const response = await t.http().get('/api/v1/analytics/events').set('X-API-Key', key).expect(200);
      expect(response.body.meta.total).toBe(1);
      expect(response.headers['x-ratelimit-limit']).toBe('30');
      const feedbackKey = await createApiKey(t, org, ['feedback:read']);
      await t.http().get('/api/v1/analytics/events').set('Authorization', `Bearer ${feedbackKey}`).expect(403);
    });
  });

  describe('POST /api/v1/devices/:keyId/block and /unblock', () => {
    it('blocks every device row of the key in the organization, audited, for an Admin', async () => {
      const { org, owner, appId } = await tenant('professional');
      const otherAppId = await secondApp(owner);
      const keyId = awkwardKeyId();
      await seedDevice(org, { appId, keyId, riskScore: 15, environment: 'development' });
      await seedDevice(org, { appId: otherAppId, keyId, riskScore: 0 });
      const bystander = await seedDevice(org, { appId });
      const admin = await memberOf(org, 'admin');
      const path = `/api/v1/devices/${encodeURIComponent(keyId)}`;

      const blocked = await admin.post(`${path}/block`).send({ reason: '  Fraudulent refunds  ' }).expect(200);
      expect(blocked.body).toMatchObject({ keyId, isBlocked: true, blockedReason: 'Fraudulent refunds' });
      expect(blocked.body.devices).toHaveLength(2);
      expect(
        blocked.body.devices.every(
          (device: { isBlocked: boolean; riskScore: number }) => device.isBlocked && device.riskScore === 100,
        ),
      ).toBe(true);
      const rows = await t.sql<{
        app_id: string;
        is_blocked: boolean;
        blocked_reason: string | null;
        risk_score: number;
      }>(
        `SELECT app_id, is_blocked, blocked_reason, risk_score FROM devices WHERE organization_id = $1 AND key_id = $2 ORDER BY app_id`,
        [org.id, keyId],
      );
      expect(rows.map((row) => [row.is_blocked, row.blocked_reason, row.risk_score])).toEqual([
        [true, 'Fraudulent refunds', 100],
        [true, 'Fraudulent refunds', 100],
      ]);
      const [untouched] = await t.sql<{ is_blocked: boolean }>(`SELECT is_blocked FROM devices WHERE key_id = $1`, [
        bystander,
      ]);
      expect(untouched.is_blocked).toBe(false);

      const listed = await admin.get('/api/v1/devices?minRisk=100').expect(200);
      expect(
        listed.body.items.map((item: { keyId: string; isBlocked: boolean }) => [item.keyId, item.isBlocked]),
      ).toEqual([
        [keyId, true],
        [keyId, true],
      ]);
      const details = await admin
        .get(`/api/v1/analytics/devices/${encodeURIComponent(keyId)}?appId=${appId}`)
        .expect(200);
      expect(details.body.complianceStatus.isCompliant).toBe(false);

      // Unblocking rescores the device from its signals: development environment weighs 15.
      const unblocked = await admin.post(`${path}/unblock`).expect(200);
      expect(unblocked.body).toMatchObject({ keyId, isBlocked: false, blockedReason: null });
      const after = await t.sql<{
        app_id: string;
        is_blocked: boolean;
        blocked_reason: string | null;
        risk_score: number;
      }>(`SELECT app_id, is_blocked, blocked_reason, risk_score FROM devices WHERE key_id = $1`, [keyId]);
      expect(
        Object.fromEntries(after.map((row) => [row.app_id, [row.is_blocked, row.blocked_reason, row.risk_score]])),
      ).toEqual({
        [appId]: [false, null, 15],
        [otherAppId]: [false, null, 0],
      });

      const audit = await t.sql<{
        action: string;
        resource_type: string;
        resource_id: string;
        metadata: Record<string, unknown>;
      }>(
        `SELECT action, resource_type, resource_id, metadata FROM audit_logs
          WHERE organization_id = $1 AND action LIKE 'device.%' ORDER BY created_at`,
        [org.id],
      );
      expect(audit.map((entry) => [entry.action, entry.resource_type, entry.resource_id])).toEqual([
        ['device.blocked', 'device', keyId],
        ['device.unblocked', 'device', keyId],
      ]);
      expect(audit[0].metadata).toMatchObject({
        reason: 'Fraudulent refunds',
        appIds: expect.arrayContaining([appId, otherAppId]),
      });
    });

    it('refuses members and viewers (403), 404s unknown and foreign keys, and validates the reason', async () => {
      const { org, appId } = await tenant();
      const keyId = await seedDevice(org, { appId });
      const path = `/api/v1/devices/${encodeURIComponent(keyId)}`;
      const member = await memberOf(org, 'member');
      const viewer = await memberOf(org, 'viewer');
      await member.post(`${path}/block`).send({}).expect(403);
      await viewer.post(`${path}/unblock`).expect(403);
      const key = await createApiKey(t, org, ['org:read']);
      await t.http().post(`${path}/block`).set('X-API-Key', key).send({}).expect(401);

      const admin = await memberOf(org, 'admin');
      expect(
        (
          await admin
            .post(`/api/v1/devices/${encodeURIComponent(awkwardKeyId())}/block`)
            .send({})
            .expect(404)
        ).body.code,
      ).toBe('not_found');
      const other = await tenant();
      const foreign = await seedDevice(other.org, { appId: other.appId });
      await admin
        .post(`/api/v1/devices/${encodeURIComponent(foreign)}/block`)
        .send({})
        .expect(404);
      await admin.post(`/api/v1/devices/${encodeURIComponent(foreign)}/unblock`).expect(404);
      const [foreignRow] = await t.sql<{ is_blocked: boolean }>(`SELECT is_blocked FROM devices WHERE key_id = $1`, [
        foreign,
      ]);
      expect(foreignRow.is_blocked).toBe(false);

      const tooLong = await admin
        .post(`${path}/block`)
        .send({ reason: 'x'.repeat(501) })
        .expect(422);
      expect(fields(tooLong)).toContain('reason');
      const noReason = await admin.post(`${path}/block`).send({}).expect(200);
      expect(noReason.body).toMatchObject({ isBlocked: true, blockedReason: null });
    });

    it('end to end: a blocked device refresh gets 401 reattest_required, and works again once unblocked', async () => {
      const app = await tenant('professional');
      const device: FabricatedDevice = authority.createDevice();
      const sdk = (request: ReturnType<HttpClient['get']>) =>
        request.set('X-Bundle-ID', app.bundleId).set('X-Team-ID', TEAM_ID);
      const challenge = async () =>
        (await sdk(t.http().get('/api/v1/attestation/challenge')).expect(200)).body.challenge as string;
      const refresh = async (counter: number) => {
        const value = await challenge();
        const assertion = device.assert({ challenge: value, counter, teamId: TEAM_ID, bundleId: app.bundleId });
        return sdk(t.http().post('/api/v1/attestation/refresh')).send({
          keyId: device.keyId,
          assertion,
          challenge: value,
        });
      };

      const value = await challenge();
      const attestationObject = await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId });
      await sdk(t.http().post('/api/v1/attestation/validate'))
        .send({
          keyId: device.keyId,
          attestationObject,
          challenge: value,
          deviceModel: 'iPhone16,1',
          deviceId: 'vendor-1',
        })
        .expect(200);
      expect((await refresh(1)).status).toBe(200);

      const listed = await app.owner.get(`/api/v1/devices?search=${encodeURIComponent('VENDOR-1')}`).expect(200);
      expect(listed.body.items).toEqual([
        expect.objectContaining({
          keyId: device.keyId,
          appId: app.appId,
          deviceId: 'vendor-1',
          deviceModel: 'iPhone16,1',
          isBlocked: false,
        }),
      ]);
      const details = await app.owner.get(`/api/v1/analytics/devices/${encodeURIComponent(device.keyId)}`).expect(200);
      expect(
        details.body.recentEvents.map((event: { type: string; result: string }) => [event.type, event.result]),
      ).toEqual([
        ['assertion', 'success'],
        ['attestation', 'success'],
      ]);
      expect(details.body.deviceProfile).toMatchObject({
        deviceModel: 'iPhone16,1',
        attestationCount: 1,
        riskScore: 0,
      });

      await app.owner
        .post(`/api/v1/devices/${encodeURIComponent(device.keyId)}/block`)
        .send({ reason: 'stolen' })
        .expect(200);
      const refused = await refresh(2);
      expect(refused.status).toBe(401);
      expect(refused.body.code).toBe('reattest_required');

      await app.owner.post(`/api/v1/devices/${encodeURIComponent(device.keyId)}/unblock`).expect(200);
      expect((await refresh(3)).status).toBe(200);

      const events = await app.owner
        .get(`/api/v1/analytics/events?keyId=${encodeURIComponent(device.keyId)}`)
        .expect(200);
      // The refused refresh is in the device's history too.
      expect(events.body.data.map((event: { type: string; result: string }) => [event.type, event.result])).toEqual([
        ['assertion', 'success'],
        ['assertion', 'failure'],
        ['assertion', 'success'],
        ['attestation', 'success'],
      ]);
    });
  });
});
