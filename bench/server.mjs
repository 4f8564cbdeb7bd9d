// Starts the built service on a fresh embedded database for a benchmark run (or, given a
// DATABASE_URL, as a further instance on another's database), and the bare NestJS ceiling.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

// Every process the bench starts runs on this Node (process.execPath): the project's, which npm
// puts first on an npm script's PATH (`npm run bench`). Started as `node bench/run.mjs` on a
// machine whose own Node is older, it would measure another runtime (Node 20's AsyncLocalStorage
// alone costs the service a promise hook per promise), so it refuses.
const supportedNode = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies.node;
if (Number(process.versions.node.split('.')[0]) < Number(supportedNode.split('.')[0])) {
  process.stderr.write(
    `The bench measures the service on Node ${supportedNode}, and this is Node ${process.versions.node}: ` +
      'run it with `npm run bench`, which puts the project\'s Node first on the PATH.\n',
  );
  process.exit(1);
}

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

/**
 * The built service as its own process. Without `env.DATABASE_URL` it starts its embedded
 * PostgreSQL in a fresh directory (`databaseUrl` of the result names that database, for a second
 * instance); with it, it joins that database.
 */
export async function startServer(env = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'attestly-bench-'));
  // As root, the embedded server runs as the postgres user, which must reach its directory.
  chmodSync(dataDir, 0o755);
  const started = await startProcess([...nodeArgs(), join(root, 'dist/src/main.js')], {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    DATABASE_URL: '',
    REDIS_URL: '',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...env,
  });
  const ownsDatabase = !env.DATABASE_URL;
  return {
    ...started,
    dataDir,
    /** The database this instance uses: its embedded one (port known once started) or the one given. */
    databaseUrl: ownsDatabase
      ? `postgres://postgres@127.0.0.1:${readFileSync(join(dataDir, 'postgres/port'), 'utf8').trim()}/attestly`
      : env.DATABASE_URL,
    async stop() {
      await started.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The bare NestJS application of bench/ceiling-nest.mjs, as its own process. */
export function startCeilingNest() {
  return startProcess([...nodeArgs(), join(root, 'bench/ceiling-nest.mjs')], {});
}

/**
 * The attestation floors of bench/floor-attestation.mjs, as their own process, on the database
 * `databaseUrl` (the bench server's) and trusting the same App Attest root.
 */
export function startAttestationFloor({ databaseUrl, rootPemPath }) {
  return startProcess([...nodeArgs(), join(root, 'bench/floor-attestation.mjs')], {
    DATABASE_URL: databaseUrl,
    APP_ATTEST_ROOT_CA: rootPemPath,
  });
}

/**
 * CPU time a process has used so far, in ms (user + system, from /proc/<pid>/stat, 100 ticks a
 * second). Per request, it is what a route costs the server whatever else loads the machine.
 */
export function processCpuMs(pid) {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * CPU time of the process's main thread (the event loop) alone, in ms: beside `processCpuMs`, it
 * tells the loop's share from the thread pool's (crypto, compression) and V8's helper threads'.
 */
export function mainThreadCpuMs(pid) {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(path) {
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time of the embedded PostgreSQL under `dataDir` so far, in ms: its postmaster (with the
 * children it has reaped) and every live child (backends, WAL writer, checkpointer). Null when it
 * is not found. The database shares the two cores with the service and the load generator, so
 * what a route costs it counts as much as the service's own CPU.
 */
export function databaseCpuMs(dataDir) {
  const stats = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      stats.push({ pid: Number(entry), fields: readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ') });
    } catch {
      // The process ended meanwhile.
    }
  }
  const postmaster = stats.find(({ pid }) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dataDir);
    } catch {
      return false;
    }
  });
  if (!postmaster) return null;
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(postmaster.fields[i]));
  let ticks = utime + stime + cutime + cstime;
  for (const { fields } of stats)
    if (Number(fields[1]) === postmaster.pid) ticks += Number(fields[11]) + Number(fields[12]);
  return ticks * 10;
}

/** Resident memory of a process in MB, as the kernel counts it (VmRSS of /proc/<pid>/status). */
export function residentMemoryMb(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Math.round((Number(match[1]) / 1024) * 10) / 10;
}

/**
 * A load's rate: its requests over the time they took (`activeSeconds`, until the last answer,
 * when the load measured it; else autocannon's duration). autocannon's `requests.average` is the
 * mean of its per-second samples, and a run of a fixed amount ends on a one-second tick: validate's
 * 2,000 attestations came out as exactly 500, 667 or 1,000 req/s.
 */
export function requestsPerSecond(result) {
  const seconds = result.activeSeconds > 0 ? result.activeSeconds : result.duration;
  return seconds > 0 ? Math.round(result.requests.total / seconds) : 0;
}

/**
 * BENCH_NODE_ARGS: flags for the server, the bare route's and the floors' processes alike, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` (one profile per process, named by its pid).
 */
function nodeArgs() {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/** Spawns node with `args` on a free loopback port and waits until GET /health answers 200. */
async function startProcess(args, env) {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.at(-1)} exited with code ${child.exitCode}`);
    try {
      const response = await fetch(`${baseUrl}/health`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${args.at(-1)} did not start within 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl,
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null) return;
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      });
    },
  };
}
