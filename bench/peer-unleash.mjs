// npm run bench -- --peer unleash [--duration 10] [--connections 10] [--rounds 2] [--json] [--write] [--smoke]
// Unleash side by side (issue 33, item 3). Installs `unleash-server` (BENCH_UNLEASH_VERSION, by
// default the newest 8.x: the line that runs on this project's Node) with npm into a temporary
// folder (BENCH_UNLEASH_DIR reuses a folder where it is already installed), starts the service as
// the bench does (embedded PostgreSQL, the flags scenario's 8 apps of 50 flags × 5 rules) and
// Unleash on a database of its own on the same PostgreSQL, gives Unleash the same 50 flags through
// its admin API (each of our rules a flexibleRollout strategy with the rule's one condition as a
// constraint and its rollout percentage, userId stickiness), and loads, interleaved, round after
// round, the service's GET /api/v1/flags (a new device id per request) and Unleash's frontend
// endpoint GET /api/frontend (a new userId per request, the same app version), same load
// generator, connections and duration. Prints each side's rate, latency, server CPU per request
// and answer size, and the ratio (ours / Unleash, target ≥ 3). Unleash and its database are
// removed at the end and on Ctrl-C or SIGTERM; only 127.0.0.1 is contacted after the install
// (Unleash's version check and telemetry are switched off). --write puts the figures in
// bench/results.md, in a section of their own (replacing the previous one).
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearTimeout } from 'node:timers';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { flagEnvironments } from './fixtures.mjs';
import { processCpuMs, requestsPerSecond, startServer } from './server.mjs';
import { createContext, loadFabricator, scenarios } from './scenarios.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 && args[index + 1] ? args[index + 1] : fallback;
};
const duration = Number(option('duration', '10'));
const connections = Number(option('connections', '10'));
const rounds = Math.max(1, Number(option('rounds', '2')));
const asJson = args.includes('--json');
const smoke = args.includes('--smoke');
const write = args.includes('--write');
const say = (line) => {
  if (!asJson) console.log(line);
};
const log = (line) => process.stderr.write(`  (${line})\n`);

const UNLEASH_VERSION = process.env.BENCH_UNLEASH_VERSION ?? '8';
const FLAG_COUNT = 50;
const APP_VERSION = '3.1.0';
const round2 = (value) => Math.round(value * 100) / 100;

// What is removed at the end, and on Ctrl-C or SIGTERM: Unleash's process, its database, its folder.
const cleanup = {
  unleash: null,
  admin: null,
  database: null,
  installDir: null,
  rootDir: null,
  server: null,
  context: null,
  removal: null,
};

/** Once, however many callers (the end of the run and a signal) ask. */
function removeEverything() {
  cleanup.removal ??= removeAll();
  return cleanup.removal;
}

