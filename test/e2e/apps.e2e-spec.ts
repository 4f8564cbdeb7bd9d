import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { createOrg, createUser, orgWithMember, signIn, type TestOrg } from '../factories/identity.js';
import type { HttpClient, TestApp } from '../harness/test-app.js';
import { startTestApp } from '../harness/test-app.js';

const APPS = '/api/v1/apps';
const DAY_MS = 24 * 3600 * 1000;

interface AppBody {
  id: string;
  appName: string;
  bundleId: string;
  teamId: string;
  description: string;
  isActive: boolean;
  isPrimary: boolean;
  jwtConfiguration: Record<string, unknown>;
  riskThresholds: Record<string, unknown>;
  analyticsEnabled: boolean;
  webhookEnabled: boolean;
  createdAt: string;
  updatedAt: string;
}

const DEFAULT_JWT = {
  overrideExpirationTime: null,
  includeAppMetadata: true,
  customAudience: null,
  customIssuer: null,
};
const DEFAULT_RISK = {
  maxAllowedRiskScore: 80,
  blockOnJailbreak: false,
  minAttestationCount: 0,
  maxDeviceAge: null,
  requireAppStoreReceipt: false,
};

function bundleId(): string {
  return `com.example.app${randomUUID().slice(0, 8)}`;
}

/** Ten upper-case hex characters: a well-formed Apple team identifier. */
function teamId(): string {
  return randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase();
}

function appInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { appName: `App ${randomUUID().slice(0, 6)}`, bundleId: bundleId(), teamId: teamId(), ...overrides };
}

async function createApp(agent: HttpClient, overrides: Record<string, unknown> = {}): Promise<AppBody> {
  const response = await agent.post(APPS).send(appInput(overrides));
  expect(response.status).toBe(201);
  return response.body as AppBody;
}

async function listApps(agent: HttpClient): Promise<AppBody[]> {
  const response = await agent.get(APPS).expect(200);
  return response.body as AppBody[];
}

/** 400 `bad_request` whose message names the field, without the 422-only `fields` member. */
function expectInvalidField(response: Response, field: string): void {
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ code: 'bad_request', requestId: response.headers['x-request-id'] });
  expect(response.body.error).toContain(field);
  expect(response.body).not.toHaveProperty('fields');
}

