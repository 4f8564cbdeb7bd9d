// The benchmark scenarios, in order. `reference` comes first: the cheapest route through every
// global middleware, against which the others are compared. `prepare` seeds what a scenario
// needs and returns the autocannon options for it.
import {
  TEAM_ID,
  clientAddress,
  connect,
  loadFabricator,
  seedActiveDevices,
  seedApiKey,
  seedChallenges,
  seedFlags,
  seedTenants,
} from './fixtures.mjs';

const json = { 'content-type': 'application/json' };
/** Apps with the 50 bench flags and a device token each, which the flag scenarios go round. */
const FLAG_APP_COUNT = 8;

export const scenarios = [
  { name: 'reference', title: 'GET /health (reference)', path: '/health' },
  { name: 'health', title: 'GET /api/v1/health (database round trip)', path: '/api/v1/health' },
  {
    name: 'flags',
    title: 'GET /api/v1/flags (50 flags, 5 rules each)',
    // A new device id per request: rollouts bucket each device anew, as a fleet of devices asks. A
    // device token names its own device only (decision 0074): a server's key names the devices.
    prepare: async (context) =>
      roundTheFlagApps(context, 'GET', (client, n) => ({
        path: '/api/v1/flags',
        headers: { ...client.serverHeaders, 'x-device-id': `bench-device-${n + 1}` },
      })),
  },
  {
    name: 'flags-304',
    title: 'GET /api/v1/flags with If-None-Match (304)',
    expectedStatus: 304,
    prepare: async (context) => {
      const tagged = new Map();
      for (const client of context.flagClients) {
        const headers = client.headers;
        const first = await fetch(`${context.baseUrl}/api/v1/flags`, { headers });
        const etag = first.headers.get('etag');
        await first.text();
        if (!first.ok || !etag) throw new Error(`GET /api/v1/flags gave ${first.status} without an ETag`);
        tagged.set(client, { ...headers, 'if-none-match': etag });
      }
      return roundTheFlagApps(context, 'GET', (client) => ({ path: '/api/v1/flags', headers: tagged.get(client) }));
    },
  },
  {
    name: 'evaluate',
    title: 'POST /api/v1/flags/:id/evaluate (traced)',
    prepare: async (context) => {
      const body = JSON.stringify({
        deviceId: 'bench-device',
        appVersion: '3.1.0',
        country: 'DE',
        custom: { plan: 'beta' },
      });
      return roundTheFlagApps(context, 'POST', (client) => ({
        path: `/api/v1/flags/${client.flagIds[0]}/evaluate`,
        headers: { ...client.headers, ...json },
        body,
      }));
    },
  },
  {
    name: 'usage',
    title: 'GET /api/v1/org/usage (100k devices, cached)',
    prepare: (context) => context.usageRequests(),
  },
  {
    name: 'refresh',
    title: 'POST /api/v1/attestation/refresh',
    floor: true,
    prepare: (context) => context.refreshRequests(),
  },
  {
    name: 'limited',
    title: 'POST refresh past the Free limit (429s)',
    prepare: (context) => context.limitedRequests(),
  },
  {
    name: 'validate',
    title: 'POST /api/v1/attestation/validate',
    floor: true,
    prepare: (context) => context.validateRequests(),
  },
];

/**
 * One autocannon request that goes round the flag apps (each its own Enterprise organization with
 * the bench flags and a device token), so no app's plan bucket, per app and minute, runs out and
 * is what gets measured. `vary(client, n)` gives the n-th request's path, headers and body.
 */
function roundTheFlagApps(context, method, vary) {
  let sent = 0;
  return {
    requests: [
      {
        method,
        setupRequest: (request) => {
          const n = sent++;
          const own = vary(context.flagClients[n % context.flagClients.length], n);
          return { ...request, ...own, headers: { ...request.headers, ...own.headers } };
        },
      },
    ],
  };
}

