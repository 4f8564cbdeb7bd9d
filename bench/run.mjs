// npm run bench [-- --duration 10] [--connections 10] [--only name] [--json] [--write] [--smoke]
// npm run bench -- soak [--duration 300] [--connections 16] [--sample 10] [--json]
// Loads the built service on loopback with autocannon, one scenario at a time, and prints
// requests/s, p50 and p99 latency and the ratio to GET /health measured in the same run.
import { writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { startServer } from './server.mjs';
import { mkdtempSync, writeFileSync as writeFile } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext, loadFabricator, scenarios } from './scenarios.mjs';
import { measureWebhookDelivery } from './webhook-delivery.mjs';
import { HEALTH_P99_LIMIT_MS, measureAdversarialHealth } from './adversarial.mjs';

// `npm run bench -- soak [...]`: the bounded soak run instead of the scenarios (bench/soak.mjs).
if (process.argv[2] === 'soak') {
  await import('./soak.mjs');
  process.exit();
}

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 && args[index + 1] ? args[index + 1] : fallback;
};
const duration = Number(option('duration', '10'));
const connections = Number(option('connections', '10'));
const only = option('only', '');
const asJson = args.includes('--json');
const write = args.includes('--write');
const smoke = args.includes('--smoke');

function load(baseUrl, scenario) {
  return new Promise((resolve, reject) => {
    const options = {
      url: `${baseUrl}${scenario.path ?? ''}`,
      connections,
      duration: scenario.duration ?? duration,
      amount: scenario.amount,
      requests: scenario.requests,
      method: scenario.method,
      headers: scenario.headers,
      body: scenario.body,
    };
    for (const key of Object.keys(options)) if (options[key] === undefined) delete options[key];
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    process.once('SIGINT', () => instance.stop());
  });
}

// The server trusts a fabricated App Attest root, so the bench can attest made-up devices.
const { appAttestAuthority } = await loadFabricator();
const authority = await appAttestAuthority();
const rootPemPath = join(mkdtempSync(join(tmpdir(), 'attestly-bench-root-')), 'root.pem');
writeFile(rootPemPath, authority.rootPem);

const server = await startServer({ APP_ATTEST_ROOT_CA: rootPemPath });
const results = [];
let context;
try {
  context = await createContext(server, { authority, smoke });
  let reference = null;
  for (const scenario of scenarios) {
    if (only && scenario.name !== 'reference' && !scenario.name.includes(only)) continue;
    const prepared = scenario.prepare ? await scenario.prepare(context) : scenario;
    const result = await load(server.baseUrl, { ...scenario, ...prepared });
    // A scenario that expects another status (the 304 of a conditional fetch) counts the rest instead.
    const expected = scenario.expectedStatus;
    const unexpected = expected
      ? result.requests.total - (result.statusCodeStats?.[expected]?.count ?? 0)
      : result.non2xx;
    const row = {
      scenario: scenario.title,
      requestsPerSecond: Math.round(result.requests.average),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      non2xx: unexpected,
      errors: result.errors + result.timeouts,
      ratio: null,
    };
    if (scenario.name === 'reference') reference = row.requestsPerSecond;
    row.ratio = reference ? Math.round((row.requestsPerSecond / reference) * 100) / 100 : null;
    results.push(row);
    if (!asJson) {
      console.log(
        `${row.scenario.padEnd(44)} ${String(row.requestsPerSecond).padStart(7)} req/s  p50 ${row.p50Ms} ms  p99 ${row.p99Ms} ms  ratio ${row.ratio ?? '-'}${row.non2xx ? `  ${expected ? `not ${expected}` : 'non-2xx'} ${row.non2xx}` : ''}${row.errors ? `  errors ${row.errors}` : ''}`,
      );
    }
  }
  if (!only || 'webhooks'.includes(only)) {
    const webhooks = await measureWebhookDelivery(
      context.db,
      context.apps[1],
      Number(option('webhook-events', smoke ? '200' : '10000')),
    );
    results.push({
      scenario: 'webhook delivery (10,000 events, loopback receiver)',
      requestsPerSecond: webhooks.perSecond,
      p50Ms: webhooks.p50Ms,
      p99Ms: webhooks.p99Ms,
      non2xx: 0,
      errors: 0,
      ratio: null,
    });
    if (!asJson) {
      console.log(
        `${'webhook delivery (event to delivery delay)'.padEnd(44)} ${String(webhooks.perSecond).padStart(7)} deliveries/s  p50 ${webhooks.p50Ms} ms  p99 ${webhooks.p99Ms} ms  delivered ${webhooks.delivered}`,
      );
    }
  }
  if (!only || 'enumeration'.includes(only)) {
    const timing = await measureEnumeration(server.baseUrl, context.db);
    results.push({
      scenario: 'forgot-password, existing vs unknown address (median ms)',
      requestsPerSecond: null,
      p50Ms: timing.existingMs,
      p99Ms: timing.unknownMs,
      non2xx: 0,
      errors: 0,
      ratio: timing.ratio,
    });
    if (!asJson) {
      console.log(
        `${'forgot-password: existing vs unknown'.padEnd(44)} median ${timing.existingMs} ms vs ${timing.unknownMs} ms over ${timing.samples} each  ratio ${timing.ratio}`,
      );
    }
  }
  if (!only || 'adversarial'.includes(only)) {
    const attacked = await measureAdversarialHealth(server.baseUrl, smoke ? 3 : duration);
    results.push({
      scenario: `GET /health while adversarial bodies are posted (p99 limit ${HEALTH_P99_LIMIT_MS} ms)`,
      requestsPerSecond: null,
      p50Ms: attacked.p50Ms,
      p99Ms: attacked.p99Ms,
      non2xx: 0,
      errors: attacked.serverErrors,
      ratio: attacked.ratio,
    });
    if (!asJson) {
      console.log(
        `${'/health under adversarial bodies'.padEnd(44)} p50 ${attacked.p50Ms} ms  p99 ${attacked.p99Ms} ms over ${attacked.samples} probes (${attacked.quietP99Ms} ms without attackers), ${attacked.attacks} attacks  p99/limit ${attacked.ratio} (${HEALTH_P99_LIMIT_MS} ms)  ${attacked.verdict}${attacked.serverErrors ? `  5xx ${attacked.serverErrors}` : ''}`,
      );
      for (const [answer, { count, medianMs }] of Object.entries(attacked.answers)) {
        console.log(`  ${answer} × ${count}, median ${medianMs} ms`);
      }
    }
  }
} finally {
  await context?.close();
  await server.stop();
}

