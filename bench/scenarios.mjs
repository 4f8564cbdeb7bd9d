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
/**
 * The flag scenarios' apps: groups of apps with the 50 bench flags and a device token each, each
 * app its own Enterprise organization (40,000 flag requests a minute per app). A load goes round
 * the apps of one group, and each load takes a group of its own (`flagGroup`): at 25,000 requests
 * a second, one load of 10 s spends 31,000 of each app's budget, so two loads on one group within
 * a minute would measure 429s (they did: the 304 row after the flags row, and the evaluate row).
 * Seven groups: the flag loads of one `npm run bench` (flags, 304, evaluate, OFREP's two, the deny
 * set's two) each get fresh budgets; a further load waits until its group's budget has slid out.
 */
const FLAG_APPS_PER_GROUP = 8;
const FLAG_GROUPS = 7;
/** The limiter's window for the flags bucket: a hit counts for this long (src/rate-limit). */
const RATE_WINDOW_MS = 60_000;

export const scenarios = [
  { name: 'reference', title: 'GET /health (reference)', path: '/health' },
  { name: 'health', title: 'GET /api/v1/health (database round trip)', path: '/api/v1/health' },
  {
    name: 'flags',
    title: 'GET /api/v1/flags (50 flags, 5 rules each)',
    // A new device id per request: rollouts bucket each device anew, as a fleet of devices asks. A
    // device token names its own device only (decision 0074): a server's key names the devices.
    prepare: async (context) =>
      roundTheFlagApps(await context.flagGroup(), 'GET', (client, n) => ({
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
      const clients = await context.flagGroup();
      for (const client of clients) {
        const headers = client.headers;
        const first = await fetch(`${context.baseUrl}/api/v1/flags`, { headers });
        const etag = first.headers.get('etag');
        await first.text();
        if (!first.ok || !etag) throw new Error(`GET /api/v1/flags gave ${first.status} without an ETag`);
        tagged.set(client, { ...headers, 'if-none-match': etag });
      }
      return roundTheFlagApps(clients, 'GET', (client) => ({ path: '/api/v1/flags', headers: tagged.get(client) }));
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
      return roundTheFlagApps(await context.flagGroup(), 'POST', (client) => ({
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
 * One autocannon request that goes round the apps of a flag group (`clients`: each app its own
 * Enterprise organization with the bench flags and a device token), so no app's plan bucket, per
 * app and minute, runs out and is what gets measured. `vary(client, n)` gives the n-th request's
 * path, headers and body.
 */
export function roundTheFlagApps(clients, method, vary) {
  let sent = 0;
  return {
    requests: [
      {
        method,
        setupRequest: (request) => {
          const n = sent++;
          const own = vary(clients[n % clients.length], n);
          return { ...request, ...own, headers: { ...request.headers, ...own.headers } };
        },
      },
    ],
  };
}

/** Shared fixtures: tenants, a device token, flags, and generators of signed requests. */
export async function createContext(server, { authority, smoke = false, duration = 10 }) {
  // --smoke: the same scenarios on small data, to prove the harness works (CI), not to measure.
  const size = (full, small) => (smoke ? small : full);
  const db = await connect(server.dataDir);
  const apps = await seedTenants(db);
  const flagApps = await seedTenants(db, size(FLAG_GROUPS * FLAG_APPS_PER_GROUP, 2), 'flags');
  const identity = (i) => ({ 'x-bundle-id': apps[i % apps.length].bundleId, 'x-team-id': TEAM_ID });
  let sent = 0;

  async function attestOne(app, challenge) {
    const device = authority.createDevice();
    const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId: app.bundleId });
    return { device, body: JSON.stringify({ keyId: device.keyId, attestationObject, challenge }) };
  }

  async function validateOnce(appIndex, app = apps[appIndex]) {
    const [challenge] = await seedChallenges(db, app.appId, 1);
    const { device, body } = await attestOne(app, challenge);
    const response = await fetch(`${server.baseUrl}/api/v1/attestation/validate`, {
      method: 'POST',
      headers: { 'x-bundle-id': app.bundleId, 'x-team-id': TEAM_ID, ...json, 'x-forwarded-for': clientAddress(++sent) },
      body,
    });
    if (!response.ok) throw new Error(`seeding validate failed: ${response.status} ${await response.text()}`);
    return { device, token: (await response.json()).token };
  }

  const { token } = await validateOnce(0);
  /** A flag app's flags, its device (the token) and, for requests naming devices, a server (its organization's key). */
  const flagClient = async (app) => {
    const flagIds = await seedFlags(db, app);
    const own = { 'x-bundle-id': app.bundleId, 'x-team-id': TEAM_ID, 'x-app-version': '3.1.0' };
    const deviceToken = (await validateOnce(null, app)).token;
    return {
      headers: { ...own, authorization: `Bearer ${deviceToken}` },
      serverHeaders: { ...own, authorization: `Bearer ${await seedApiKey(db, app.organizationId)}` },
      flagIds,
    };
  };
  const flagClients = [];
  for (const app of flagApps) flagClients.push(await flagClient(app));
  const groupSize = size(FLAG_APPS_PER_GROUP, flagClients.length);
  const groups = Array.from({ length: flagClients.length / groupSize }, (_, g) => ({
    clients: flagClients.slice(g * groupSize, (g + 1) * groupSize),
    lastUsed: -Infinity,
  }));
  let nextGroup = 0;

  return {
    baseUrl: server.baseUrl,
    token,
    /**
     * The flag apps for the next load: the groups in turn. A group used less than a window and a
     * load ago is waited for (said on stderr), so its apps' budgets are whole again; smoke runs,
     * which measure nothing, do not wait.
     */
    async flagGroup() {
      const group = groups[nextGroup++ % groups.length];
      const wait = group.lastUsed + RATE_WINDOW_MS + duration * 1000 - performance.now();
      if (wait > 0 && !smoke) {
        process.stderr.write(`  (waiting ${Math.ceil(wait / 1000)} s for a flag group's rate budget)\n`);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      group.lastUsed = performance.now();
      return group.clients;
    },
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
