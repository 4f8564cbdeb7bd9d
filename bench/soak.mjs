// npm run bench -- soak [--duration 300] [--connections 16] [--sample 10] [--json]
// A bounded soak run (5 minutes by default; --duration in seconds, or with an m/s suffix): the hot
// SDK endpoints in one mix (GET /api/v1/flags, flag evaluate, attestation challenge, refresh and
// validate of a new device, GET /api/v1/health) against the built service on the embedded database, while the server's
// resident memory is read from GET /metrics every --sample seconds. Reports requests, errors and
// memory growth, and exits non-zero on any error or a steady growth trend. Not run in CI.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { TEAM_ID, clientAddress, connect, loadFabricator, seedFlags, seedTenants } from './fixtures.mjs';
import { startServer } from './server.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 && args[index + 1] ? args[index + 1] : fallback;
};
/** Seconds: `300`, `300s` or `5m`. */
function seconds(text) {
  const match = /^(\d+(?:\.\d+)?)(s|m)?$/.exec(String(text).trim());
  if (!match) throw new Error(`--duration must be seconds (300), or 300s / 5m, not ${text}`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}
const durationSeconds = seconds(option('duration', '300'));
const connections = Number(option('connections', '16'));
const sampleSeconds = seconds(option('sample', '10'));
const asJson = args.includes('--json');
const json = { 'content-type': 'application/json' };

/** The mix, by weight: what an SDK fleet does most, plus the load balancer's health checks. */
const MIX = [
  ['GET /api/v1/flags', 40],
  ['POST /api/v1/flags/:id/evaluate', 20],
  ['GET /api/v1/attestation/challenge', 10],
  ['challenge + POST /api/v1/attestation/refresh', 15],
  ['challenge + POST /api/v1/attestation/validate (a new device)', 5],
  ['GET /api/v1/health', 15],
];
const TOTAL_WEIGHT = MIX.reduce((sum, [, weight]) => sum + weight, 0);

const { appAttestAuthority } = await loadFabricator();
const authority = await appAttestAuthority();
const rootPemPath = join(mkdtempSync(join(tmpdir(), 'attestly-soak-root-')), 'root.pem');
writeFileSync(rootPemPath, authority.rootPem);
const server = await startServer({ APP_ATTEST_ROOT_CA: rootPemPath });
let sent = 0;

async function call(method, path, { headers = {}, body } = {}) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...headers, 'x-forwarded-for': clientAddress(++sent) },
    body,
  });
  const text = await response.text();
  return { status: response.status, text };
}

