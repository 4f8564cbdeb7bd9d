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

  it('refuses a prepared statement from a task that outlived its unit of work, and writes nothing', async () => {
    await dataSource.query('DELETE FROM uow_probe');
    let late: Promise<unknown> | null = null;
    let committedNow = () => {};
    const committedYet = new Promise<void>((resolve) => (committedNow = resolve));
    await uow.run(async () => {
      // Started inside the run, not awaited: it runs once the run has committed and given back its connection.
      late = committedYet.then(() => writePrepared('late'));
      await writePrepared('in-run');
    });
    committedNow();
    await expect(late).rejects.toThrow('the connection of this unit of work was released');
    expect(await committed()).toEqual(['in-run']);
  });

  it('runs a prepared statement outside the open unit of work when asked: its own connection and commit', async () => {
    await dataSource.query('DELETE FROM uow_probe');
    await expect(
      uow.run(async () => {
        const inside = await preparedPid();
        const outside = await uow.outside(async () => {
          await writePrepared('outside');
          return preparedPid();
        });
        expect(outside).not.toBe(inside);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await committed()).toEqual(['outside']);
  });

  it('keeps a connection whose prepared statement failed, and the statement runs again there', async () => {
    await dataSource.query('DELETE FROM uow_probe');
    await writePrepared('dup');
    const before = await preparedPid();
    // A unique violation: the connection goes back to the pool, not out of it.
    await expect(writePrepared('dup')).rejects.toMatchObject({ code: '23505', statement: 'uow_probe_write' });
    expect(await preparedPid()).toBe(before);
    await expect(uow.run(() => writePrepared('dup'))).rejects.toMatchObject({ code: '23505' });
    await uow.run(() => writePrepared('after'));
    expect(await committed()).toEqual(['after', 'dup']);
  });

  it('parses a prepared statement again once a migration changed its result type, on every connection', async () => {
    await dataSource.query('CREATE TABLE uow_typed (x integer)');
    await dataSource.query('INSERT INTO uow_typed VALUES (7)');
    const READ = preparedStatement('uow_typed_read', 'SELECT x FROM uow_typed');
    const read = async () => (await queryPrepared<{ x: unknown }>(uow.manager(), READ, []))[0].x;
    // Parsed on several of the pool's connections, in and out of units of work.
    await Promise.all([read(), read(), read(), uow.run(read), uow.run(read)]);
    await dataSource.query('ALTER TABLE uow_typed ALTER COLUMN x TYPE bigint');
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) {
      outcomes.push(
        await (i % 2 ? uow.run(read) : read()).then(
          (x) => `ok ${String(x)}`,
          (error: Error & { code?: string }) => `failed ${error.code ?? error.message}`,
        ),
      );
    }
    // At most the first run meets a stale copy; from then on the statement has a new name everywhere.
    expect(outcomes.slice(1)).toEqual(Array.from({ length: 11 }, () => 'ok 7'));
    expect(['ok 7', 'failed 0A000']).toContain(outcomes[0]);
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