describe('apps', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function appCount(org: TestOrg): Promise<number> {
    const [row] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM apps WHERE organization_id = $1`, [
      org.id,
    ]);
    return row.n;
  }

  async function primaryIds(org: TestOrg): Promise<string[]> {
    const rows = await t.sql<{ id: string }>(`SELECT id FROM apps WHERE organization_id = $1 AND is_primary`, [org.id]);
    return rows.map((row) => row.id);
  }

  describe('POST /api/v1/apps', () => {
    it('creates an active app with every documented field and the default JWT and risk settings', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const input = {
        appName: 'Shape App',
        bundleId: 'com.example.shape',
        teamId: 'SHAPE12345',
        description: 'The one',
      };
      const response = await agent.post(APPS).send(input).expect(201);
      const app = response.body as AppBody;
      expect(Object.keys(app).sort()).toEqual(
        [
          'id',
          'appName',
          'bundleId',
          'teamId',
          'description',
          'isActive',
          'isPrimary',
          'jwtConfiguration',
          'riskThresholds',
          'analyticsEnabled',
          'webhookEnabled',
          'requireSignedSubject',
          'hasSubjectSigningSecret',
          'debugTokensEnabled',
          'createdAt',
          'updatedAt',
        ].sort(),
      );
      expect(app).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        ...input,
        isActive: true,
        isPrimary: true,
        jwtConfiguration: DEFAULT_JWT,
        riskThresholds: DEFAULT_RISK,
        analyticsEnabled: true,
        webhookEnabled: true,
        requireSignedSubject: false,
        hasSubjectSigningSecret: false,
        debugTokensEnabled: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(Number.isNaN(Date.parse(app.createdAt))).toBe(false);
      expect(Number.isNaN(Date.parse(app.updatedAt))).toBe(false);

      const fetched = await agent.get(`${APPS}/${app.id}`).expect(200);
      expect(fetched.body).toEqual(app);
    });

    it('keeps given JWT and risk settings and fills the rest with defaults', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const app = await createApp(agent, {
        jwtConfiguration: { overrideExpirationTime: 900, customAudience: 'my-audience' },
        riskThresholds: { maxAllowedRiskScore: 40, blockOnJailbreak: true },
      });
      expect(app.jwtConfiguration).toEqual({
        ...DEFAULT_JWT,
        overrideExpirationTime: 900,
        customAudience: 'my-audience',
      });
      expect(app.riskThresholds).toEqual({ ...DEFAULT_RISK, maxAllowedRiskScore: 40, blockOnJailbreak: true });
    });

    it('makes the first app primary, later ones not, unless isPrimary is true, which takes the flag away', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const first = await createApp(agent);
      expect(first.isPrimary).toBe(true);
      const second = await createApp(agent);
      expect(second.isPrimary).toBe(false);
      expect(await primaryIds(org)).toEqual([first.id]);

      const third = await createApp(agent, { isPrimary: true });
      expect(third.isPrimary).toBe(true);
      expect(await primaryIds(org)).toEqual([third.id]);
      const firstAgain = await agent.get(`${APPS}/${first.id}`).expect(200);
      expect(firstAgain.body.isPrimary).toBe(false);
    });

    it.each([
      ['appName', { appName: undefined }],
      ['appName', { appName: '   ' }],
      ['appName', { appName: 42 }],
      ['bundleId', { bundleId: undefined }],
      ['bundleId', { bundleId: 'myapp' }],
      ['bundleId', { bundleId: 'com.example app' }],
      ['bundleId', { bundleId: 'com..example' }],
      ['teamId', { teamId: undefined }],
      ['teamId', { teamId: 'short' }],
      ['teamId', { teamId: 'abcde12345' }],
      ['teamId', { teamId: 1234567890 }],
      ['description', { description: 7 }],
      ['isPrimary', { isPrimary: 'yes' }],
      ['jwtConfiguration', { jwtConfiguration: 'long' }],
      ['jwtConfiguration.includeAppMetadata', { jwtConfiguration: { includeAppMetadata: 'true' } }],
      ['riskThresholds.maxAllowedRiskScore', { riskThresholds: { maxAllowedRiskScore: 101 } }],
      ['riskThresholds.maxAllowedRiskScore', { riskThresholds: { maxAllowedRiskScore: -1 } }],
      ['riskThresholds.maxAllowedRiskScore', { riskThresholds: { maxAllowedRiskScore: '50' } }],
      ['riskThresholds.blockOnJailbreak', { riskThresholds: { blockOnJailbreak: 1 } }],
      ['riskThresholds.minAttestationCount', { riskThresholds: { minAttestationCount: null } }],
      ['riskThresholds', { riskThresholds: [{ maxAllowedRiskScore: 10 }] }],
      ['appName', { appName: null }],
    ])('answers 400 naming %s for %j and creates nothing', async (field, overrides) => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const response = await agent.post(APPS).send(appInput(overrides));
      expectInvalidField(response, field);
      expect(await appCount(org)).toBe(0);
    });

    it('accepts the boundary risk scores 0 and 100', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const low = await createApp(agent, { riskThresholds: { maxAllowedRiskScore: 0 } });
      expect(low.riskThresholds.maxAllowedRiskScore).toBe(0);
      const high = await createApp(agent, { riskThresholds: { maxAllowedRiskScore: 100 } });
      expect(high.riskThresholds.maxAllowedRiskScore).toBe(100);
    });

    it('answers 409 for a Bundle ID + Team ID already registered in the same organization', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const existing = await createApp(agent);
      const response = await agent
        .post(APPS)
        .send(appInput({ bundleId: existing.bundleId, teamId: existing.teamId }))
        .expect(409);
      expect(response.body).toMatchObject({ code: 'conflict', requestId: response.headers['x-request-id'] });
      expect(await appCount(org)).toBe(1);
    });

    it('answers 409 for a pair registered by another organization, leaving the caller primary alone', async () => {
      const owner = await orgWithMember(t, { tier: 'professional' });
      const taken = await createApp(owner.agent);
      const other = await orgWithMember(t, { tier: 'professional' });
      const otherPrimary = await createApp(other.agent);

      const response = await other.agent
        .post(APPS)
        .send(appInput({ bundleId: taken.bundleId, teamId: taken.teamId, isPrimary: true }))
        .expect(409);
      expect(response.body.code).toBe('conflict');
      expect(await appCount(other.org)).toBe(1);
      expect(await primaryIds(other.org)).toEqual([otherPrimary.id]);
      const stillOwned = await owner.agent.get(`${APPS}/${taken.id}`).expect(200);
      expect(stillOwned.body.isPrimary).toBe(true);
    });

    it('treats the pair as the identity: the same Bundle ID with another Team ID is a new app', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const first = await createApp(agent);
      const second = await createApp(agent, { bundleId: first.bundleId });
      expect(second.bundleId).toBe(first.bundleId);
      expect(second.teamId).not.toBe(first.teamId);
    });

    it.each([
      ['free', 2],
      ['basic', 3],
    ])('refuses the app beyond the %s limit of %i with 403 app_limit_reached', async (tier, limit) => {
      const { org, agent } = await orgWithMember(t, { tier });
      const created: AppBody[] = [];
      for (let i = 0; i < limit; i++) created.push(await createApp(agent));
      const response = await agent
        .post(APPS)
        .send(appInput({ isPrimary: true }))
        .expect(403);
      expect(response.body).toMatchObject({ code: 'app_limit_reached', requestId: response.headers['x-request-id'] });
      expect(await appCount(org)).toBe(limit);
      expect(await primaryIds(org)).toEqual([created[0].id]);

      // Deleting one frees the slot again.
      await agent.delete(`${APPS}/${created[limit - 1].id}`).expect(204);
      await createApp(agent);
    });

    it('allows 10 apps on Business and more on Enterprise', async () => {
      const business = await orgWithMember(t, { tier: 'professional' });
      for (let i = 0; i < 10; i++) await createApp(business.agent);
      const refused = await business.agent.post(APPS).send(appInput()).expect(403);
      expect(refused.body.code).toBe('app_limit_reached');

      const enterprise = await orgWithMember(t, { tier: 'enterprise' });
      for (let i = 0; i < 11; i++) await createApp(enterprise.agent);
      expect(await appCount(enterprise.org)).toBe(11);
    });
  });

  describe('access', () => {
    it('answers 401 without a session on every app route', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const app = await createApp(agent);
      const anonymous = t.http();
      const list = await anonymous.get(APPS).expect(401);
      expect(list.body).toMatchObject({ code: 'unauthorized', requestId: list.headers['x-request-id'] });
      await anonymous.post(APPS).send(appInput()).expect(401);
      await anonymous.get(`${APPS}/stats`).expect(401);
      await anonymous.get(`${APPS}/${app.id}`).expect(401);
      await anonymous.get(`${APPS}/${app.id}/usage`).expect(401);
      await anonymous.put(`${APPS}/${app.id}`).send({ appName: 'x' }).expect(401);
      await anonymous.post(`${APPS}/${app.id}/deactivate`).expect(401);
      await anonymous.post(`${APPS}/${app.id}/activate`).expect(401);
      await anonymous.post(`${APPS}/${app.id}/set-primary`).expect(401);
      await anonymous.delete(`${APPS}/${app.id}`).expect(401);
    });

    it.each(['viewer', 'member'] as const)('lets a %s read apps but refuses every change with 403', async (role) => {
      const { org, agent: owner } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(owner, { appName: 'Primary' });
      const other = await createApp(owner, { appName: 'Other' });
      const reader = await signIn(t, (await createUser(t, { org, role })).email);

      expect((await listApps(reader)).map((app) => app.id)).toEqual([primary.id, other.id]);
      const fetched = await reader.get(`${APPS}/${other.id}`).expect(200);
      expect(fetched.body).toEqual(other);
      await reader.get(`${APPS}/stats`).expect(200);
      await reader.get(`${APPS}/${other.id}/usage`).expect(200);

      const refused = await reader.post(APPS).send(appInput()).expect(403);
      expect(refused.body).toMatchObject({ code: 'forbidden', requestId: refused.headers['x-request-id'] });
      await reader.put(`${APPS}/${other.id}`).send({ appName: 'Renamed' }).expect(403);
      await reader.post(`${APPS}/${other.id}/deactivate`).expect(403);
      await reader.post(`${APPS}/${other.id}/activate`).expect(403);
      await reader.post(`${APPS}/${other.id}/set-primary`).expect(403);
      await reader.delete(`${APPS}/${other.id}`).expect(403);

      expect(await appCount(org)).toBe(2);
      const unchanged = await owner.get(`${APPS}/${other.id}`).expect(200);
      expect(unchanged.body).toEqual(other);
    });

    it('lets an Admin create, change and delete apps', async () => {
      const { org } = await orgWithMember(t, { tier: 'professional' });
      const admin = await signIn(t, (await createUser(t, { org, role: 'admin' })).email);
      const first = await createApp(admin);
      const second = await createApp(admin);
      await admin.put(`${APPS}/${second.id}`).send({ appName: 'By admin' }).expect(200);
      await admin.post(`${APPS}/${second.id}/set-primary`).expect(200);
      await admin.delete(`${APPS}/${first.id}`).expect(204);
    });
  });

  describe('GET /api/v1/apps and /:appID', () => {
    it('lists only the organization apps, the primary first and then by name', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const mango = await createApp(agent, { appName: 'Mango' });
      const zeta = await createApp(agent, { appName: 'Zeta', isPrimary: true });
      const alpha = await createApp(agent, { appName: 'Alpha' });
      const kiwi = await createApp(agent, { appName: 'Kiwi' });
      const stranger = await orgWithMember(t, { tier: 'professional' });
      await createApp(stranger.agent, { appName: 'Aardvark' });

      const apps = await listApps(agent);
      expect(apps.map((app) => app.appName)).toEqual(['Zeta', 'Alpha', 'Kiwi', 'Mango']);
      expect(apps.map((app) => app.id)).toEqual([zeta.id, alpha.id, kiwi.id, mango.id]);
      expect(apps[0]).toEqual({ ...zeta, updatedAt: expect.any(String) });
    });

    it('answers 404 (never 403) for another organization app on every app route, and changes nothing', async () => {
      const owner = await orgWithMember(t, { tier: 'professional' });
      const foreign = await createApp(owner.agent);
      const foreignSecond = await createApp(owner.agent);
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      await createApp(agent);

      const response = await agent.get(`${APPS}/${foreign.id}`).expect(404);
      expect(response.body).toMatchObject({ code: 'not_found', requestId: response.headers['x-request-id'] });
      await agent.get(`${APPS}/${foreign.id}/usage`).expect(404);
      await agent.put(`${APPS}/${foreignSecond.id}`).send({ appName: 'Stolen' }).expect(404);
      await agent.post(`${APPS}/${foreignSecond.id}/deactivate`).expect(404);
      await agent.post(`${APPS}/${foreignSecond.id}/activate`).expect(404);
      await agent.post(`${APPS}/${foreignSecond.id}/set-primary`).expect(404);
      await agent.delete(`${APPS}/${foreignSecond.id}`).expect(404);

      const untouched = await owner.agent.get(`${APPS}/${foreignSecond.id}`).expect(200);
      expect(untouched.body).toEqual(foreignSecond);
      expect(await appCount(owner.org)).toBe(2);
    });

    it('answers 404 for an unknown app id', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      await createApp(agent);
      const response = await agent.get(`${APPS}/${randomUUID()}`).expect(404);
      expect(response.body.code).toBe('not_found');
      await agent.delete(`${APPS}/${randomUUID()}`).expect(404);
    });

    it('answers 400 naming appID for an id that is not a UUID', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      await createApp(agent);
      expectInvalidField(await agent.get(`${APPS}/not-a-uuid`), 'appID');
      expectInvalidField(await agent.put(`${APPS}/not-a-uuid`).send({ appName: 'x' }), 'appID');
      expectInvalidField(await agent.delete(`${APPS}/123`), 'appID');
      expectInvalidField(await agent.post(`${APPS}/123/activate`), 'appID');
      expectInvalidField(await agent.get(`${APPS}/123/usage`), 'appID');
    });
  });

  describe('PUT /api/v1/apps/:appID', () => {
    it('changes only the fields sent', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const app = await createApp(agent, { appName: 'Before', description: 'old text' });

      const renamed = await agent.put(`${APPS}/${app.id}`).send({ appName: 'After' }).expect(200);
      expect(renamed.body).toEqual({ ...app, appName: 'After', updatedAt: expect.any(String) });

      const described = await agent.put(`${APPS}/${app.id}`).send({ description: 'new text' }).expect(200);
      expect(described.body).toMatchObject({ appName: 'After', description: 'new text' });

      const toggled = await agent
        .put(`${APPS}/${app.id}`)
        .send({ analyticsEnabled: false, webhookEnabled: false })
        .expect(200);
      expect(toggled.body).toMatchObject({ analyticsEnabled: false, webhookEnabled: false, description: 'new text' });

      const onlyWebhooks = await agent.put(`${APPS}/${app.id}`).send({ webhookEnabled: true }).expect(200);
      expect(onlyWebhooks.body).toMatchObject({ analyticsEnabled: false, webhookEnabled: true });

      const fetched = await agent.get(`${APPS}/${app.id}`).expect(200);
      expect(fetched.body).toEqual({
        ...app,
        appName: 'After',
        description: 'new text',
        analyticsEnabled: false,
        webhookEnabled: true,
        updatedAt: expect.any(String),
      });
      expect(Date.parse(fetched.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(app.updatedAt));
    });

    it('merges jwtConfiguration into the stored one instead of replacing it', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const app = await createApp(agent, {
        jwtConfiguration: { customAudience: 'aud-1', overrideExpirationTime: 600 },
      });

      const first = await agent
        .put(`${APPS}/${app.id}`)
        .send({ jwtConfiguration: { customIssuer: 'https://issuer.example.com' } })
        .expect(200);
      expect(first.body.jwtConfiguration).toEqual({
        overrideExpirationTime: 600,
        includeAppMetadata: true,
        customAudience: 'aud-1',
        customIssuer: 'https://issuer.example.com',
      });

      const second = await agent
        .put(`${APPS}/${app.id}`)
        .send({ jwtConfiguration: { includeAppMetadata: false, overrideExpirationTime: null } })
        .expect(200);
      expect(second.body.jwtConfiguration).toEqual({
        overrideExpirationTime: null,
        includeAppMetadata: false,
        customAudience: 'aud-1',
        customIssuer: 'https://issuer.example.com',
      });
      const fetched = await agent.get(`${APPS}/${app.id}`).expect(200);
      expect(fetched.body.jwtConfiguration).toEqual(second.body.jwtConfiguration);
    });

    it('merges riskThresholds into the stored ones and validates the score range', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const app = await createApp(agent, { riskThresholds: { maxAllowedRiskScore: 55, minAttestationCount: 2 } });

      const updated = await agent
        .put(`${APPS}/${app.id}`)
        .send({ riskThresholds: { blockOnJailbreak: true, maxDeviceAge: 30 } })
        .expect(200);
      expect(updated.body.riskThresholds).toEqual({
        maxAllowedRiskScore: 55,
        blockOnJailbreak: true,
        minAttestationCount: 2,
        maxDeviceAge: 30,
        requireAppStoreReceipt: false,
      });

      const score = await agent
        .put(`${APPS}/${app.id}`)
        .send({ riskThresholds: { maxAllowedRiskScore: 100 } })
        .expect(200);
      expect(score.body.riskThresholds).toEqual({ ...updated.body.riskThresholds, maxAllowedRiskScore: 100 });

      expectInvalidField(
        await agent.put(`${APPS}/${app.id}`).send({ riskThresholds: { maxAllowedRiskScore: 101 } }),
        'riskThresholds.maxAllowedRiskScore',
      );
      expectInvalidField(
        await agent.put(`${APPS}/${app.id}`).send({ riskThresholds: { maxAllowedRiskScore: -1 } }),
        'riskThresholds.maxAllowedRiskScore',
      );
      const fetched = await agent.get(`${APPS}/${app.id}`).expect(200);
      expect(fetched.body.riskThresholds).toEqual(score.body.riskThresholds);

      // maxDeviceAge is nullable: null clears it.
      const cleared = await agent
        .put(`${APPS}/${app.id}`)
        .send({ riskThresholds: { maxDeviceAge: null } })
        .expect(200);
      expect(cleared.body.riskThresholds).toEqual({ ...score.body.riskThresholds, maxDeviceAge: null });
    });

    it.each([
      ['bundleId', { bundleId: 'com.example.changed' }],
      ['teamId', { teamId: 'CHANGED123' }],
      ['isPrimary', { isPrimary: true }],
      ['appName', { appName: '' }],
      ['appName', { appName: 5 }],
      ['analyticsEnabled', { analyticsEnabled: 'no' }],
      ['webhookEnabled', { webhookEnabled: 0 }],
      ['isActive', { isActive: 'false' }],
      ['jwtConfiguration.customIssuer', { jwtConfiguration: { customIssuer: 'not a url' } }],
      ['jwtConfiguration.unknown', { jwtConfiguration: { unknown: 1 } }],
      ['jwtConfiguration', { jwtConfiguration: 'short' }],
      ['riskThresholds', { riskThresholds: [] }],
      // null is refused where the document does not make a field nullable.
      ['appName', { appName: null }],
      ['description', { description: null }],
      ['isActive', { isActive: null }],
      ['analyticsEnabled', { analyticsEnabled: null }],
      ['webhookEnabled', { webhookEnabled: null }],
      ['riskThresholds.maxAllowedRiskScore', { riskThresholds: { maxAllowedRiskScore: null } }],
      ['riskThresholds.blockOnJailbreak', { riskThresholds: { blockOnJailbreak: null } }],
      ['jwtConfiguration.includeAppMetadata', { jwtConfiguration: { includeAppMetadata: null } }],
    ])('answers 400 naming %s for %j and changes nothing', async (field, body) => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const app = await createApp(agent);
      expectInvalidField(await agent.put(`${APPS}/${app.id}`).send(body), field);
      const fetched = await agent.get(`${APPS}/${app.id}`).expect(200);
      expect(fetched.body).toEqual(app);
    });

    it('keeps bundleId and teamId once set: the same values change nothing, others are 409', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const app = await createApp(agent);
      const same = await agent.put(`${APPS}/${app.id}`).send({ bundleId: app.bundleId, teamId: app.teamId });
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ bundleId: app.bundleId, teamId: app.teamId });
      for (const body of [
        { bundleId: bundleId(), teamId: app.teamId },
        { bundleId: app.bundleId, teamId: teamId() },
      ]) {
        const refused = await agent.put(`${APPS}/${app.id}`).send(body);
        expect([refused.status, refused.body.code]).toEqual([409, 'conflict']);
        expect(refused.body.error).toContain('cannot be changed');
      }
      expect((await agent.get(`${APPS}/${app.id}`).expect(200)).body).toMatchObject({
        bundleId: app.bundleId,
        teamId: app.teamId,
      });
    });

    it('refuses isActive false on the primary app with 403 and deactivates another app', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      const other = await createApp(agent);
      const refused = await agent
        .put(`${APPS}/${primary.id}`)
        .send({ isActive: false, appName: 'Changed' })
        .expect(403);
      expect(refused.body.code).toBe('forbidden');
      const fetched = await agent.get(`${APPS}/${primary.id}`).expect(200);
      expect(fetched.body).toEqual(primary);

      const deactivated = await agent.put(`${APPS}/${other.id}`).send({ isActive: false }).expect(200);
      expect(deactivated.body).toMatchObject({ isActive: false, isPrimary: false });
      const reactivated = await agent.put(`${APPS}/${other.id}`).send({ isActive: true }).expect(200);
      expect(reactivated.body.isActive).toBe(true);
    });
  });

  describe('activate, deactivate and set-primary', () => {
    it('deactivates and reactivates a non-primary app', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      await createApp(agent);
      const app = await createApp(agent);
      const off = await agent.post(`${APPS}/${app.id}/deactivate`).expect(200);
      expect(off.body).toEqual({ ...app, isActive: false, updatedAt: expect.any(String) });
      expect((await agent.get(`${APPS}/${app.id}`).expect(200)).body.isActive).toBe(false);
      const on = await agent.post(`${APPS}/${app.id}/activate`).expect(200);
      expect(on.body).toEqual({ ...app, isActive: true, updatedAt: expect.any(String) });
      expect((await agent.get(`${APPS}/${app.id}`).expect(200)).body.isActive).toBe(true);
    });

    it('refuses to deactivate the primary app with 403', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      await createApp(agent);
      const response = await agent.post(`${APPS}/${primary.id}/deactivate`).expect(403);
      expect(response.body).toMatchObject({ code: 'forbidden', requestId: response.headers['x-request-id'] });
      expect((await agent.get(`${APPS}/${primary.id}`).expect(200)).body.isActive).toBe(true);
    });

    it('moves the primary flag, leaving exactly one primary in the organization', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const first = await createApp(agent);
      const second = await createApp(agent);
      const third = await createApp(agent);

      const response = await agent.post(`${APPS}/${second.id}/set-primary`).expect(200);
      expect(response.body).toEqual({ ...second, isPrimary: true, updatedAt: expect.any(String) });
      expect(await primaryIds(org)).toEqual([second.id]);
      const listed = await listApps(agent);
      expect(listed.filter((app) => app.isPrimary).map((app) => app.id)).toEqual([second.id]);
      expect(listed[0].id).toBe(second.id);
      expect(listed.find((app) => app.id === first.id)!.isPrimary).toBe(false);

      // The former primary can now be deactivated.
      await agent.post(`${APPS}/${first.id}/deactivate`).expect(200);

      await agent.post(`${APPS}/${third.id}/set-primary`).expect(200);
      expect(await primaryIds(org)).toEqual([third.id]);
    });

    it('keeps an app primary when set-primary is repeated on it', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      await createApp(agent);
      const response = await agent.post(`${APPS}/${primary.id}/set-primary`).expect(200);
      expect(response.body.isPrimary).toBe(true);
      expect(await primaryIds(org)).toEqual([primary.id]);
    });

    it('serializes concurrent set-primary calls: each succeeds and one primary remains', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise' });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createApp(agent)).id);
      for (let round = 0; round < 3; round++) {
        const responses = await Promise.all(ids.map((id) => agent.post(`${APPS}/${id}/set-primary`)));
        expect(responses.map((response) => response.status)).toEqual(ids.map(() => 200));
        const primaries = await primaryIds(org);
        expect(primaries).toHaveLength(1);
        expect(ids).toContain(primaries[0]);
      }
      const [created, ...moved] = await Promise.all([
        agent.post(APPS).send(appInput({ isPrimary: true })),
        ...ids.map((id) => agent.post(`${APPS}/${id}/set-primary`)),
      ]);
      expect([created.status, ...moved.map((response) => response.status)]).toEqual([201, ...ids.map(() => 200)]);
      expect(await primaryIds(org)).toHaveLength(1);
    });

    it('refuses to make an inactive app primary with 403 and keeps the current primary', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      const inactive = await createApp(agent);
      await agent.post(`${APPS}/${inactive.id}/deactivate`).expect(200);
      const response = await agent.post(`${APPS}/${inactive.id}/set-primary`).expect(403);
      expect(response.body.requestId).toBe(response.headers['x-request-id']);
      expect(await primaryIds(org)).toEqual([primary.id]);
      const fetched = await agent.get(`${APPS}/${inactive.id}`).expect(200);
      expect(fetched.body).toMatchObject({ isActive: false, isPrimary: false });
    });

    it('reports attestation disabled in the health tenant block once the app is deactivated', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      await createApp(agent);
      const app = await createApp(agent);
      const health = () =>
        t.http().get('/api/v1/health').set('X-Bundle-ID', app.bundleId).set('X-Team-ID', app.teamId).expect(200);

      expect((await health()).body.tenant).toMatchObject({
        found: true,
        appRegistered: true,
        attestationEnabled: true,
      });
      await agent.post(`${APPS}/${app.id}/deactivate`).expect(200);
      expect((await health()).body.tenant).toMatchObject({
        found: true,
        appRegistered: true,
        attestationEnabled: false,
      });
      await agent.post(`${APPS}/${app.id}/activate`).expect(200);
      expect((await health()).body.tenant.attestationEnabled).toBe(true);
    });
  });

  describe('DELETE /api/v1/apps/:appID', () => {
    it('deletes a non-primary app with 204 and leaves the primary as it is', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      const doomed = await createApp(agent);
      const response = await agent.delete(`${APPS}/${doomed.id}`).expect(204);
      expect(response.text).toBe('');
      await agent.get(`${APPS}/${doomed.id}`).expect(404);
      expect((await listApps(agent)).map((app) => app.id)).toEqual([primary.id]);
      expect(await primaryIds(org)).toEqual([primary.id]);
      const health = await t
        .http()
        .get('/api/v1/health')
        .set('X-Bundle-ID', doomed.bundleId)
        .set('X-Team-ID', doomed.teamId)
        .expect(200);
      expect(health.body.tenant).toMatchObject({ found: false, attestationEnabled: null });
    });

    it('refuses to delete the last remaining app with 403 last_app', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const only = await createApp(agent);
      const response = await agent.delete(`${APPS}/${only.id}`).expect(403);
      expect(response.body).toMatchObject({ code: 'last_app', requestId: response.headers['x-request-id'] });
      expect(await appCount(org)).toBe(1);
      expect(await primaryIds(org)).toEqual([only.id]);
    });

    it('promotes an active app, not an older inactive one, when the primary is deleted', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent, { appName: 'Primary' });
      const inactive = await createApp(agent, { appName: 'AAA inactive' });
      await agent.post(`${APPS}/${inactive.id}/deactivate`).expect(200);
      const active = await createApp(agent, { appName: 'ZZZ active' });

      await agent.delete(`${APPS}/${primary.id}`).expect(204);
      expect(await primaryIds(org)).toEqual([active.id]);
      const apps = await listApps(agent);
      expect(apps.map((app) => [app.id, app.isPrimary, app.isActive])).toEqual([
        [active.id, true, true],
        [inactive.id, false, false],
      ]);
    });

    it('keeps one app when the last two are deleted at the same time', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'free' });
      const first = await createApp(agent);
      const second = await createApp(agent);
      const responses = await Promise.all([agent.delete(`${APPS}/${first.id}`), agent.delete(`${APPS}/${second.id}`)]);
      expect(responses.map((response) => response.status).sort()).toEqual([204, 403]);
      expect(responses.find((response) => response.status === 403)!.body.code).toBe('last_app');
      expect(await appCount(org)).toBe(1);
      expect(await primaryIds(org)).toHaveLength(1);
    });

    it('promotes the remaining app when the primary of two is deleted, and the org can go on', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'free' });
      const primary = await createApp(agent);
      const other = await createApp(agent);
      await agent.delete(`${APPS}/${primary.id}`).expect(204);
      expect(await primaryIds(org)).toEqual([other.id]);
      const last = await agent.delete(`${APPS}/${other.id}`).expect(403);
      expect(last.body.code).toBe('last_app');
    });

    it('never makes an inactive app primary: deleting the active primary beside an inactive app leaves none until one is activated', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      const inactive = await createApp(agent);
      await agent.post(`${APPS}/${inactive.id}/deactivate`).expect(200);

      await agent.delete(`${APPS}/${primary.id}`).expect(204);
      expect(await primaryIds(org)).toEqual([]);
      expect((await agent.get(`${APPS}/${inactive.id}`).expect(200)).body).toMatchObject({
        isActive: false,
        isPrimary: false,
      });
      // Explicitly, too: still 403 while inactive.
      await agent.post(`${APPS}/${inactive.id}/set-primary`).expect(403);
      expect(await primaryIds(org)).toEqual([]);

      // Activated, it is the organization's only active app and takes the flag.
      const activated = await agent.post(`${APPS}/${inactive.id}/activate`).expect(200);
      expect(activated.body).toMatchObject({ isActive: true, isPrimary: true });
      expect(await primaryIds(org)).toEqual([inactive.id]);
    });

    it('gives the flag to an app created while no app is primary, and keeps it when an inactive app is reactivated', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      const inactive = await createApp(agent);
      await agent.put(`${APPS}/${inactive.id}`).send({ isActive: false }).expect(200);
      await agent.delete(`${APPS}/${primary.id}`).expect(204);
      expect(await primaryIds(org)).toEqual([]);

      const created = await createApp(agent, { isPrimary: false });
      expect(created.isPrimary).toBe(true);
      expect(await primaryIds(org)).toEqual([created.id]);
      // The inactive app, reactivated through PUT, does not take the flag from an active primary.
      const reactivated = await agent.put(`${APPS}/${inactive.id}`).send({ isActive: true }).expect(200);
      expect(reactivated.body.isPrimary).toBe(false);
      expect(await primaryIds(org)).toEqual([created.id]);
    });
  });

  describe('audit log', () => {
    it('records every change of an app with its actor in the organization audit log', async () => {
      const { org, user, agent } = await orgWithMember(t, { tier: 'professional' });
      const primary = await createApp(agent);
      const app = await createApp(agent);
      await agent.put(`${APPS}/${app.id}`).send({ appName: 'Audited' }).expect(200);
      await agent.post(`${APPS}/${app.id}/deactivate`).expect(200);
      await agent.post(`${APPS}/${app.id}/activate`).expect(200);
      await agent.post(`${APPS}/${app.id}/set-primary`).expect(200);
      await agent.delete(`${APPS}/${primary.id}`).expect(204);
      // Refused changes leave no entry.
      await agent.delete(`${APPS}/${app.id}`).expect(403);

      const rows = await t.sql<{ action: string; resource_type: string; resource_id: string; actor_email: string }>(
        `SELECT action, resource_type, resource_id, actor_email FROM audit_logs
          WHERE organization_id = $1 AND resource_type = 'app' ORDER BY created_at, action`,
        [org.id],
      );
      for (const row of rows) expect(row).toMatchObject({ resource_type: 'app', actor_email: user.email });
      const entries = rows.map((row) => [row.action, row.resource_id]);
      expect(entries).toEqual(
        expect.arrayContaining([
          ['app.created', primary.id],
          ['app.created', app.id],
          ['app.updated', app.id],
          ['app.deactivated', app.id],
          ['app.activated', app.id],
          ['app.primary_set', app.id],
          ['app.deleted', primary.id],
        ]),
      );
      expect(rows).toHaveLength(7);
    });

    it('writes no audit entry for a refused creation', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'free' });
      await createApp(agent);
      await createApp(agent);
      await agent.post(APPS).send(appInput()).expect(403);
      await agent
        .post(APPS)
        .send(appInput({ bundleId: 'nope' }))
        .expect(400);
      const rows = await t.sql(`SELECT 1 FROM audit_logs WHERE organization_id = $1 AND action = 'app.created'`, [
        org.id,
      ]);
      expect(rows).toHaveLength(2);
    });
  });

  describe('stats and usage', () => {
    let keySeq = 0;

    async function insertDevice(
      org: TestOrg,
      appId: string,
      options: { attestationCount?: number; riskScore?: number; deviceModel?: string | null; lastSeenAt?: Date } = {},
    ): Promise<{ id: string; keyId: string }> {
      const keyId = `key-${++keySeq}-${randomUUID().slice(0, 8)}`;
      const [row] = await t.sql<{ id: string }>(
        `INSERT INTO devices (organization_id, app_id, key_id, public_key_pem, environment, attestation_count, risk_score,
                              device_model, last_seen_at)
         VALUES ($1, $2, $3, 'PEM', 'production', $4, $5, $6, $7) RETURNING id`,
        [
          org.id,
          appId,
          keyId,
          options.attestationCount ?? 1,
          options.riskScore ?? 0,
          options.deviceModel === undefined ? 'iPhone15,2' : options.deviceModel,
          options.lastSeenAt ?? new Date(),
        ],
      );
      return { id: row.id, keyId };
    }

    async function insertEvent(
      org: TestOrg,
      appId: string,
      device: { id: string; keyId: string },
      options: {
        type?: 'attestation' | 'assertion';
        result?: 'success' | 'failure';
        errorCode?: string | null;
        riskScore?: number | null;
        at?: Date;
      } = {},
    ): Promise<void> {
      await t.sql(
        `INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, error_code, risk_score,
                                    created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          org.id,
          appId,
          device.id,
          device.keyId,
          options.type ?? 'attestation',
          options.result ?? 'success',
          options.errorCode ?? null,
          options.riskScore === undefined ? 10 : options.riskScore,
          options.at ?? new Date(),
        ],
      );
    }

    it('reports per-app totals, unique devices, average risk, success rate and the last attestation', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise' });
      const busy = await createApp(agent, { appName: 'Busy' });
      const quiet = await createApp(agent, { appName: 'Quiet' });

      const d1 = await insertDevice(org, busy.id, { riskScore: 10 });
      const d2 = await insertDevice(org, busy.id, { riskScore: 20 });
      const d3 = await insertDevice(org, busy.id, { riskScore: 25 });
      const now = Date.now();
      const last = new Date(now - 60_000);
      await insertEvent(org, busy.id, d1, { at: new Date(now - 3 * DAY_MS) });
      await insertEvent(org, busy.id, d1, { at: new Date(now - 2 * DAY_MS) });
      await insertEvent(org, busy.id, d2, { at: new Date(now - DAY_MS) });
      await insertEvent(org, busy.id, d3, { result: 'failure', errorCode: 'invalid_nonce', riskScore: null, at: last });

      // Another organization's traffic never shows up here.
      const stranger = await orgWithMember(t, { tier: 'enterprise' });
      const strangerApp = await createApp(stranger.agent);
      const strangerDevice = await insertDevice(stranger.org, strangerApp.id, { riskScore: 90 });
      await insertEvent(stranger.org, strangerApp.id, strangerDevice, { at: new Date() });

      const response = await agent.get(`${APPS}/stats`).expect(200);
      expect(response.body).toEqual([
        {
          appId: busy.id,
          appName: 'Busy',
          totalAttestations: 4,
          uniqueDevices: 3,
          avgRiskScore: expect.any(Number),
          successRate: 0.75,
          lastAttestation: last.toISOString(),
        },
        {
          appId: quiet.id,
          appName: 'Quiet',
          totalAttestations: 0,
          uniqueDevices: 0,
          avgRiskScore: 0,
          successRate: 0,
          lastAttestation: null,
        },
      ]);
      expect(response.body[0].avgRiskScore).toBeCloseTo(55 / 3, 2);
    });

    it('reports a success rate between 0 and 1', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise' });
      const app = await createApp(agent);
      const device = await insertDevice(org, app.id);
      for (let i = 0; i < 3; i++) await insertEvent(org, app.id, device, { result: 'failure', errorCode: 'x' });
      let stats = (await agent.get(`${APPS}/stats`).expect(200)).body;
      expect(stats[0].successRate).toBe(0);
      for (let i = 0; i < 3; i++) await insertEvent(org, app.id, device);
      stats = (await agent.get(`${APPS}/stats`).expect(200)).body;
      expect(stats[0]).toMatchObject({ totalAttestations: 6, successRate: 0.5 });
      expect(stats[0].successRate).toBeGreaterThanOrEqual(0);
      expect(stats[0].successRate).toBeLessThanOrEqual(1);
    });

    it('gives daily usage newest day first, within the last 30 days by default', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise' });
      const app = await createApp(agent, { appName: 'Daily' });
      const other = await createApp(agent);
      const a = await insertDevice(org, app.id);
      const b = await insertDevice(org, app.id);
      const now = Date.now();
      const today = new Date(now - 60_000);
      const yesterday = new Date(now - 60_000 - DAY_MS);
      const fiveDaysAgo = new Date(now - 60_000 - 5 * DAY_MS);
      const fortyDaysAgo = new Date(now - 40 * DAY_MS);
      await insertEvent(org, app.id, a, { riskScore: 10, at: today });
      await insertEvent(org, app.id, a, { riskScore: 20, at: today });
      await insertEvent(org, app.id, b, { riskScore: 30, at: today });
      await insertEvent(org, app.id, b, { riskScore: 5, at: yesterday });
      await insertEvent(org, app.id, a, { riskScore: 40, at: fiveDaysAgo });
      await insertEvent(org, app.id, b, { riskScore: 45, at: fiveDaysAgo });
      await insertEvent(org, app.id, a, { riskScore: 50, at: fortyDaysAgo });
      const otherDevice = await insertDevice(org, other.id);
      await insertEvent(org, other.id, otherDevice, { at: today });

      const day = (date: Date) => date.toISOString().slice(0, 10);
      const recent = [
        { date: day(today), attestations: 3, unique_devices: 2, avg_risk_score: 20 },
        { date: day(yesterday), attestations: 1, unique_devices: 1, avg_risk_score: 5 },
        { date: day(fiveDaysAgo), attestations: 2, unique_devices: 2, avg_risk_score: 42.5 },
      ];

      const response = await agent.get(`${APPS}/${app.id}/usage`).expect(200);
      expect(response.body).toMatchObject({ appId: app.id, appName: 'Daily' });
      expect(response.body.dailyUsage).toEqual(recent);

      const explicit = await agent.get(`${APPS}/${app.id}/usage?days=30`).expect(200);
      expect(explicit.body.dailyUsage).toEqual(recent);

      const wide = await agent.get(`${APPS}/${app.id}/usage?days=60`).expect(200);
      expect(wide.body.dailyUsage).toEqual([
        ...recent,
        { date: day(fortyDaysAgo), attestations: 1, unique_devices: 1, avg_risk_score: 50 },
      ]);

      const narrow = await agent.get(`${APPS}/${app.id}/usage?days=1`).expect(200);
      expect(narrow.body.dailyUsage.map((entry: { date: string }) => entry.date)).not.toContain(day(fiveDaysAgo));
    });

    it('lists the 10 devices with the most attestations, most first', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise' });
      const app = await createApp(agent);
      const other = await createApp(agent);
      const seen = new Date(Date.now() - 3600_000);
      const devices: { keyId: string; count: number }[] = [];
      for (const count of [3, 12, 1, 7, 9, 2, 11, 5, 4, 10, 8, 6]) {
        const device = await insertDevice(org, app.id, {
          attestationCount: count,
          riskScore: count * 2,
          deviceModel: `iPhone${count}`,
          lastSeenAt: seen,
        });
        devices.push({ keyId: device.keyId, count });
      }
      await insertDevice(org, other.id, { attestationCount: 1000 });

      const response = await agent.get(`${APPS}/${app.id}/usage`).expect(200);
      const expected = [...devices]
        .sort((x, y) => y.count - x.count)
        .slice(0, 10)
        .map((device) => ({
          keyId: device.keyId,
          attestationCount: device.count,
          riskScore: device.count * 2,
          lastSeen: seen.toISOString(),
          deviceModel: `iPhone${device.count}`,
        }));
      expect(response.body.topDevices).toEqual(expected);
    });

    it('lists the 10 most recent failed events with their reason and key', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise' });
      const app = await createApp(agent);
      const other = await createApp(agent);
      const device = await insertDevice(org, app.id);
      const now = Date.now();
      const failures: { at: Date; code: string }[] = [];
      for (let i = 0; i < 12; i++) {
        const at = new Date(now - (i + 1) * 3600_000);
        failures.push({ at, code: `error_${i}` });
        await insertEvent(org, app.id, device, { result: 'failure', errorCode: `error_${i}`, riskScore: null, at });
      }
      // Newer successes and another app's failures are not errors of this app.
      await insertEvent(org, app.id, device, { at: new Date(now - 60_000) });
      const otherDevice = await insertDevice(org, other.id);
      await insertEvent(org, other.id, otherDevice, { result: 'failure', errorCode: 'elsewhere', at: new Date(now) });

      const response = await agent.get(`${APPS}/${app.id}/usage`).expect(200);
      expect(response.body.recentErrors).toEqual(
        failures.slice(0, 10).map((failure) => ({
          timestamp: failure.at.toISOString(),
          errorReason: failure.code,
          keyId: device.keyId,
        })),
      );
    });

    it('gives empty usage for an app without traffic', async () => {
      const { agent } = await orgWithMember(t, { tier: 'enterprise' });
      const app = await createApp(agent, { appName: 'Silent' });
      const response = await agent.get(`${APPS}/${app.id}/usage`).expect(200);
      expect(response.body).toEqual({
        appId: app.id,
        appName: 'Silent',
        dailyUsage: [],
        topDevices: [],
        recentErrors: [],
        failuresByCode: [],
        dailyFailures: [],
      });
    });

    it.each(['0', 'abc', '-5', '1.5'])('answers 400 naming days for days=%s', async (days) => {
      const { agent } = await orgWithMember(t, { tier: 'enterprise' });
      const app = await createApp(agent);
      expectInvalidField(await agent.get(`${APPS}/${app.id}/usage?days=${days}`), 'days');
    });
  });

  it('keeps apps of organizations apart when both are created through the dashboard', async () => {
    const orgA = await createOrg(t, { tier: 'free' });
    const ownerA = await signIn(t, (await createUser(t, { org: orgA })).email);
    const orgB = await createOrg(t, { tier: 'free' });
    const ownerB = await signIn(t, (await createUser(t, { org: orgB })).email);
    const a = await createApp(ownerA);
    const b = await createApp(ownerB);
    expect(a.isPrimary).toBe(true);
    expect(b.isPrimary).toBe(true);
    expect((await listApps(ownerA)).map((app) => app.id)).toEqual([a.id]);
    expect((await listApps(ownerB)).map((app) => app.id)).toEqual([b.id]);
  });
});