let db;
const stats = new Map(MIX.map(([name]) => [name, { requests: 0, errors: 0, latencies: [] }]));
const errorSamples = [];
const samples = [];
try {
  db = await connect(server.dataDir);
  const apps = await seedTenants(db);
  // Every app has the bench flags: each connection asks for its own device's app, so the flag load
  // goes round the apps and no app's plan budget (flags and evaluate share one) is what is measured.
  const flagIdsOf = new Map();
  for (const app of apps) flagIdsOf.set(app.appId, await seedFlags(db, app));
  const identity = (app) => ({ 'x-bundle-id': app.bundleId, 'x-team-id': TEAM_ID });

  // One attested device per connection, each refreshing with its own increasing counter.
  async function attestDevice(app) {
    const device = authority.createDevice();
    const challenge = JSON.parse((await call('GET', '/api/v1/attestation/challenge', { headers: identity(app) })).text)
      .challenge;
    const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId: app.bundleId });
    const validated = await call('POST', '/api/v1/attestation/validate', {
      headers: { ...identity(app), ...json },
      body: JSON.stringify({ keyId: device.keyId, attestationObject, challenge }),
    });
    if (validated.status !== 200) throw new Error(`seeding validate failed: ${validated.status} ${validated.text}`);
    return { device, app, token: JSON.parse(validated.text).token, counter: 0 };
  }
  const devices = [];
  for (let i = 0; i < connections; i++) devices.push(await attestDevice(i === 0 ? apps[0] : apps[i % apps.length]));

  const operations = {
    'GET /api/v1/flags': (worker) =>
      call('GET', '/api/v1/flags', {
        headers: {
          ...identity(devices[worker].app),
          authorization: `Bearer ${devices[worker].token}`,
          'x-app-version': '3.1.0',
        },
      }),
    'POST /api/v1/flags/:id/evaluate': (worker) => {
      const { app, token } = devices[worker];
      const flagIds = flagIdsOf.get(app.appId);
      return call('POST', `/api/v1/flags/${flagIds[sent % flagIds.length]}/evaluate`, {
        headers: { ...identity(app), ...json, authorization: `Bearer ${token}` },
        body: JSON.stringify({ deviceId: `soak-${sent % 1000}`, appVersion: '3.1.0', country: 'DE' }),
      });
    },
    'GET /api/v1/attestation/challenge': () =>
      call('GET', '/api/v1/attestation/challenge', { headers: identity(apps[sent % apps.length]) }),
    'challenge + POST /api/v1/attestation/refresh': async (worker) => {
      const entry = devices[worker];
      const challenge = await call('GET', '/api/v1/attestation/challenge', { headers: identity(entry.app) });
      if (challenge.status !== 200) return challenge;
      const value = JSON.parse(challenge.text).challenge;
      entry.counter += 1;
      const assertion = entry.device.assert({
        challenge: value,
        counter: entry.counter,
        teamId: TEAM_ID,
        bundleId: entry.app.bundleId,
      });
      return call('POST', '/api/v1/attestation/refresh', {
        headers: { ...identity(entry.app), ...json },
        body: JSON.stringify({ keyId: entry.device.keyId, assertion, challenge: value }),
      });
    },
    'challenge + POST /api/v1/attestation/validate (a new device)': async () => {
      const app = apps[sent % apps.length];
      const challenge = await call('GET', '/api/v1/attestation/challenge', { headers: identity(app) });
      if (challenge.status !== 200) return challenge;
      const value = JSON.parse(challenge.text).challenge;
      const device = authority.createDevice();
      const attestationObject = await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId });
      return call('POST', '/api/v1/attestation/validate', {
        headers: { ...identity(app), ...json },
        body: JSON.stringify({ keyId: device.keyId, attestationObject, challenge: value }),
      });
    },
    'GET /api/v1/health': () => call('GET', '/api/v1/health'),
  };

  function pick(n) {
    let point = (n * 7919) % TOTAL_WEIGHT;
    for (const [name, weight] of MIX) {
      if (point < weight) return name;
      point -= weight;
    }
    return MIX[0][0];
  }

  async function residentMemory() {
    const metrics = await call('GET', '/metrics');
    const value = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(metrics.text)?.[1]);
    return { rss: value('process_resident_memory_bytes'), heap: value('nodejs_heap_size_used_bytes') };
  }

  const started = Date.now();
  const deadline = started + durationSeconds * 1000;
  samples.push({ atSeconds: 0, ...(await residentMemory()) });
  const sampler = setInterval(() => {
    residentMemory()
      .then((memory) => {
        samples.push({ atSeconds: Math.round((Date.now() - started) / 1000), ...memory });
        if (!asJson) {
          const last = samples.at(-1);
          const requests = [...stats.values()].reduce((sum, s) => sum + s.requests, 0);
          const errors = [...stats.values()].reduce((sum, s) => sum + s.errors, 0);
          console.log(
            `${String(last.atSeconds).padStart(5)} s  rss ${mb(last.rss)} MB  heap ${mb(last.heap)} MB  requests ${requests}  errors ${errors}`,
          );
        }
      })
      .catch((error) => errorSamples.push(`metrics: ${error.message}`));
  }, sampleSeconds * 1000);

  let n = 0;
  await Promise.all(
    Array.from({ length: connections }, async (_, worker) => {
      while (Date.now() < deadline) {
        const name = pick(n++);
        const entry = stats.get(name);
        const begin = performance.now();
        try {
          const { status, text } = await operations[name](worker);
          if (status < 200 || status >= 300) {
            entry.errors += 1;
            if (errorSamples.length < 10) errorSamples.push(`${name}: ${status} ${text.slice(0, 200)}`);
          }
        } catch (error) {
          entry.errors += 1;
          if (errorSamples.length < 10) errorSamples.push(`${name}: ${error.message}`);
        }
        entry.requests += 1;
        if (entry.latencies.length < 200_000) entry.latencies.push(performance.now() - begin);
      }
    }),
  );
  clearInterval(sampler);
  samples.push({ atSeconds: Math.round((Date.now() - started) / 1000), ...(await residentMemory()) });
} finally {
  await db?.end();
  await server.stop();
}

