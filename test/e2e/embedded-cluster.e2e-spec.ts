// `npm start` on its embedded PostgreSQL (no DATABASE_URL) with the management CLI beside it, as
// the README's tour runs them: real processes sharing one DATA_DIR.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from '@jest/globals';
import { CLUSTER_CLIENTS_DIR, CLUSTER_LOCK_FILE } from '../../src/database/embedded-cluster.js';
import { isAlive } from '../../src/database/embedded-postgres.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

describe('one embedded PostgreSQL shared by the service and the management CLI', () => {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A DATA_DIR the postgres user can reach when the tests run as root (no relocated cluster). */
  function dataDirectory(): string {
    const dir = mkdtempSync(join(tmpdir(), 'attestly-cluster-'));
    chmodSync(dir, 0o755);
    cleanups.push(async () => {
      await stopServerOf(dir);
      rmSync(dir, { recursive: true, force: true });
    });
    return dir;
  }

  async function startService(dataDir: string): Promise<ServerProcess> {
    // No DATABASE_URL: the service uses the embedded server under DATA_DIR, as `npm start` does.
    const service = await startServerProcess(
      { DATA_DIR: dataDir, LOG_LEVEL: 'info', BCRYPT_ROUNDS: '4' },
      // A new cluster: initdb and every migration first.
      { startTimeoutMs: 120_000 },
    );
    cleanups.push(() => service.kill());
    return service;
  }

  /** `npm run cli -- …` against DATA_DIR and nothing else; never rejects. */
  function cli(dataDir: string, ...args: string[]): Promise<CliRun> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        {
          cwd: ROOT,
          timeout: 120_000,
          env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'silent', BCRYPT_ROUNDS: '4' },
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  function printed(run: CliRun): Record<string, unknown> {
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]) as Record<string, unknown>;
  }

  function userCreate(dataDir: string, email: string, ...more: string[]): Promise<CliRun> {
    return cli(dataDir, 'user:create', '--email', email, '--password', 'correct-horse-battery', ...more);
  }

  async function signIn(service: ServerProcess, email: string): Promise<number> {
    const response = await fetch(`${service.baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct-horse-battery' }),
    });
    return response.status;
  }

  async function readiness(service: ServerProcess): Promise<number> {
    return (await fetch(`${service.baseUrl}/api/v1/health/status`)).status;
  }

  it('four CLI commands at once beside `npm start` attach to its embedded PostgreSQL and leave it running: the service stays ready and signs the new users in', async () => {
    const dataDir = dataDirectory();
    const service = await startService(dataDir);
    const lock = () => JSON.parse(readFileSync(join(dataDir, 'postgres', CLUSTER_LOCK_FILE), 'utf8')) as object;
    expect(lock()).toMatchObject({ pid: service.child.pid, state: 'ready' });

    const owner = printed(
      await userCreate(dataDir, 'cluster-owner@example.com', '--org-name', 'Cluster', '--tier', 'professional'),
    );
    expect(await readiness(service)).toBe(200);

    const [first, second, key, jwks] = await Promise.all([
      userCreate(dataDir, 'cluster-first@example.com'),
      userCreate(dataDir, 'cluster-second@example.com', '--org-name', 'Second'),
      cli(dataDir, 'apikey:create', '--org', owner.organizationSlug as string, '--scopes', 'org:read'),
      cli(dataDir, 'jwks'),
    ]);
    printed(first);
    printed(second);
    const apiKey = printed(key).key as string;
    const published = (await (await fetch(`${service.baseUrl}/.well-known/jwks.json`)).json()) as object;
    expect(printed(jwks)).toEqual(published);

    expect(await readiness(service)).toBe(200);
    for (const email of ['cluster-owner@example.com', 'cluster-first@example.com', 'cluster-second@example.com']) {
      expect(await signIn(service, email)).toBe(200);
    }
    const me = await fetch(`${service.baseUrl}/api/v1/auth/me`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(me.status).toBe(200);
    // The service still owns the server; every CLI command has left.
    expect(lock()).toMatchObject({ pid: service.child.pid, state: 'ready' });
    expect(readdirSync(join(dataDir, 'postgres', CLUSTER_CLIENTS_DIR))).toEqual([]);

    // The owner stops the server when it leaves alone.
    const postmaster = postmasterPid(dataDir);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(isAlive(postmaster)).toBe(false);
    expect(existsSync(join(dataDir, 'postgres', CLUSTER_LOCK_FILE))).toBe(false);
  }, 240_000);

  it('a second service attaches to the running server; it reports a lost database on readiness and serves again when the owner has restarted it, without a restart of its own', async () => {
    const dataDir = dataDirectory();
    const owner = await startService(dataDir);
    const second = await startService(dataDir);
    printed(await userCreate(dataDir, 'cluster-reconnect@example.com', '--org-name', 'Reconnect'));
    expect(await signIn(second, 'cluster-reconnect@example.com')).toBe(200);

    // The owner cannot restart it while stopped; the server dies under both services.
    owner.child.kill('SIGSTOP');
    cleanups.push(() => void owner.child.kill('SIGCONT'));
    const lost = postmasterPid(dataDir);
    process.kill(lost, 'SIGKILL');
    await eventually(async () => expect(await readiness(second)).toBe(503));
    expect((await fetch(`${second.baseUrl}/health`)).status).toBe(200);

    owner.child.kill('SIGCONT');
    await eventually(async () => expect(await readiness(second)).toBe(200));
    expect(postmasterPid(dataDir)).not.toBe(lost);
    expect(await signIn(second, 'cluster-reconnect@example.com')).toBe(200);
    expect(await readiness(owner)).toBe(200);
    expect(await signIn(owner, 'cluster-reconnect@example.com')).toBe(200);

    // The owner leaves first: the server stays for the second service, which now owns it.
    owner.child.kill('SIGTERM');
    expect(await owner.exited).toBe(0);
    expect(await readiness(second)).toBe(200);
    expect(await signIn(second, 'cluster-reconnect@example.com')).toBe(200);
    expect(JSON.parse(readFileSync(join(dataDir, 'postgres', CLUSTER_LOCK_FILE), 'utf8'))).toMatchObject({
      pid: second.child.pid,
    });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', CLUSTER_LOCK_FILE))).toBe(false);
  }, 240_000);

  it('after its owner is killed the next process takes over the server it left running, and after a crash of both the next start recovers the data', async () => {
    const dataDir = dataDirectory();
    const first = await startService(dataDir);
    printed(await userCreate(dataDir, 'cluster-survivor@example.com', '--org-name', 'Survivor'));
    const postmaster = postmasterPid(dataDir);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(isAlive(postmaster)).toBe(true);

    // A CLI command finds a stale lock and a live server: it takes the server over, and stops it
    // when it leaves, since nobody else uses it.
    printed(await userCreate(dataDir, 'cluster-after-kill@example.com'));
    expect(isAlive(postmaster)).toBe(false);
    expect(existsSync(join(dataDir, 'postgres', CLUSTER_LOCK_FILE))).toBe(false);

    const second = await startService(dataDir);
    expect(await signIn(second, 'cluster-after-kill@example.com')).toBe(200);
    // Both the service and its server die without a word: a stale lock and a stale postmaster.pid.
    const crashed = postmasterPid(dataDir);
    second.child.kill('SIGKILL');
    process.kill(crashed, 'SIGKILL');
    await second.exited;

    const third = await startService(dataDir);
    expect(await readiness(third)).toBe(200);
    expect(await signIn(third, 'cluster-survivor@example.com')).toBe(200);
    expect(await signIn(third, 'cluster-after-kill@example.com')).toBe(200);
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
  }, 240_000);
});

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, 'postgres', 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** Stops whatever server a test left running on DATA_DIR. */
async function stopServerOf(dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = postmasterPid(dataDir);
  } catch {
    return;
  }
  if (!pid || !isAlive(pid)) return;
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 600 && isAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Retries an expectation until it holds (a state reached asynchronously), up to a minute. */
async function eventually(check: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