/** Shared fixtures: tenants, a device token, flags, and generators of signed requests. */
export async function createContext(server, { authority, smoke = false }) {
  // --smoke: the same scenarios on small data, to prove the harness works (CI), not to measure.
  const size = (full, small) => (smoke ? small : full);
  const db = await connect(server.dataDir);
  const apps = await seedTenants(db);
  // The flag scenarios go round several apps: a fast machine would otherwise spend one app's plan
  // bucket (Enterprise: 40,000 a minute) within the run and measure 429s.
  const flagIdsByApp = [];
  for (const app of apps.slice(0, FLAG_APP_COUNT)) flagIdsByApp.push(await seedFlags(db, app));
  const flagIds = flagIdsByApp[0];
  const identity = (i) => ({ 'x-bundle-id': apps[i % apps.length].bundleId, 'x-team-id': TEAM_ID });
  let sent = 0;

  async function attestOne(app, challenge) {
    const device = authority.createDevice();
    const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId: app.bundleId });
    return { device, body: JSON.stringify({ keyId: device.keyId, attestationObject, challenge }) };
  }

  async function validateOnce(appIndex) {
    const app = apps[appIndex];
    const [challenge] = await seedChallenges(db, app.appId, 1);
    const { device, body } = await attestOne(app, challenge);
    const response = await fetch(`${server.baseUrl}/api/v1/attestation/validate`, {
      method: 'POST',
      headers: { ...identity(appIndex), ...json, 'x-forwarded-for': clientAddress(++sent) },
      body,
    });
    if (!response.ok) throw new Error(`seeding validate failed: ${response.status} ${await response.text()}`);
    return { device, token: (await response.json()).token };
  }

  const { token } = await validateOnce(0);
  /** Each flag app's device (its token) and, for requests naming devices, a server (its organization's key). */
  const flagClient = async (i, deviceToken) => ({
    headers: { ...identity(i), authorization: `Bearer ${deviceToken}`, 'x-app-version': '3.1.0' },
    serverHeaders: {
      ...identity(i),
      authorization: `Bearer ${await seedApiKey(db, apps[i].organizationId)}`,
      'x-app-version': '3.1.0',
    },
    flagIds: flagIdsByApp[i],
  });
  const flagClients = [await flagClient(0, token)];
  for (let i = 1; i < FLAG_APP_COUNT; i++) flagClients.push(await flagClient(i, (await validateOnce(i)).token));

  return {
    baseUrl: server.baseUrl,
    token,
    flagIds,
    flagClients,
    identity,
    db,
    apps,
    /** A Free organization's refreshes beyond its 30 per minute: what a refusal costs. */
    async limitedRequests() {
      const { rows } = await db.query(
        `INSERT INTO organizations (name, slug, service_tier) VALUES ('Bench free', 'bench-free-' || md5(random()::text), 'free') RETURNING id`,
      );
      await db.query(
        `INSERT INTO apps (organization_id, app_name, bundle_id, team_id, is_primary) VALUES ($1, 'Free', 'com.bench.free', $2, true)`,
        [rows[0].id, TEAM_ID],
      );
      const body = JSON.stringify({ keyId: 'AAAA', assertion: 'AAAA', challenge: 'unused' });
      return {
        requests: [
          {
            method: 'POST',
            path: '/api/v1/attestation/refresh',
            setupRequest: (request) => ({
              ...request,
              headers: {
                'x-bundle-id': 'com.bench.free',
                'x-team-id': TEAM_ID,
                ...json,
                'x-forwarded-for': clientAddress(++sent),
              },
              body,
            }),
          },
        ],
      };
    },
    async usageRequests() {
      const app = apps[apps.length - 1];
      await seedActiveDevices(db, app, size(100_000, 1_000));
      const key = await seedApiKey(db, app.organizationId);
      const started = performance.now();
      const first = await fetch(`${server.baseUrl}/api/v1/org/usage`, { headers: { authorization: `Bearer ${key}` } });
      const uncachedMs = Math.round((performance.now() - started) * 10) / 10;
      const body = await first.json();
      if (body.currentMAD < size(100_000, 1_000)) throw new Error(`usage seeding failed: ${JSON.stringify(body)}`);
      // On stderr, so that --json output stays one JSON document.
      process.stderr.write(`  (first, uncached answer: ${uncachedMs} ms for ${body.currentMAD} devices)\n`);
      return { path: '/api/v1/org/usage', headers: { authorization: `Bearer ${key}` } };
    },
    async refreshRequests() {
      // Each device is reused only after the whole pool went round, so its counter increases in order.
      const devices = [];
      for (let i = 0; i < size(200, 20); i++)
        devices.push({ ...(await validateOnce(i % apps.length)), appIndex: i % apps.length, counter: 0 });
      const pools = [];
      for (const app of apps) pools.push(await seedChallenges(db, app.appId, size(8000, 400)));
      let next = 0;
      return {
        requests: [
          {
            method: 'POST',
            path: '/api/v1/attestation/refresh',
            setupRequest: (request) => {
              const entry = devices[next++ % devices.length];
              const app = apps[entry.appIndex];
              const challenge = pools[entry.appIndex].pop();
              entry.counter += 1;
              const assertion = entry.device.assert({
                challenge,
                counter: entry.counter,
                teamId: TEAM_ID,
                bundleId: app.bundleId,
              });
              return {
                ...request,
                headers: {
                  ...request.headers,
                  ...identity(entry.appIndex),
                  ...json,
                  'x-forwarded-for': clientAddress(++sent),
                },
                body: JSON.stringify({ keyId: entry.device.keyId, assertion, challenge }),
              };
            },
          },
        ],
      };
    },
    async validateRequests() {
      const bodies = [];
      for (let i = 0; i < size(2000, 60); i++) {
        const appIndex = i % apps.length;
        const [challenge] = await seedChallenges(db, apps[appIndex].appId, 1);
        bodies.push({ appIndex, body: (await attestOne(apps[appIndex], challenge)).body });
      }
      let next = 0;
      return {
        amount: bodies.length,
        requests: [
          {
            method: 'POST',
            path: '/api/v1/attestation/validate',
            setupRequest: (request) => {
              const { appIndex, body } = bodies[next++ % bodies.length];
              return {
                ...request,
                headers: {
                  ...request.headers,
                  ...identity(appIndex),
                  ...json,
                  'x-forwarded-for': clientAddress(++sent),
                },
                body,
              };
            },
          },
        ],
      };
    },
    close: () => db.end(),
  };
}

export { loadFabricator };
