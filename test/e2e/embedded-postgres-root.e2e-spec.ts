// `npm start` as root with DATA_DIR where the `postgres` system user cannot go (a clone under
// /root, a 0700 directory): the compiled service as a real process on its own embedded PostgreSQL.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { CLUSTER_LOCATION_FILE, RELOCATED_CLUSTERS_DIR } from '../../src/database/embedded-postgres.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const isRoot = userInfo().uid === 0;

describe('the embedded PostgreSQL when started as root', () => {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(dataDir: string): Promise<ServerProcess> {
    // No DATABASE_URL: the service starts its own server under DATA_DIR, as `npm start` does.
    const service = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    cleanups.push(() => service.kill());
    return service;
  }

  (isRoot ? it : it.skip)(
    isRoot
      ? 'comes up healthy with DATA_DIR inside a 0700 directory, keeps the cluster where the postgres user can reach it, and finds it again after a restart'
      : 'comes up healthy with DATA_DIR inside a 0700 directory — SKIPPED: the tests do not run as root, and only root starts the server as the postgres user',
    async () => {
      const privateDir = mkdtempSync(join(tmpdir(), 'attestly-private-'));
      cleanups.push(() => rmSync(privateDir, { recursive: true, force: true }));
      expect(statSync(privateDir).mode & 0o777).toBe(0o700);
      const dataDir = join(privateDir, 'checkout', 'var');
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      // The postgres user really is locked out of DATA_DIR.
      expect(() => execFileSync('test', ['-x', dataDir], { uid: postgresUid(), gid: postgresUid('g') })).toThrow();

      const first = await start(dataDir);
      const location = readFileSync(join(dataDir, 'postgres', CLUSTER_LOCATION_FILE), 'utf8').trim();
      cleanups.push(() => rmSync(location, { recursive: true, force: true }));
      expect(location.startsWith(`${RELOCATED_CLUSTERS_DIR}/`)).toBe(true);
      expect(statSync(location).uid).toBe(postgresUid());
      expect(statSync(join(location, 'pgdata', 'PG_VERSION')).isFile()).toBe(true);
      const status = await fetch(`${first.baseUrl}/api/v1/health/status`);
      expect(status.status).toBe(200);
      // The user's directories keep their permissions.
      expect(statSync(privateDir).mode & 0o777).toBe(0o700);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      const signedUp = await fetch(`${first.baseUrl}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: 'root-start@example.com',
          password: 'correct-horse-battery',
          organizationName: 'R',
        }),
      });
      expect(signedUp.status).toBe(202);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      // A restart finds the same cluster through the record, with its data.
      const second = await start(dataDir);
      expect(readFileSync(join(dataDir, 'postgres', CLUSTER_LOCATION_FILE), 'utf8').trim()).toBe(location);
      expect((await fetch(`${second.baseUrl}/api/v1/health/status`)).status).toBe(200);
      // The sign-up made before the restart is there.
      const port = readFileSync(join(dataDir, 'postgres', 'port'), 'utf8').trim();
      const db = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/attestly` });
      await db.connect();
      try {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE email = $1`, [
          'root-start@example.com',
        ]);
        expect(rows).toEqual([{ n: 1 }]);
      } finally {
        await db.end();
      }
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    },
    120_000,
  );
});

function postgresUid(kind: 'u' | 'g' = 'u'): number {
  return Number(execFileSync('id', [`-${kind}`, 'postgres'], { encoding: 'utf8' }).trim());
}
