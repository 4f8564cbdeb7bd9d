// One resource of every kind an organization owns, created through the API in organization A of
// a caller world: the ids the tenant isolation and bad-input tests address.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { CONDITION_TYPES } from '../../src/risk-alerts/risk-alert-rule.js';
import { staticClaim } from '../factories/claims.js';
import { createUser } from '../factories/identity.js';
import type { TestApp } from '../harness/test-app.js';
import type { World } from './caller-world.js';
import type { ProbeClient } from './probe-client.js';
import type { Route } from './route-table.js';
import { TEAM_ID } from './sdk-client.js';
import { fabricateAndroidApp } from './play-integrity-fabricator.js';

/** Ids by the path parameter name that addresses them (`appID`, `flagId`, …), plus `claimKey`. */
export type ResourceIds = Record<string, string>;

export async function buildResources(t: TestApp, client: ProbeClient, world: World): Promise<ResourceIds> {
  const create = async (path: string, body: unknown, headers = world.ownerA): Promise<Record<string, unknown>> => {
    const response = await client.send('post', path, { headers, body });
    if (response.status !== 201 && response.status !== 200) {
      throw new Error(`arranging ${path} failed: ${response.status} ${response.text}`);
    }
    return response.body!;
  };
  const ids: ResourceIds = {};
  const appId = world.appA.id;
  ids.appID = appId;
  ids.appId = appId;
  ids.keyId = world.deviceKeyId;
  ids.flagId = (
    await create(`/api/v1/dashboard/apps/${appId}/flags`, {
      key: 'isolated_flag',
      name: 'Isolated',
      valueType: 'boolean',
      defaultValue: 'false',
    })
  ).id as string;
  ids.overrideId = (
    await create(`/api/v1/dashboard/flags/${ids.flagId}/overrides`, { deviceKeyId: 'device-1', forcedValue: 'true' })
  ).id as string;
  ids.flagKey = 'isolated_flag';
  ids.scheduleId = (
    await create(`/api/v1/dashboard/flags/${ids.flagId}/schedules`, {
      environment: 'production',
      runAt: new Date(Date.now() + 86_400_000).toISOString(),
      change: { enabled: true },
    })
  ).id as string;
  // A change request, on a flag of its own whose production requires approval.
  const guarded = (
    await create(`/api/v1/dashboard/apps/${appId}/flags`, {
      key: 'guarded_flag',
      name: 'Guarded',
      valueType: 'boolean',
      defaultValue: 'false',
    })
  ).id as string;
  const protect = await client.send('put', `/api/v1/dashboard/flags/${guarded}/environments/production/approval`, {
    headers: world.ownerA,
    body: { requireApproval: true },
  });
  if (protect.status !== 200) throw new Error(`arranging approvals failed: ${protect.status} ${protect.text}`);
  const proposed = await client.send('put', `/api/v1/dashboard/flags/${guarded}/environments/production`, {
    headers: world.ownerA,
    body: { enabled: true, value: 'true', rules: [] },
  });
  if (proposed.status !== 202)
    throw new Error(`arranging a change request failed: ${proposed.status} ${proposed.text}`);
  ids.requestId = proposed.body!.id as string;
  const claim = await create('/api/v1/claims', staticClaim());
  ids.claimID = claim.id as string;
  ids.claimKey = claim.claimKey as string;
  ids.webhookId = (await create('/api/v1/org/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['flag.created'] }))
    .id as string;
  ids.inviteId = (await create('/api/v1/org/invites', { email: `invitee-${randomUUID()}@example.com`, role: 'member' }))
    .id as string;
  ids.userId = (await createUser(t, { org: world.orgA, role: 'member' })).id;
  ids.apiKeyId = (await create('/api/v1/org/api-keys', { name: 'isolated', scopes: ['org:read'] })).id as string;
  ids.noteId = (
    await create('/api/v1/org/release-notes', { appId, version: '1.0.0', title: 'One', body: 'First release' })
  ).id as string;
  const sdkA = { 'x-bundle-id': world.appA.bundleId, 'x-team-id': TEAM_ID };
  ids.featureId = (
    await create(
      '/api/v1/feedback/features',
      { title: 'Dark mode please', description: 'At night', submitterId: 'user-a' },
      sdkA,
    )
  ).id as string;
  ids.ticketId = (
    await create(
      '/api/v1/support/tickets',
      { subject: 'It crashes', body: 'It crashes at launch every time.', submitterId: 'user-a' },
      sdkA,
    )
  ).id as string;
  ids.ruleId = (
    await create('/api/v1/org/risk-alerts', {
      name: 'Isolated rule',
      condition: { type: CONDITION_TYPES[0], threshold: 80 },
      channel: 'email',
    })
  ).id as string;
  ids.tokenId = (await create(`/api/v1/apps/${appId}/debug-tokens`, { name: 'isolated' })).id as string;
  const credentials = await client.send('put', `/api/v1/apps/${appId}/push-credentials`, {
    headers: world.ownerA,
    body: apnsCredentials(),
  });
  if (credentials.status !== 200) throw new Error(`arranging push credentials failed: ${credentials.text}`);
  const android = await client.send('put', `/api/v1/apps/${appId}/android`, {
    headers: world.ownerA,
    body: androidIdentity(),
  });
  if (android.status !== 200) throw new Error(`arranging the Android identity failed: ${android.text}`);
  ids.deliveryId = randomUUID();
  return ids;
}

/** A valid body for PUT /api/v1/apps/:appID/android, with fresh Play Integrity keys and a package name of its own. */
export function androidIdentity() {
  const fabricated = fabricateAndroidApp(`com.isolated.app${randomUUID().replace(/-/g, '')}`);
  return {
    packageName: fabricated.packageName,
    certificateSha256Digests: [fabricated.certificateSha256Digest],
    decryptionKey: fabricated.decryptionKeyBase64,
    verificationKey: fabricated.verificationKeyBase64,
  };
}

/** A valid body for PUT /api/v1/apps/:appID/push-credentials, with a fresh .p8 key. */
export function apnsCredentials() {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    keyId: 'ISOLATED01',
    teamId: TEAM_ID,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    environment: 'sandbox',
  };
}

/** The value of each path parameter of `route` that names one of `ids`' resources. */
export function resourceParams(route: Route, ids: ResourceIds): Record<string, string> {
  return {
    ...ids,
    id: route.path.includes('/webhooks/') ? ids.webhookId : ids.apiKeyId,
    claimRef: ids.claimID,
    environment: 'production',
  };
}
