import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { EmbeddedPostgres, isAlive, waitUntilReady } from './embedded-postgres.js';

/** The file under the cluster's directory that names the process owning the running server. */
export const CLUSTER_LOCK_FILE = 'cluster.lock';

/** One empty file per process using a server it does not own, named after its pid. */
export const CLUSTER_CLIENTS_DIR = 'clients';

export interface ClusterLock {
  /** The owner: the one process that stops the server (or hands it to a client) when it leaves. */
  readonly pid: number;
  /** Null while the owner is still starting the server. */
  readonly port: number | null;
  readonly state: 'starting' | 'ready' | 'stopping';
}

export interface EmbeddedClusterOptions {
  /** Directory holding the cluster, its lock and its log (DATA_DIR/postgres). */
  readonly dir: string;
  /** Database the owner creates when missing, before any client is told the port. */
  readonly database: string;
  readonly log?: (line: string) => void;
  /** How long to wait for another process's server to become ready. */
  readonly timeoutMs?: number;
}

/**
 * One embedded PostgreSQL per data directory, shared by every process that needs it: the service,
 * a second service, each management CLI command. `cluster.lock` (created atomically with `link`,
 * which refuses an existing name) names the owner and the port. The first process creates it and
 * starts (or adopts) the server; every other one attaches, registers itself under `clients/`, and
 * never stops the server. When the owner leaves it hands the running server to a live client, or
 * stops it when there is none. A lock whose owner is dead is stale: the next process, or any
 * attached one within a second, takes over the server that is still running (or starts it again).
 * The owner restarts a server that went away, so its clients' pools reconnect on the same port.
 */
export class EmbeddedCluster {
  private readonly server: EmbeddedPostgres;
  private readonly lockPath: string;
  private readonly clientsDir: string;
  private portValue = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private released = false;

  private constructor(private readonly options: EmbeddedClusterOptions) {
    this.server = new EmbeddedPostgres({ dir: options.dir, log: options.log });
    this.lockPath = join(options.dir, CLUSTER_LOCK_FILE);
    this.clientsDir = join(options.dir, CLUSTER_CLIENTS_DIR);
  }

  /** Attaches to the server running on `dir`, or starts it and owns it. */
  static async join(options: EmbeddedClusterOptions): Promise<EmbeddedCluster> {
    const cluster = new EmbeddedCluster(options);
    await cluster.attachOrStart();
    return cluster;
  }

  get port(): number {
    return this.portValue;
  }

  /** Whether this process currently owns the server. */
  get owner(): boolean {
    return readLock(this.lockPath)?.record.pid === process.pid;
  }

