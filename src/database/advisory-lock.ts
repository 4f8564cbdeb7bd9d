import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { UnitOfWork } from './unit-of-work.js';

export type LockedRun<T> = { ran: true; result: T } | { ran: false };

/**
 * Runs `work` only while this process holds the PostgreSQL advisory lock `key`, so a scheduled
 * job never overlaps itself across instances: whoever does not get the lock skips this round.
 * The lock is taken on one dedicated connection, and `work` runs on that same connection (its
 * manager), so the job never waits on the pool while holding the lock.
 */
export async function withAdvisoryLock<T>(
  dataSource: DataSource,
  key: number,
  work: (manager: EntityManager) => Promise<T>,
): Promise<LockedRun<T>> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [key])) as {
      locked: boolean;
    }[];
    if (!locked) return { ran: false };
    try {
      return { ran: true, result: await work(runner.manager) };
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [key]);
    }
  } finally {
    await runner.release();
  }
}

/**
 * `withAdvisoryLock` for jobs, which hold no data source (decision 0070): `work` runs while this
 * instance holds the lock `key` on its dedicated connection, and writes through repositories in
 * units of work of its own, as any caller does; they run on that same connection
 * (`UnitOfWork.onConnection`), so a job takes one connection of the pool, never two.
 */
@Injectable()
export class AdvisoryLocks {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly uow: UnitOfWork,
  ) {}

  run<T>(key: number, work: () => Promise<T>): Promise<LockedRun<T>> {
    return withAdvisoryLock(this.dataSource, key, (manager) => this.uow.onConnection(manager, work));
  }
}