async function removeAll() {
  await cleanup.unleash?.stop().catch(() => {});
  if (cleanup.admin && cleanup.database) {
    await cleanup.admin.query(`DROP DATABASE IF EXISTS "${cleanup.database}" WITH (FORCE)`).catch(() => {});
  }
  await cleanup.admin?.end().catch(() => {});
  await cleanup.context?.close().catch(() => {});
  await cleanup.server?.stop().catch(() => {});
  if (cleanup.installDir) rmSync(cleanup.installDir, { recursive: true, force: true });
  if (cleanup.rootDir) rmSync(cleanup.rootDir, { recursive: true, force: true });
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${signal}: removing Unleash, its database and the bench server\n`);
    removeEverything().finally(() => process.exit(130));
  });
}
// A crash between the steps: the child must not outlive the bench.
process.on('exit', () => cleanup.unleash?.kill());

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `unleash-server` from the registry into a temporary folder (nothing of Unleash is committed). */
async function installUnleash() {
  const reused = process.env.BENCH_UNLEASH_DIR;
  if (reused && existsSync(join(reused, 'node_modules/unleash-server/dist/server.js'))) return reused;
  const dir = mkdtempSync(join(tmpdir(), 'attestly-bench-unleash-'));
  cleanup.installDir = dir;
  writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
  const started = performance.now();
  // --ignore-scripts: no install script runs (one of them would report the install to a third party).
  await promisify(execFile)(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', `unleash-server@${UNLEASH_VERSION}`],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
  );
  log(`unleash-server installed in ${Math.round((performance.now() - started) / 1000)} s`);
  return dir;
}

/** Unleash as its own process on `databaseUrl`, with an admin and a frontend token made at start. */
async function startUnleash(dir, databaseUrl) {
  const port = await freePort();
  const adminToken = `*:*.${randomBytes(24).toString('hex')}`;
  const frontendToken = `default:production.${randomBytes(24).toString('hex')}`;
  const child = spawn(process.execPath, [join(dir, 'node_modules/unleash-server/dist/server.js')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      DATABASE_SSL: 'false',
      HTTP_HOST: '127.0.0.1',
      PORT: String(port),
      UNLEASH_URL: `http://127.0.0.1:${port}`,
      UNLEASH_SECRET: randomBytes(32).toString('hex'),
      INIT_ADMIN_API_TOKENS: adminToken,
      INIT_FRONTEND_API_TOKENS: frontendToken,
      // Nothing but loopback: no version check, no telemetry.
      CHECK_VERSION: 'false',
      SEND_TELEMETRY: 'false',
      LOG_LEVEL: 'error',
      // Its per-token limit on the SDK paths (20,000 a minute) stays on but out of reach, as the
      // service's plan limit is (the bench spreads our requests over 8 Enterprise apps).
      SDK_API_RATE_LIMIT_PER_MINUTE: '100000000',
      TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: '100000000',
      NODE_NO_WARNINGS: '1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const handle = {
    baseUrl,
    pid: child.pid,
    adminToken,
    frontendToken,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    stop: () =>
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise((resolve) => {
            const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            child.kill('SIGTERM');
          }),
  };
  cleanup.unleash = handle;
  // Its migrations run first: on a loaded machine that takes a while.
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Unleash exited with code ${child.exitCode}`);
    try {
      const response = await fetch(`${baseUrl}/health`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('Unleash did not start within 180 s');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return handle;
}

/** "2.0" as Unleash's semver operators want it: "2.0.0". */
const semver = (value) => [...value.split('.'), '0', '0'].slice(0, 3).join('.');

/**
 * Our condition as an Unleash constraint. Unleash has no "semver ≥": `app_version ≥ N.0` is "not
 * below N.0.0" (SEMVER_LT, inverted); the other operators have their direct counterpart.
 */
function constraintOf({ attribute, operator, value }) {
  const contextName = {
    app_version: 'appVersion',
    country: 'country',
    device_model: 'deviceModel',
    risk_score: 'riskScore',
    'custom.plan': 'plan',
  }[attribute];
  if (!contextName) throw new Error(`no Unleash context field for ${attribute}`);
  switch (operator) {
    case 'greater_than_or_equal':
      return { contextName, operator: 'SEMVER_LT', value: semver(value), inverted: true };
    case 'in_list':
      return { contextName, operator: 'IN', values: value.split(',') };
    case 'starts_with':
      return { contextName, operator: 'STR_STARTS_WITH', values: [value] };
    case 'greater_than':
      return { contextName, operator: 'NUM_GT', value };
    case 'equals':
      return { contextName, operator: 'IN', values: [value] };
    default:
      throw new Error(`no Unleash operator for ${operator}`);
  }
}

/** The bench's 50 flags (bench/fixtures.mjs) through Unleash's admin API, enabled in production. */
async function createUnleashFlags(unleash) {
  const admin = async (method, path, body) => {
    const response = await fetch(`${unleash.baseUrl}${path}`, {
      method,
      headers: { authorization: unleash.adminToken, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Unleash ${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  };
  for (const name of ['appVersion', 'country', 'deviceModel', 'riskScore', 'plan']) {
    await admin('POST', '/api/admin/context', { name });
  }
  const createOne = async (f) => {
    const name = `flag_${f}`;
    const feature = `/api/admin/projects/default/features/${name}`;
    await admin('POST', '/api/admin/projects/default/features', { name, type: 'release' });
    for (const rule of flagEnvironments(f).production.rules) {
      await admin('POST', `${feature}/environments/production/strategies`, {
        name: 'flexibleRollout',
        constraints: rule.conditions.map(constraintOf),
        parameters: { rollout: String(rule.rolloutPercentage ?? 100), stickiness: 'userId', groupId: name },
      });
    }
    await admin('POST', `${feature}/environments/production/on`);
  };
  // A few flags at a time: quicker than one by one, gentle on the shared machine.
  for (let f = 0; f < FLAG_COUNT; f += 5) {
    await Promise.all(Array.from({ length: Math.min(5, FLAG_COUNT - f) }, (_, i) => createOne(f + i)));
  }
}

/**
 * Waits until Unleash's frontend endpoint serves the new flags (its cache follows the database
 * within seconds): with app version 3.1.0 every flag without rollout (the odd half) is on for
 * every user.
 */
async function waitForFrontend(unleash) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(`${unleash.baseUrl}/api/frontend?userId=bench-probe&appVersion=${APP_VERSION}`, {
      headers: { authorization: unleash.frontendToken },
    });
    const body = response.ok ? await response.json() : { toggles: [] };
    if (body.toggles.length >= FLAG_COUNT / 2) return body.toggles.length;
    if (Date.now() > deadline) throw new Error(`Unleash's frontend endpoint serves ${body.toggles.length} flags`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function load(baseUrl, options) {
  return new Promise((resolve, reject) => {
    const settings = { url: baseUrl, connections, duration, ...options };
    for (const key of Object.keys(settings)) if (settings[key] === undefined) delete settings[key];
    const instance = autocannon(settings, (error, result) => (error ? reject(error) : resolve(result)));
    const stop = () => instance.stop();
    process.once('SIGINT', stop);
    instance.once('done', () => process.off('SIGINT', stop));
  });
}