  url(name = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.portValue}/${name}`;
  }

  /** The owner stops the server, or hands it to a client still using it; a client only leaves. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.watchdog) clearInterval(this.watchdog);
    await this.checking;
    const held = readLock(this.lockPath);
    if (held?.record.pid !== process.pid) {
      this.unregister();
      return;
    }
    this.unregister();
    // Clients register before they read the lock: one that registers after this line reads
    // `stopping` and waits; one registered before it is found below and inherits the server.
    writeLock(this.lockPath, { ...held.record, state: 'stopping' });
    const heir = this.liveClients()[0];
    if (heir) {
      writeLock(this.lockPath, { pid: heir, port: this.portValue, state: 'ready' });
      this.options.log?.(`embedded PostgreSQL left running for process ${heir}, which uses it`);
      return;
    }
    if (!this.server.running()) await this.server.adopt();
    await this.server.stop();
    unlinkQuietly(this.lockPath);
  }

  private async attachOrStart(): Promise<void> {
    mkdirSync(this.clientsDir, { recursive: true });
    const timeoutMs = this.options.timeoutMs ?? 120_000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const held = readLock(this.lockPath);
      if (!held) {
        if (createLock(this.lockPath, { pid: process.pid, port: null, state: 'starting' })) {
          await this.own();
          break;
        }
        continue;
      }
      if (held.record.pid === process.pid) {
        await this.own();
        break;
      }
      if (!alive(held.record.pid)) {
        removeStale(this.lockPath, held.raw);
        continue;
      }
      if (held.record.state === 'ready' && held.record.port) {
        this.register();
        if (readLock(this.lockPath)?.raw === held.raw) {
          this.portValue = held.record.port;
          await waitUntilReady(this.url(), Math.max(1_000, deadline - Date.now()));
          break;
        }
        this.unregister();
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `the embedded PostgreSQL in ${this.options.dir} (process ${held.record.pid}) was not ready within ${timeoutMs / 1000} s`,
        );
      }
      await sleep(100);
    }
    this.watchdog = setInterval(() => void this.check(), 1_000);
    this.watchdog.unref();
  }

  /** Adopts the server a gone owner left running, or starts it; then tells the clients the port. */
  private async own(): Promise<void> {
    try {
      if (await this.server.adopt()) {
        this.options.log?.(`embedded PostgreSQL on 127.0.0.1:${this.server.port} taken over from a gone process`);
      } else {
        await this.startServer();
      }
      this.portValue = this.server.port;
      await ensureDatabase(this.server.url(), this.options.database);
      writeLock(this.lockPath, { pid: process.pid, port: this.portValue, state: 'ready' });
    } catch (error) {
      if (readLock(this.lockPath)?.record.pid === process.pid) unlinkQuietly(this.lockPath);
      throw error;
    }
  }

  /**
   * Starts the server; a few more tries when it fails at once, as it does while the backends of a
   * killed server still hold its shared memory.
   */
  private async startServer(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.server.start();
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        this.options.log?.(`embedded PostgreSQL did not start (${(error as Error).message}); trying again`);
        await sleep(1_000 * attempt);
      }
    }
  }

  /**
   * Every second: the owner restarts a server that went away (the clients' pools reconnect on the
   * same port); a client takes over from an owner that died.
   */
  private check(): Promise<void> {
    if (!this.checking) {
      this.checking = this.inspect().finally(() => (this.checking = null));
    }
    return this.checking;
  }

  private async inspect(): Promise<void> {
    try {
      const held = readLock(this.lockPath);
      if (held?.record.pid === process.pid) {
        if (held.record.state !== 'ready' || this.server.running() || (await this.server.adopt())) return;
        this.options.log?.('embedded PostgreSQL went away; starting it again');
        await this.startServer();
        this.portValue = this.server.port;
        writeLock(this.lockPath, { pid: process.pid, port: this.portValue, state: 'ready' });
      } else if (!held || !alive(held.record.pid)) {
        if (held) removeStale(this.lockPath, held.raw);
        if (!createLock(this.lockPath, { pid: process.pid, port: null, state: 'starting' })) return;
        this.unregister();
        await this.own();
      }
    } catch (error) {
      this.options.log?.(`embedded PostgreSQL check failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private register(): void {
    writeFileSync(join(this.clientsDir, String(process.pid)), '');
  }

  private unregister(): void {
    unlinkQuietly(join(this.clientsDir, String(process.pid)));
  }

  /** Registered clients still running, other than this process; the files of gone ones are removed. */
  private liveClients(): number[] {
    const pids: number[] = [];
    for (const name of readdirSync(this.clientsDir)) {
      const pid = Number(name);
      if (pid === process.pid) continue;
      if (alive(pid)) pids.push(pid);
      else unlinkQuietly(join(this.clientsDir, name));
    }
    return pids;
  }
}

function alive(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0 && isAlive(pid);
}

function readLock(path: string): { raw: string; record: ClusterLock } | null {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    return { raw, record: JSON.parse(raw) as ClusterLock };
  } catch {
    // Never half-written (see writeLock): unreadable means damaged, so it is treated as stale.
    return { raw, record: { pid: 0, port: null, state: 'stopping' } };
  }
}

function scratchName(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
}

/** Creates the lock with its content in one step: `link` fails when the name exists. */
function createLock(path: string, record: ClusterLock): boolean {
  const scratch = scratchName(path);
  writeFileSync(scratch, JSON.stringify(record));
  try {
    linkSync(scratch, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkQuietly(scratch);
  }
}

/** The owner replaces its lock in one step (rename), so no reader sees half a record. */
function writeLock(path: string, record: ClusterLock): void {
  const scratch = scratchName(path);
  writeFileSync(scratch, JSON.stringify(record));
  renameSync(scratch, path);
}

/**
 * Removes the lock of a dead owner, and only that one: the lock is moved aside first, and put back
 * when what was moved is not what was judged stale (another process made a new one meanwhile).
 */
function removeStale(path: string, staleRaw: string): void {
  const aside = `${scratchName(path)}.stale`;
  try {
    renameSync(path, aside);
  } catch {
    return;
  }
  try {
    if (readFileSync(aside, 'utf8') !== staleRaw) linkSync(aside, path);
  } catch {
    // a newer lock is in place already
  } finally {
    unlinkQuietly(aside);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}
