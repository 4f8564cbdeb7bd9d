// Every tenant resource, built in organization A through the API, then fetched, changed and
// deleted by organization B's callers: each answer is 404 (never 403, never 2xx), and A's
// resources are untouched afterwards. A new route with a path parameter must be listed here.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiKey } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { buildWorld, type World } from '../support/caller-world.js';
import { listen, type ProbeClient } from '../support/probe-client.js';
import { fillPath, routeName, routeTable } from '../support/route-table.js';
import { fabricatedRootEnv, TEAM_ID } from '../support/sdk-client.js';
import { androidIdentity, apnsCredentials, buildResources, resourceParams } from '../support/tenant-resources.js';

const t: TestApp = await startTestApp(await fabricatedRootEnv());

type As =
  'owner session' | 'service_ key' | 'aat_ key' | 'SDK of B' | 'SDK of B with its JWT' | 'SDK of B with its key';

interface Probe {
  /** `METHOD /path/:param`, exactly as the route table names it. */
  readonly route: string;
  readonly params: Record<string, string>;
  readonly body?: unknown;
  readonly query?: string;
  readonly as: As;
}

/** Routes with a path parameter that do not address a resource of an organization. */
const NOT_TENANT_RESOURCES = new Set([
  'GET /api/v1/auth/cli/sessions/:sessionId',
  'POST /api/v1/auth/cli/sessions/:sessionId/approve',
  'POST /api/v1/auth/cli/sessions/:sessionId/deny',
]);

