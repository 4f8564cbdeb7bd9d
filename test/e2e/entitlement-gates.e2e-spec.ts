// Every key of entitlements.features either gates something a test can reach, or is documented as
// what it grants. For a gate, the highest plan without the feature is refused (403
// feature_unavailable) and the lowest plan with it gets through; a feature of every plan is
// shown getting through. A key added to the tier table without either fails here.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TIERS, TIER_TABLE, type Tier, type TierFeature } from '../../src/common/tiers.js';
import { CONDITION_TYPES } from '../../src/risk-alerts/risk-alert-rule.js';
import { createApiKey } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { TEAM_ID, fabricatedRootEnv, registerApp, type RegisteredApp } from '../support/sdk-client.js';

interface Answer {
  readonly status: number;
  readonly code?: string;
}

type Probe = (t: TestApp, app: RegisteredApp) => Promise<Answer>;

const answer = (response: { status: number; body?: { code?: string } }): Answer => ({
  status: response.status,
  code: response.body?.code,
});

async function flagOf(app: RegisteredApp, key: string): Promise<string> {
  const created = await app.owner
    .post(`/api/v1/dashboard/apps/${app.id}/flags`)
    .send({ key, name: key, valueType: 'boolean', defaultValue: 'false' });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const putEnvironment = async (app: RegisteredApp, body: Record<string, unknown>) =>
  answer(
    await app.owner
      .put(`/api/v1/dashboard/flags/${await flagOf(app, 'probe')}/environments/production`)
      .send({ enabled: true, value: 'true', ...body }),
  );

/** The status line of the flag stream, without waiting for the stream to end. */
async function streamStatus(t: TestApp, app: RegisteredApp): Promise<Answer> {
  const key = await createApiKey(t, app.org, ['flags:read']);
  const server = t.app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/api/v1/flags/stream',
      headers: { 'X-Bundle-ID': app.bundleId, 'X-Team-ID': TEAM_ID, Authorization: `Bearer ${key}` },
    });
    req.on('response', (res) => {
      if (res.statusCode === 200) {
        req.destroy();
        resolve({ status: 200 });
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, code: (JSON.parse(text) as { code: string }).code }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** What each gated feature guards, as one request of an organization on the plan under test. */
const GATES: Partial<Record<TierFeature, Probe>> = {
  riskScoring: async (_t, app) => answer(await app.owner.get('/api/v1/analytics/events')),
  webhooks: async (_t, app) =>
    answer(
      await app.owner.post('/api/v1/org/webhooks').send({ url: 'http://127.0.0.1:9/hooks', events: ['flag.created'] }),
    ),
  deviceTargeting: (_t, app) =>
    putEnvironment(app, {
      rules: [
        {
          name: 'ipads',
          conditions: [{ attribute: 'device_model', operator: 'equals', value: 'iPad' }],
          value: 'false',
        },
      ],
    }),
  percentRollout: (_t, app) =>
    putEnvironment(app, { rules: [{ name: 'half', conditions: [], rolloutPercentage: 50, value: 'false' }] }),
  rollback: async (_t, app) =>
    answer(
      await app.owner.post(`/api/v1/dashboard/flags/${await flagOf(app, 'rolled')}/rollback`).send({ version: 1 }),
    ),
  fraudDetection: async (_t, app) =>
    answer(
      await app.owner
        .post('/api/v1/org/risk-alerts')
        .send({ name: 'Probe', condition: { type: CONDITION_TYPES[0], threshold: 80 }, channel: 'email' }),
    ),
  complianceRules: async (_t, app) => answer(await app.owner.put('/api/v1/org/compliance').send({ maxRiskScore: 60 })),
  deviceIntelligence: async (_t, app) => answer(await app.owner.get('/api/v1/analytics/devices/unknown-key')),
  sseRealTime: streamStatus,
  flagScheduling: async (_t, app) =>
    answer(
      await app.owner.post(`/api/v1/dashboard/flags/${await flagOf(app, 'scheduled')}/schedules`).send({
        environment: 'production',
        runAt: new Date(Date.now() + 3_600_000).toISOString(),
        change: { enabled: true },
      }),
    ),
  flagDependencies: async (_t, app) => {
    await flagOf(app, 'needed');
    return putEnvironment(app, { rules: [], prerequisites: [{ flagKey: 'needed', value: 'true' }] });
  },
  sso: async (_t, app) => answer(await app.owner.get('/api/v1/org/sso')),
  approvalWorkflows: async (_t, app) =>
    answer(
      await app.owner
        .put(`/api/v1/dashboard/flags/${await flagOf(app, 'protected')}/environments/production/approval`)
        .send({ requireApproval: true }),
    ),
};

/** The README's table of plan features: each key with what it gates or grants. */
function documentedFeatures(): Map<string, string> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = [...readme.matchAll(/^\| `([A-Za-z]+)` \| [^|]+ \| (.+) \|$/gm)];
  return new Map(rows.map(([, key, text]) => [key, text]));
}

describe('every plan feature is real', () => {
  let t: TestApp;
  let features: string[];
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
    const app = await registerApp(t, 'enterprise');
    const me = await app.owner.get('/api/v1/auth/me').expect(200);
    features = Object.keys(me.body.entitlements.features as Record<string, unknown>).filter(
      (key) => key !== 'allowedFormClaimTypes',
    );
  });
  afterAll(async () => {
    await t.close();
  });

  it('reads the features from /auth/me, and the README documents each one', () => {
    expect(features.sort()).toEqual(Object.keys(TIER_TABLE.free.features).sort());
    const documented = documentedFeatures();
    expect(features.filter((key) => !documented.has(key))).toEqual([]);
  });

  it('gates a route with every feature that is not documented as a grant', () => {
    const documented = documentedFeatures();
    const neither = features.filter((key) => !GATES[key as TierFeature] && !documented.get(key)?.startsWith('Grant:'));
    expect(neither).toEqual([]);
  });

  it.each(Object.keys(GATES))(
    '%s: refused on the plans without it, available from the first plan with it',
    async (key) => {
      const feature = key as TierFeature;
      const probe = GATES[feature]!;
      const having = TIERS.filter((tier) => TIER_TABLE[tier].features[feature]);
      const lacking = TIERS.filter((tier) => !TIER_TABLE[tier].features[feature]);
      const mismatches: string[] = [];
      const check = async (tier: Tier, refused: boolean) => {
        const result = await probe(t, await registerApp(t, tier));
        const wasRefused = result.status === 403 && result.code === 'feature_unavailable';
        if (wasRefused !== refused || result.status >= 500) {
          mismatches.push(
            `${tier}: expected ${refused ? '403 feature_unavailable' : 'to get through'}, got ${result.status} ${result.code ?? ''}`,
          );
        }
      };
      if (lacking.length) await check(lacking.at(-1)!, true);
      await check(having[0], false);
      expect(mismatches).toEqual([]);
    },
  );
});
