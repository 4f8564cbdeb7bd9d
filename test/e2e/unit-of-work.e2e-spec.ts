import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { AdvisoryLocks } from '../../src/database/advisory-lock.js';
import { preparedStatement, queryPrepared } from '../../src/database/sql.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { createTestDatabase, dropTestDatabase } from '../harness/database.js';

/**
 * The unit of work on a real PostgreSQL (decision 0070): what a repository writes inside `run`
 * commits or rolls back with the rest, at any call depth; nested runs join; after-commit tasks
 * run outside the transaction and never after a rollback.
 */
describe('unit of work', () => {
  let database: { name: string; url: string };
  let dataSource: DataSource;
  let uow: UnitOfWork;

  /** Stands for any repository: it only ever asks the unit of work where to run. */
  const write = (label: string) => uow.manager().query('INSERT INTO uow_probe (label) VALUES ($1)', [label]);
  const committed = async () =>
    (await dataSource.query<{ label: string }[]>('SELECT label FROM uow_probe ORDER BY label')).map((r) => r.label);
  const backendPid = async () =>
    (await uow.manager().query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid'))[0].pid;
  /** The same, as prepared statements (decision 0077): they must run where `manager()` runs. */
  const PREPARED_WRITE = preparedStatement('uow_probe_write', 'INSERT INTO uow_probe (label) VALUES ($1)');
  const PREPARED_PID = preparedStatement('uow_probe_pid', 'SELECT pg_backend_pid() AS pid');
  const writePrepared = (label: string) => queryPrepared(uow.manager(), PREPARED_WRITE, [label]);
  const preparedPid = async () => (await queryPrepared<{ pid: number }>(uow.manager(), PREPARED_PID, []))[0].pid;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataSource = await new DataSource(dataSourceOptions(database.url, { entities: [] })).initialize();
    await dataSource.query('CREATE TABLE uow_probe (label text PRIMARY KEY)');
    uow = new UnitOfWork(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    if (database) await dropTestDatabase(database.name);
  });

  it('commits every write made inside run, however deep the call', async () => {
    const deeper = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      await write('b');
    };
    await uow.run(async () => {
      await write('a');
      await Promise.all([deeper(), uow.run(() => write('c'))]);
    });
    expect(await committed()).toEqual(['a', 'b', 'c']);
  });

  it('rolls back every write, including a nested run, when the work throws', async () => {
    await dataSource.query('DELETE FROM uow_probe');
    await expect(
      uow.run(async () => {
        await write('x');
        await uow.run(() => write('y'));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await committed()).toEqual([]);
  });

  it('runs all statements of a run on one connection, and outside a run each on its own', async () => {
    const inside = await uow.run(async () => [await backendPid(), await backendPid()]);
    expect(inside[0]).toBe(inside[1]);
    expect(uow.active).toBe(false);
    await uow.run(async () => {
      expect(uow.active).toBe(true);
      // A read outside sees only committed data: the write of this run is not visible there.
      await write('hidden');
      const seen = await uow.outside(() => dataSource.query(`SELECT 1 FROM uow_probe WHERE label = 'hidden'`));
      expect(seen).toEqual([]);
    });
  });

  it('runs after-commit tasks once committed, outside the transaction, and never after a rollback', async () => {
    await dataSource.query('DELETE FROM uow_probe');
    const seen: string[] = [];
    await uow.run(async () => {
      await write('kept');
      await uow.afterCommit(async () => {
        seen.push(`active=${uow.active}`);
        seen.push(...(await committed()));
      });
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(['active=false', 'kept']);

    const never: string[] = [];
    await expect(
      uow.run(async () => {
        await uow.afterCommit(() => {
          never.push('ran');
        });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(never).toEqual([]);
  });

  it('runs prepared statements in the open unit of work: they commit and roll back with it, on its connection', async () => {
    await dataSource.query('DELETE FROM uow_probe');
    await expect(
      uow.run(async () => {
        await writePrepared('p1');
        await write('p2');
        expect(await preparedPid()).toBe(await backendPid());
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await committed()).toEqual([]);

    // The same statements again (now prepared on some of the pool's connections) commit with the run.
    for (let round = 0; round < 3; round++) {
      await uow.run(async () => {
        await writePrepared(`k${round}`);
        expect(await preparedPid()).toBe(await backendPid());
      });
    }
    // Outside a run, each is autocommitted on the pool.
    await writePrepared('alone');
    expect(await committed()).toEqual(['alone', 'k0', 'k1', 'k2']);
  });

  it("runs a locked job's prepared statements on the lock's own connection", async () => {
    const LOCK = 727_997;
    const locks = new AdvisoryLocks(dataSource, uow);
    const outcome = await locks.run(LOCK, async () => {
      const [lockHolder] = await dataSource.query<{ pid: number }[]>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted`,
        [LOCK],
      );
      return { holder: lockHolder.pid, prepared: [await preparedPid(), await uow.run(preparedPid)] };
    });
    expect(outcome.ran).toBe(true);
    if (outcome.ran) expect(outcome.result.prepared).toEqual([outcome.result.holder, outcome.result.holder]);
  });

  it("runs a locked job's units of work on the lock's own connection, and what outlives the job on the pool", async () => {
    const LOCK = 727_998;
    const locks = new AdvisoryLocks(dataSource, uow);
    let later: Promise<number> | null = null;
    const outcome = await locks.run(LOCK, async () => {
      const [lockHolder] = await dataSource.query<{ pid: number }[]>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted`,
        [LOCK],
      );
      const inUnits = [await uow.run(backendPid), await uow.run(backendPid)];
      // A task the job starts and does not wait for (a dispatcher woken after a commit).
      later = new Promise<void>((resolve) => setTimeout(resolve, 200)).then(() => uow.run(backendPid));
      return { holder: lockHolder.pid, inUnits, outside: await uow.outside(backendPid) };
    });
    expect(outcome.ran).toBe(true);
    if (!outcome.ran) return;
    const { holder, inUnits, outside } = outcome.result;
    expect(inUnits).toEqual([holder, holder]);
    expect(outside).not.toBe(holder);
    // The lock's connection went back to the pool with the job: the late task runs on a pool connection.
    expect(typeof (await later!)).toBe('number');
  });
});