/** `load` with the CPU time process `pid` spent per request, in µs, and the answer size. */
async function measured(pid, baseUrl, options) {
  const before = processCpuMs(pid);
  const result = await load(baseUrl, options);
  const total = result.requests.total;
  return {
    requestsPerSecond: requestsPerSecond(result),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuUsPerRequest: total ? Math.round(((processCpuMs(pid) - before) * 1000) / total) : null,
    bytesPerResponse: total ? Math.round(result.throughput.total / total) : null,
    requests: total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Unleash's frontend endpoint, a new userId per request (our flags scenario's new device id). */
function unleashRequests(unleash) {
  let sent = 0;
  return {
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => ({
          ...request,
          path: `/api/frontend?userId=bench-device-${++sent}&appVersion=${APP_VERSION}`,
          headers: { ...request.headers, authorization: unleash.frontendToken },
        }),
      },
    ],
  };
}

const describe = (title, row) =>
  `${title.padEnd(44)} ${String(row.requestsPerSecond).padStart(7)} req/s  p50 ${row.p50Ms} ms  p99 ${row.p99Ms} ms  cpu ${row.cpuUsPerRequest} µs/req  ${row.bytesPerResponse} B/answer${row.non2xx ? `  non-2xx ${row.non2xx}` : ''}${row.errors ? `  errors ${row.errors}` : ''}`;

const loadBefore = loadavg().map(round2);
const installDir = await installUnleash();

const { appAttestAuthority } = await loadFabricator();
const authority = await appAttestAuthority();
cleanup.rootDir = mkdtempSync(join(tmpdir(), 'attestly-bench-root-'));
const rootPemPath = join(cleanup.rootDir, 'root.pem');
writeFileSync(rootPemPath, authority.rootPem);