function mb(bytes) {
  return (bytes / 1024 / 1024).toFixed(1);
}

function percentile(values, p) {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 10) / 10;
}

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den ? num / den : 0;
}

// The first third is warm-up (JIT, pools, caches filling); a leak shows as a steady climb after it.
const steady = samples.filter((sample) => sample.atSeconds >= durationSeconds / 3);
const baseline = steady[0] ?? samples[0];
const final = samples.at(-1);
const rssSlopeMbPerMinute = (slope(steady.map((s) => [s.atSeconds, s.rss])) * 60) / 1024 / 1024;
const growthMb = (final.rss - baseline.rss) / 1024 / 1024;
// A trend: still climbing through the steady part by more than 2 MB a minute and 10% overall.
const growthTrend = steady.length >= 3 && rssSlopeMbPerMinute > 2 && final.rss > baseline.rss * 1.1;
const requests = [...stats.values()].reduce((sum, s) => sum + s.requests, 0);
const errors = [...stats.values()].reduce((sum, s) => sum + s.errors, 0);
const report = {
  durationSeconds,
  connections,
  requests,
  requestsPerSecond: Math.round(requests / durationSeconds),
  errors,
  endpoints: [...stats.entries()].map(([name, s]) => ({
    name,
    requests: s.requests,
    errors: s.errors,
    p50Ms: percentile(s.latencies, 50),
    p99Ms: percentile(s.latencies, 99),
  })),
  memory: {
    startRssMb: Number(mb(samples[0].rss)),
    steadyBaselineRssMb: Number(mb(baseline.rss)),
    endRssMb: Number(mb(final.rss)),
    peakRssMb: Number(mb(Math.max(...samples.map((s) => s.rss)))),
    growthSinceWarmupMb: Math.round(growthMb * 10) / 10,
    steadySlopeMbPerMinute: Math.round(rssSlopeMbPerMinute * 100) / 100,
    growthTrend,
    samples,
  },
  errorSamples,
};

if (asJson) {
  console.log(JSON.stringify(report, null, 2));
} else {
  console.log('');
  console.log(`soak: ${durationSeconds} s, ${connections} connections, ${requests} requests (${report.requestsPerSecond}/s), ${errors} errors`);
  for (const endpoint of report.endpoints) {
    console.log(
      `  ${endpoint.name.padEnd(46)} ${String(endpoint.requests).padStart(8)} requests  p50 ${endpoint.p50Ms} ms  p99 ${endpoint.p99Ms} ms${endpoint.errors ? `  errors ${endpoint.errors}` : ''}`,
    );
  }
  const m = report.memory;
  console.log(
    `  memory: rss ${m.startRssMb} MB at start, ${m.steadyBaselineRssMb} MB after warm-up, ${m.endRssMb} MB at the end (peak ${m.peakRssMb} MB); ` +
      `${m.growthSinceWarmupMb >= 0 ? '+' : ''}${m.growthSinceWarmupMb} MB since warm-up, ${m.steadySlopeMbPerMinute} MB/min → ${m.growthTrend ? 'GROWTH TREND' : 'no growth trend'}`,
  );
  for (const sample of errorSamples) console.log(`  error: ${sample}`);
}
if (errors > 0 || growthTrend) process.exitCode = 1;
