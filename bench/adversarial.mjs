// `/health` latency while adversarial bodies are posted in a loop: JSON nested 100,000 levels and
// 1 MiB of nesting, compressed garbage, a gzip bomb, and bodies over the 1 MiB limit. The service
// must refuse each cheaply (400, 413, 415) and keep answering everyone else: p99 under 50 ms.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { gzipSync } from 'node:zlib';

export const HEALTH_P99_LIMIT_MS = 50;

const ATTACKS = [
  {
    name: 'JSON nested 100,000 levels',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('['.repeat(100_000)),
  },
  {
    name: '1 MiB of nesting',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"a":'.repeat(Math.floor((1024 * 1024 - 16) / 5))),
  },
  {
    name: 'gzip garbage',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: randomBytes(64 * 1024),
  },
  {
    name: 'deflate garbage',
    headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
    body: randomBytes(64 * 1024),
  },
  {
    name: 'gzip bomb (64 MiB of zeros)',
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(Buffer.alloc(64 * 1024 * 1024)),
  },
  {
    name: '4 MiB body',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ email: 'x'.repeat(4 * 1024 * 1024) })),
  },
];

function send(agent, baseUrl, method, path, headers = {}, body) {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(`${baseUrl}${path}`, { agent, method, headers, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
      res.on('error', () => resolve({ status: 'reset', ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 'reset', ms: performance.now() - started }));
    req.end(body);
  });
}

/**
 * Four attackers post the bodies above round-robin to `/api/v1/auth/login` for `seconds`, while one
 * client asks `/health` every 5 ms on a connection of its own. Returns the /health percentiles and
 * what the attacks were answered.
 */
export async function measureAdversarialHealth(baseUrl, seconds) {
  const healthAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const attackAgent = new Agent({ keepAlive: true, maxSockets: 4 });
  // The same probe without attackers first: what the machine gives /health anyway.
  const quiet = await probeHealth(healthAgent, baseUrl, Date.now() + Math.min(5, seconds) * 1000);
  const deadline = Date.now() + seconds * 1000;
  const answers = new Map();
  let attacks = 0;
  const attacker = async (offset) => {
    for (let i = offset; Date.now() < deadline; i++) {
      const attack = ATTACKS[i % ATTACKS.length];
      const headers = {
        ...attack.headers,
        'content-length': String(attack.body.length),
        'x-forwarded-for': `198.19.${(i >> 8) & 255}.${i & 255}`,
      };
      const { status, ms } = await send(attackAgent, baseUrl, 'POST', '/api/v1/auth/login', headers, attack.body);
      const key = `${attack.name}: ${status}`;
      const seen = answers.get(key) ?? [];
      seen.push(ms);
      answers.set(key, seen);
      attacks++;
    }
  };
  const [latencies] = await Promise.all([probeHealth(healthAgent, baseUrl, deadline), ...[0, 1, 2, 3].map(attacker)]);
  healthAgent.destroy();
  attackAgent.destroy();
  const p99Ms = percentile(latencies, 99);
  return {
    samples: latencies.length,
    attacks,
    quietP99Ms: percentile(quiet, 99),
    p50Ms: percentile(latencies, 50),
    p99Ms,
    ratio: Math.round((p99Ms / HEALTH_P99_LIMIT_MS) * 100) / 100,
    verdict: p99Ms < HEALTH_P99_LIMIT_MS ? 'PASS' : 'FAIL',
    /** Per attack and answer: how many, and their median time to answer (ms). */
    answers: Object.fromEntries(
      [...answers].sort().map(([key, times]) => [key, { count: times.length, medianMs: percentile(times, 50) }]),
    ),
    serverErrors: [...answers]
      .filter(([key]) => /: 5\d\d$/.test(key))
      .reduce((sum, [, times]) => sum + times.length, 0),
  };
}

/** GET /health every 5 ms on one connection until `deadline`; the latencies in ms. */
async function probeHealth(agent, baseUrl, deadline) {
  const latencies = [];
  while (Date.now() < deadline) {
    const { status, ms } = await send(agent, baseUrl, 'GET', '/health');
    if (status !== 200) throw new Error(`/health answered ${status}`);
    latencies.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return latencies;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 100) / 100;
}