/**
 * Account enumeration by timing: 40 forgot-password requests for existing accounts and 40 for
 * unknown addresses, interleaved, each from its own client address and for its own address (so no
 * limit answers instead), one at a time. Prints both medians; they should differ by under 20%.
 */
async function measureEnumeration(baseUrl, db) {
  const samples = 40;
  const stamp = Date.now().toString(36);
  const existing = Array.from({ length: samples }, (_, i) => `bench-known-${stamp}-${i}@example.com`);
  for (const email of existing) {
    await db.query(
      `INSERT INTO users (email, password_hash, status, email_verified_at) VALUES ($1, 'not-a-hash', 'active', now())`,
      [email],
    );
  }
  const time = async (email, n) => {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/api/v1/auth/forgot-password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.18.${(n >> 8) & 255}.${n & 255}` },
      body: JSON.stringify({ email }),
    });
    await response.text();
    if (response.status !== 200) throw new Error(`forgot-password answered ${response.status}`);
    return performance.now() - started;
  };
  const known = [];
  const unknown = [];
  for (let i = 0; i < samples; i++) {
    known.push(await time(existing[i], 2 * i));
    unknown.push(await time(`bench-unknown-${stamp}-${i}@example.com`, 2 * i + 1));
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return Math.round(((sorted[samples / 2 - 1] + sorted[samples / 2]) / 2) * 100) / 100;
  };
  const existingMs = median(known);
  const unknownMs = median(unknown);
  return { samples, existingMs, unknownMs, ratio: Math.round((existingMs / unknownMs) * 100) / 100 };
}

if (asJson) console.log(JSON.stringify({ connections, durationSeconds: duration, results }, null, 2));
if (write) {
  const lines = [
    '# Benchmark results',
    '',
    `${new Date().toISOString()}, ${connections} connections, ${duration} s per scenario, loopback, embedded PostgreSQL.`,
    '',
    '| Scenario | req/s | p50 ms | p99 ms | ratio to GET /health |',
    '|---|---|---|---|---|',
    ...results.map((r) => `| ${r.scenario} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.ratio ?? '-'} |`),
    '',
  ];
  writeFileSync(new URL('./results.md', import.meta.url), lines.join('\n'));
}