describe('tenant isolation: another organization gets 404 for every resource of A', () => {
  let client: ProbeClient;
  let world: World;
  const ids: Record<string, string> = {};
  let as: Record<As, Record<string, string>>;

  beforeAll(async () => {
    client = await listen(t);
    world = await buildWorld(t, client);
    Object.assign(ids, await buildResources(t, client, world));
    const keyOfB = world.headers.get('service_ key of another organization (all scopes)')!.authorization;
    const jwtOfB = world.headers.get('attestation JWT of another app')!.authorization;
    const sdkB = { 'x-bundle-id': world.appB.bundleId, 'x-team-id': TEAM_ID };
    as = {
      'owner session': world.ownerB,
      'service_ key': { authorization: keyOfB },
      'aat_ key': {
        authorization: `Bearer ${await createApiKey(t, world.orgB, ['claims:read', 'claims:write'], { type: 'aat' })}`,
      },
      'SDK of B': { ...sdkB, 'x-device-id': 'device-b' },
      'SDK of B with its JWT': { ...sdkB, authorization: jwtOfB },
      'SDK of B with its key': { ...sdkB, authorization: keyOfB },
    };
  }, 60_000);
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  const session = (route: string, body?: unknown, query?: string): Probe => ({
    route,
    params: {},
    body,
    query,
    as: 'owner session',
  });
  const both = (route: string, body?: unknown): Probe[] => [
    session(route, body),
    { route, params: {}, body, as: 'service_ key' },
  ];

  const PROBES: Probe[] = [
    // Apps
    session('GET /api/v1/apps/:appID'),
    session('GET /api/v1/apps/:appID/usage'),
    session('PUT /api/v1/apps/:appID', { appName: 'Taken over' }),
    session('POST /api/v1/apps/:appID/activate'),
    session('POST /api/v1/apps/:appID/deactivate'),
    session('POST /api/v1/apps/:appID/set-primary'),
    session('POST /api/v1/apps/:appID/subject-signing-secret'),
    session('DELETE /api/v1/apps/:appID'),
    session('GET /api/v1/apps/:appID/debug-tokens'),
    session('POST /api/v1/apps/:appID/debug-tokens', { name: 'planted' }),
    session('DELETE /api/v1/apps/:appID/debug-tokens/:tokenId'),
    session('GET /api/v1/apps/:appID/push-credentials'),
    session('PUT /api/v1/apps/:appID/push-credentials', apnsCredentials()),
    session('DELETE /api/v1/apps/:appID/push-credentials'),
    session('GET /api/v1/apps/:appID/android'),
    session('PUT /api/v1/apps/:appID/android', androidIdentity()),
    session('DELETE /api/v1/apps/:appID/android'),
    // Flags and overrides
    session('GET /api/v1/dashboard/apps/:appId/flags'),
    session('POST /api/v1/dashboard/apps/:appId/flags', {
      key: 'planted',
      name: 'Planted',
      valueType: 'boolean',
      defaultValue: 'true',
    }),
    session('GET /api/v1/dashboard/flags/:flagId'),
    session('PATCH /api/v1/dashboard/flags/:flagId', { name: 'Taken over' }),
    session('PUT /api/v1/dashboard/flags/:flagId/environments/:environment', {
      enabled: true,
      value: 'true',
      rules: [],
    }),
    session('GET /api/v1/dashboard/flags/:flagId/history'),
    session('POST /api/v1/dashboard/flags/:flagId/rollback', { version: 1 }),
    session('GET /api/v1/dashboard/flags/:flagId/overrides'),
    session('POST /api/v1/dashboard/flags/:flagId/overrides', { deviceKeyId: 'device-2', forcedValue: 'true' }),
    session('DELETE /api/v1/dashboard/flags/:flagId/overrides/:overrideId'),
    session('GET /api/v1/dashboard/flags/:flagId/schedules'),
    session('POST /api/v1/dashboard/flags/:flagId/schedules', {
      environment: 'production',
      runAt: new Date(Date.now() + 3_600_000).toISOString(),
      change: { enabled: false },
    }),
    session('DELETE /api/v1/dashboard/flags/:flagId/schedules/:scheduleId'),
    // The same flag by its key under A's app
    session('GET /api/v1/dashboard/apps/:appId/flags/:flagKey'),
    session('PATCH /api/v1/dashboard/apps/:appId/flags/:flagKey', { name: 'Taken over' }),
    session('PUT /api/v1/dashboard/apps/:appId/flags/:flagKey/environments/:environment', {
      enabled: true,
      value: 'true',
      rules: [],
    }),
    session('GET /api/v1/dashboard/apps/:appId/flags/:flagKey/history'),
    session('POST /api/v1/dashboard/apps/:appId/flags/:flagKey/rollback', { version: 1 }),
    session('GET /api/v1/dashboard/apps/:appId/flags/:flagKey/overrides'),
    session('POST /api/v1/dashboard/apps/:appId/flags/:flagKey/overrides', {
      deviceKeyId: 'device-2',
      forcedValue: 'true',
    }),
    session('DELETE /api/v1/dashboard/apps/:appId/flags/:flagKey/overrides/:overrideId'),
    session('GET /api/v1/dashboard/apps/:appId/flags/:flagKey/schedules'),
    session('POST /api/v1/dashboard/apps/:appId/flags/:flagKey/schedules', {
      environment: 'production',
      runAt: new Date(Date.now() + 3_600_000).toISOString(),
      change: { enabled: false },
    }),
    session('DELETE /api/v1/dashboard/apps/:appId/flags/:flagKey/schedules/:scheduleId'),
    session('PUT /api/v1/dashboard/flags/:flagId/environments/:environment/approval', { requireApproval: true }),
    session('PUT /api/v1/dashboard/apps/:appId/flags/:flagKey/environments/:environment/approval', {
      requireApproval: true,
    }),
    session('GET /api/v1/dashboard/change-requests/:requestId'),
    session('POST /api/v1/dashboard/change-requests/:requestId/approve'),
    session('POST /api/v1/dashboard/change-requests/:requestId/reject'),
    session('POST /api/v1/dashboard/change-requests/:requestId/apply'),
    session('DELETE /api/v1/dashboard/apps/:appId/flags/:flagKey'),
    session('DELETE /api/v1/dashboard/flags/:flagId'),
    { route: 'POST /api/v1/flags/:flagId/evaluate', params: {}, body: {}, as: 'SDK of B with its JWT' },
    // OpenFeature: A's flag key asked by B's device and by B's server key (OFREP's FLAG_NOT_FOUND).
    {
      route: 'POST /ofrep/v1/evaluate/flags/:key',
      params: { key: 'isolated_flag' },
      body: { context: {} },
      as: 'SDK of B with its JWT',
    },
    {
      route: 'POST /ofrep/v1/evaluate/flags/:key',
      params: { key: 'isolated_flag' },
      body: { context: { targetingKey: 'device-1' } },
      as: 'SDK of B with its key',
    },
    // Claims, both surfaces
    session('GET /api/v1/claims/:claimID'),
    session('PUT /api/v1/claims/:claimID', { claimName: 'Taken over' }),
    session('POST /api/v1/claims/:claimID/preview', { testContext: {} }),
    session('DELETE /api/v1/claims/:claimID'),
    session('GET /api/v1/org/claims/:claimRef'),
    session('PATCH /api/v1/org/claims/:claimRef', { claim_name: 'Taken over' }),
    session('POST /api/v1/org/claims/:claimRef/preview', {}),
    session('DELETE /api/v1/org/claims/:claimRef'),
    { route: 'GET /api/v1/org/claims/:claimRef', params: { claimRef: 'KEY' }, as: 'aat_ key' },
    { route: 'PATCH /api/v1/org/claims/:claimRef', params: {}, body: { claim_name: 'Taken over' }, as: 'aat_ key' },
    { route: 'POST /api/v1/org/claims/:claimRef/preview', params: {}, body: {}, as: 'aat_ key' },
    { route: 'DELETE /api/v1/org/claims/:claimRef', params: { claimRef: 'KEY' }, as: 'aat_ key' },
    // Webhooks
    session('PATCH /api/v1/org/webhooks/:id', { isActive: false }),
    session('POST /api/v1/org/webhooks/:id/test'),
    session('GET /api/v1/org/webhooks/:id/deliveries'),
    session('POST /api/v1/org/webhooks/:id/deliveries/:deliveryId/retry'),
    session('DELETE /api/v1/org/webhooks/:id'),
    // Team and keys
    ...both('PATCH /api/v1/org/members/:userId', { role: 'viewer' }),
    ...both('DELETE /api/v1/org/members/:userId'),
    ...both('DELETE /api/v1/org/invites/:inviteId'),
    session('POST /api/v1/org/api-keys/:id/rotate'),
    session('DELETE /api/v1/org/api-keys/:id'),
    // Release notes
    ...both('GET /api/v1/org/release-notes/:noteId'),
    ...both('PATCH /api/v1/org/release-notes/:noteId', { title: 'Taken over' }),
    ...both('POST /api/v1/org/release-notes/:noteId/publish'),
    ...both('POST /api/v1/org/release-notes/:noteId/unpublish'),
    ...both('DELETE /api/v1/org/release-notes/:noteId'),
    { route: 'POST /api/v1/release-notes/:noteId/seen', params: {}, as: 'SDK of B' },
    // Feedback and support, console and SDK
    ...both('GET /api/v1/org/feedback/:featureId'),
    ...both('POST /api/v1/org/feedback/:featureId/status', { status: 'planned' }),
    ...both('POST /api/v1/org/feedback/:featureId/comments', { body: 'Taken over' }),
    { route: 'GET /api/v1/feedback/features/:featureId', params: {}, as: 'SDK of B' },
    {
      route: 'POST /api/v1/feedback/features/:featureId/vote',
      params: {},
      body: { voterId: 'user-b' },
      as: 'SDK of B',
    },
    {
      route: 'DELETE /api/v1/feedback/features/:featureId/vote',
      params: {},
      query: 'voter_id=user-a',
      as: 'SDK of B',
    },
    ...both('GET /api/v1/org/support/:ticketId'),
    ...both('POST /api/v1/org/support/:ticketId/status', { status: 'closed' }),
    ...both('POST /api/v1/org/support/:ticketId/priority', { priority: 'urgent' }),
    ...both('POST /api/v1/org/support/:ticketId/messages', { body: 'Taken over' }),
    { route: 'GET /api/v1/support/tickets/:ticketId', params: {}, query: 'submitter_id=user-a', as: 'SDK of B' },
    {
      route: 'POST /api/v1/support/tickets/:ticketId/messages',
      params: {},
      body: { authorId: 'user-a', body: 'Taken over, I am' },
      as: 'SDK of B',
    },
    // Devices
    session('POST /api/v1/devices/:keyId/block', { reason: 'taken over' }),
    session('POST /api/v1/devices/:keyId/unblock'),
    ...both('GET /api/v1/analytics/devices/:keyId'),
    // Risk alert rules
    session('GET /api/v1/org/risk-alerts/:ruleId'),
    session('PATCH /api/v1/org/risk-alerts/:ruleId', { name: 'Taken over' }),
    session('DELETE /api/v1/org/risk-alerts/:ruleId'),
    // SSO domains: a domain is addressed within the caller's own connection; another's is not there.
    { ...session('POST /api/v1/org/sso/domains/:domain/verify'), params: { domain: 'isolation-a.test' } },
  ];

  function pathOf(probe: Probe): string {
    const route = routeTable(t.app).find((candidate) => routeName(candidate) === probe.route);
    if (!route) throw new Error(`no route ${probe.route}`);
    const values: Record<string, string> = { ...resourceParams(route, ids), ...probe.params };
    if (values.claimRef === 'KEY') values.claimRef = ids.claimKey;
    const path = fillPath(route, values, (name) => {
      throw new Error(`no value for :${name}`);
    });
    return probe.query ? `${path}?${probe.query}` : path;
  }

  it('probes every route that addresses a resource by a path parameter', () => {
    const probed = new Set(PROBES.map((probe) => probe.route));
    const unprobed = routeTable(t.app)
      .filter((route) => route.params.length > 0 && !route.access?.public)
      .map(routeName)
      .filter((name) => !probed.has(name) && !NOT_TENANT_RESOURCES.has(name));
    expect(unprobed).toEqual([]);
  });

  it("answers 404 to every read, change and deletion of A's resources by B's callers", async () => {
    const wrong: string[] = [];
    for (const probe of PROBES) {
      const [method] = probe.route.split(' ');
      const response = await client.send(method.toLowerCase(), pathOf(probe), {
        headers: as[probe.as],
        body: probe.body,
      });
      if (response.status !== 404)
        wrong.push(`${probe.route} as ${probe.as}: ${response.status} ${response.text.slice(0, 160)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('leaves every resource of A as it was, and lists none of them to B', async () => {
    const ownerA = world.ownerA;
    const read = async (path: string, headers: Record<string, string> = ownerA) => {
      const response = await client.send('get', path, { headers });
      expect(`${path} ${response.status}`).toBe(`${path} 200`);
      return response.body as Record<string, unknown>;
    };
    expect(await read(`/api/v1/apps/${ids.appID}`)).toMatchObject({
      appName: expect.stringMatching(/^Robust/),
      isActive: true,
    });
    expect(await read(`/api/v1/dashboard/flags/${ids.flagId}`)).toMatchObject({ name: 'Isolated', version: 1 });
    expect(await read(`/api/v1/dashboard/flags/${ids.flagId}/overrides`)).toHaveLength(1);
    expect(await read(`/api/v1/dashboard/change-requests/${ids.requestId}`)).toMatchObject({ state: 'pending' });
    expect(await read(`/api/v1/dashboard/flags/${ids.flagId}/schedules`)).toEqual([
      expect.objectContaining({ id: ids.scheduleId, status: 'pending' }),
    ]);
    expect(await read(`/api/v1/claims/${ids.claimID}`)).toMatchObject({ claimKey: ids.claimKey });
    expect(await read(`/api/v1/org/release-notes/${ids.noteId}`)).toMatchObject({ title: 'One', isPublished: false });
    expect(await read(`/api/v1/org/feedback/${ids.featureId}`)).toMatchObject({
      feature: { status: 'pending', comment_count: 0 },
    });
    expect(await read(`/api/v1/org/support/${ids.ticketId}`)).toMatchObject({
      ticket: { status: 'open', message_count: 1 },
    });
    expect(await read(`/api/v1/org/risk-alerts/${ids.ruleId}`)).toMatchObject({ name: 'Isolated rule' });
    const debugTokens = (await read(`/api/v1/apps/${ids.appID}/debug-tokens`)) as unknown as { id: string }[];
    expect(debugTokens.map((token) => token.id)).toEqual([ids.tokenId]);
    expect(await read(`/api/v1/apps/${ids.appID}/push-credentials`)).toMatchObject({ keyId: 'ISOLATED01' });
    expect(await read(`/api/v1/apps/${ids.appID}/android`)).toMatchObject({ hasDecryptionKey: true });
    const [app] = await t.sql<{ subject_signing_secret: string | null }>(
      `SELECT subject_signing_secret FROM apps WHERE id = $1`,
      [ids.appID],
    );
    expect(app.subject_signing_secret).toBeNull();
    const [member] = await t.sql<{ role: string }>(`SELECT role FROM memberships WHERE user_id = $1`, [ids.userId]);
    expect(member.role).toBe('member');
    const [invite] = await t.sql<{ status: string }>(`SELECT status FROM invites WHERE id = $1`, [ids.inviteId]);
    expect(invite.status).toBe('pending');
    const [key] = await t.sql<{ revoked_at: Date | null }>(`SELECT revoked_at FROM api_keys WHERE id = $1`, [
      ids.apiKeyId,
    ]);
    expect(key.revoked_at).toBeNull();
    const [webhook] = await t.sql<{ is_active: boolean }>(`SELECT is_active FROM webhook_endpoints WHERE id = $1`, [
      ids.webhookId,
    ]);
    expect(webhook.is_active).toBe(true);
    const [device] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM devices WHERE key_id = $1 AND NOT is_blocked`,
      [ids.keyId],
    );
    expect(device.n).toBe(1);

    // B's device evaluating every flag over OpenFeature sees only B's flags.
    const ofrepOfB = await client.send('post', '/ofrep/v1/evaluate/flags', {
      headers: as['SDK of B with its JWT'],
      body: { context: {} },
    });
    expect(ofrepOfB.status).toBe(200);
    const listedToB = JSON.stringify([
      ofrepOfB.body,
      await read('/api/v1/apps', world.ownerB),
      await read('/api/v1/claims', world.ownerB),
      await read('/api/v1/org/webhooks', world.ownerB),
      await read('/api/v1/org/invites', world.ownerB),
      await read('/api/v1/org/members', world.ownerB),
      await read('/api/v1/org/api-keys', world.ownerB),
      await read('/api/v1/org/release-notes', world.ownerB),
      await read('/api/v1/org/feedback', world.ownerB),
      await read('/api/v1/org/support', world.ownerB),
      await read('/api/v1/devices', world.ownerB),
      await read('/api/v1/org/risk-alerts', world.ownerB),
    ]);
    for (const [name, id] of Object.entries(ids)) {
      if (name !== 'deliveryId') expect(`${name} ${listedToB.includes(id)}`).toBe(`${name} false`);
    }
  });
});
