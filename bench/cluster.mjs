// npm run bench -- cluster [--duration 10] [--connections 10] [--redis redis://127.0.0.1:6379] [--json] [--smoke]
// Several instances on one machine: GET /api/v1/flags (the flags scenario of bench/scenarios.mjs,
// a new device id per request) against one instance, then against two instances at once, each
// its own process on its own port, on the same PostgreSQL (the first instance's embedded
// database; the second is given its DATABASE_URL) and, with --redis, the same Redis. Each
// instance gets --connections of its own; the two loads run together and their requests/s are
// summed. Prints both and the 2-instance / 1-instance ratio: what a second process on this
// machine's cores adds (server, database and load generator share them).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import autocannon from 'autocannon';
import { requestsPerSecond, startServer } from './server.mjs';
import { createContext, loadFabricator, scenarios } from './scenarios.mjs';

const args = process.argv.slice(3);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 && args[index + 1] ? args[index + 1] : fallback;
};
const duration = Number(option('duration', '10'));
const connections = Number(option('connections', '10'));
const redisUrl = option('redis', '');
const asJson = args.includes('--json');
const smoke = args.includes('--smoke');

function load(baseUrl, options) {
  return new Promise((resolve, reject) => {
    const stop = () => instance.stop();
    const instance = autocannon({ url: baseUrl, connections, duration, ...options }, (error, result) => {
      process.off('SIGINT', stop);
      if (error) reject(error);
      else resolve(result);
    });
    process.once('SIGINT', stop);
  });
}

const summary = (result) => ({
  requestsPerSecond: requestsPerSecond(result),
  p50Ms: result.latency.p50,
  p99Ms: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
});

const { appAttestAuthority } = await loadFabricator();
const authority = await appAttestAuthority();
const rootPemPath = join(mkdtempSync(join(tmpdir(), 'attestly-bench-root-')), 'root.pem');
writeFileSync(rootPemPath, authority.rootPem);
const env = { APP_ATTEST_ROOT_CA: rootPemPath, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) };

const flagsScenario = scenarios.find((scenario) => scenario.name === 'flags');
const first = await startServer(env);
let second = null;
let context;
let report;
try {
  context = await createContext(first, { authority, smoke, duration });
  const request = await flagsScenario.prepare(context);

  const one = summary(await load(first.baseUrl, request));
  second = await startServer({ ...env, DATABASE_URL: first.databaseUrl });
  // The token the first instance signed must hold on the second (signing keys live in the database).
  const probe = await fetch(`${second.baseUrl}/api/v1/flags`, {
    headers: { ...context.identity(0), authorization: `Bearer ${context.token}` },
  });
  await probe.text();
  if (probe.status !== 200) throw new Error(`the second instance answered GET /api/v1/flags with ${probe.status}`);
  const both = (await Promise.all([load(first.baseUrl, request), load(second.baseUrl, request)])).map(summary);
  const total = both.reduce((sum, instance) => sum + instance.requestsPerSecond, 0);
  report = {
    cores: availableParallelism(),
    connectionsPerInstance: connections,
    durationSeconds: duration,
    redis: Boolean(redisUrl),
    oneInstance: one,
    twoInstances: { requestsPerSecond: total, instances: both },
    ratio: Math.round((total / one.requestsPerSecond) * 100) / 100,
  };
} finally {
  await context?.close();
  await second?.stop();
  await first.stop();
  rmSync(dirname(rootPemPath), { recursive: true, force: true });
}

if (asJson) {
  console.log(JSON.stringify(report, null, 2));
} else {
  const line = (title, r) =>
    `${title.padEnd(44)} ${String(r.requestsPerSecond).padStart(7)} req/s  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms${r.non2xx ? `  non-2xx ${r.non2xx}` : ''}${r.errors ? `  errors ${r.errors}` : ''}`;
  console.log(
    `GET /api/v1/flags, ${report.cores} cores, ${connections} connections per instance, ${duration} s, one PostgreSQL${report.redis ? ' and one Redis' : ''}`,
  );
  console.log(line('1 instance', report.oneInstance));
  report.twoInstances.instances.forEach((instance, i) => console.log(line(`2 instances: instance ${i + 1}`, instance)));
  console.log(
    `${'2 instances, summed'.padEnd(44)} ${String(report.twoInstances.requestsPerSecond).padStart(7)} req/s  ratio to 1 instance ${report.ratio}`,
  );
}
const failed = [report.oneInstance, ...report.twoInstances.instances].some((r) => r.non2xx || r.errors);
if (failed) process.exitCode = 1;