const report = { unleashVersion: null, rounds: [], ours: null, unleash: null };
try {
  cleanup.server = await startServer({ APP_ATTEST_ROOT_CA: rootPemPath });
  const server = cleanup.server;
  cleanup.context = await createContext(server, { authority, smoke, duration });
  const context = cleanup.context;
  // On Ctrl-C the whole process group is signalled: the server stops its PostgreSQL, whose closing
  // connections must not crash the bench before it has removed what it made.
  context.db.on('error', () => {});

  // Unleash's own database on the bench's PostgreSQL.
  cleanup.admin = new pg.Client({ connectionString: server.databaseUrl });
  cleanup.admin.on('error', () => {});
  await cleanup.admin.connect();
  cleanup.database = `unleash_bench_${randomBytes(4).toString('hex')}`;
  await cleanup.admin.query(`CREATE DATABASE "${cleanup.database}"`);
  const unleashUrl = new URL(server.databaseUrl);
  unleashUrl.pathname = `/${cleanup.database}`;

  const unleash = await startUnleash(installDir, unleashUrl.toString());
  report.unleashVersion = JSON.parse(
    readFileSync(join(installDir, 'node_modules/unleash-server/package.json'), 'utf8'),
  ).version;
  const created = performance.now();
  await createUnleashFlags(unleash);
  const servedToProbe = await waitForFrontend(unleash);
  log(
    `Unleash ${report.unleashVersion}: ${FLAG_COUNT} flags × 5 strategies created in ${Math.round((performance.now() - created) / 1000)} s; ${servedToProbe} on for a probe user`,
  );

  const flags = scenarios.find((scenario) => scenario.name === 'flags');
  // Both warmed up alike before anything is measured.
  await load(server.baseUrl, { ...(await flags.prepare(context)), amount: smoke ? 200 : 2000, duration: undefined });
  await load(unleash.baseUrl, { ...unleashRequests(unleash), amount: smoke ? 200 : 2000, duration: undefined });

  say(`load average before: ${loadBefore.join(', ')}`);
  for (let r = 1; r <= rounds && !interrupted; r++) {
    const ours = await measured(server.pid, server.baseUrl, await flags.prepare(context));
    const theirs = await measured(unleash.pid, unleash.baseUrl, unleashRequests(unleash));
    report.rounds.push({ ours, unleash: theirs, loadAverage: loadavg().map(round2) });
    say(describe(`round ${r}: GET /api/v1/flags (50 × 5)`, ours));
    say(describe(`round ${r}: Unleash GET /api/frontend (50 × 5)`, theirs));
  }
  if (interrupted) throw new Error('interrupted');
  // The rounds together: the mean of their rates, CPU per request weighted by requests.
  const combine = (side) => {
    const rows = report.rounds.map((round) => round[side]);
    const requests = rows.reduce((sum, row) => sum + row.requests, 0);
    return {
      requestsPerSecond: Math.round(rows.reduce((sum, row) => sum + row.requestsPerSecond, 0) / rows.length),
      cpuUsPerRequest: Math.round(rows.reduce((sum, row) => sum + row.cpuUsPerRequest * row.requests, 0) / requests),
      p99Ms: Math.max(...rows.map((row) => row.p99Ms)),
      bytesPerResponse: rows[0].bytesPerResponse,
      non2xx: rows.reduce((sum, row) => sum + row.non2xx, 0),
    };
  };
  report.ours = combine('ours');
  report.unleash = combine('unleash');
  report.rateRatio = round2(report.ours.requestsPerSecond / report.unleash.requestsPerSecond);
  report.cpuRatio = round2(report.unleash.cpuUsPerRequest / report.ours.cpuUsPerRequest);
  report.loadAverage = { before: loadBefore, after: loadavg().map(round2) };
  say('');
  say(
    `GET /api/v1/flags ${report.ours.requestsPerSecond} req/s, ${report.ours.cpuUsPerRequest} µs CPU/req; Unleash ${report.unleashVersion} GET /api/frontend ${report.unleash.requestsPerSecond} req/s, ${report.unleash.cpuUsPerRequest} µs CPU/req (mean of ${rounds} interleaved rounds of ${duration} s, ${connections} connections)`,
  );
  say(`  rate, ours / Unleash: ${report.rateRatio}  (target ≥ 3: ${report.rateRatio >= 3 ? 'PASS' : 'BELOW'})`);
  say(`  CPU per request, Unleash / ours: ${report.cpuRatio}  (≥ 3 matches the target on a loaded machine)`);
  say(`  load average after: ${report.loadAverage.after.join(', ')}`);
} catch (error) {
  // Interrupted: the signal's handler removes everything and exits; what failed meanwhile (a load
  // cut short, a process already gone) is no news.
  if (!interrupted) throw error;
} finally {
  await removeEverything();
}
if (interrupted) await new Promise(() => {});
if (asJson) console.log(JSON.stringify({ connections, durationSeconds: duration, ...report }, null, 2));
if (write) {
  const file = new URL('./results.md', import.meta.url);
  const heading = '## Unleash side by side (`npm run bench -- --peer unleash`)';
  const kept = existsSync(file) ? readFileSync(file, 'utf8').split(heading)[0].trimEnd() : '# Benchmark results';
  const row = (title, side) =>
    `| ${title} | ${side.requestsPerSecond} | ${side.p50Ms ?? '-'} | ${side.p99Ms} | ${side.cpuUsPerRequest} | ${side.bytesPerResponse} |`;
  const lines = [
    kept,
    '',
    heading,
    '',
    `${new Date().toISOString()}, Unleash ${report.unleashVersion}, ${rounds} interleaved rounds of ${duration} s, ${connections} connections, load average ${report.loadAverage.before[0]} before and ${report.loadAverage.after[0]} after.`,
    '',
    '| Scenario | req/s | p50 ms | p99 ms | server CPU µs/req | bytes/answer |',
    '|---|---|---|---|---|---|',
    ...report.rounds.flatMap((round, i) => [
      row(`round ${i + 1}: GET /api/v1/flags (50 flags × 5 rules)`, round.ours),
      row(`round ${i + 1}: Unleash GET /api/frontend (50 flags × 5 strategies)`, round.unleash),
    ]),
    row('GET /api/v1/flags, mean', report.ours),
    row(`Unleash ${report.unleashVersion} GET /api/frontend, mean`, report.unleash),
    '',
    `Rate, ours / Unleash: ${report.rateRatio} (target ≥ 3: ${report.rateRatio >= 3 ? 'PASS' : 'BELOW'}); CPU per request, Unleash / ours: ${report.cpuRatio}.`,
    '',
  ];
  writeFileSync(file, lines.join('\n'));
}
