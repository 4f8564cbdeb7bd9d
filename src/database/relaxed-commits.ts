import { Global, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';

/**
 * A small pool of its own whose sessions run with `synchronous_commit = off`: a statement on it
 * commits without waiting for the WAL flush, so a crash in the next fraction of a second (at most
 * 3 × wal_writer_delay) may lose it, and nothing else: PostgreSQL still replays what was flushed,
 * in order, and the flush of any later durable commit carries it along.
 *
 * Only for rows that can be lost without harm; docs/decisions/0062 names them (attestation
 * challenges). Everything else, the device, its counter and the monthly active devices among it,
 * commits durably through TypeORM's pool. One autocommitted statement per call, never a
 * transaction: durability is chosen per statement by the pool it runs on.
 */
@Injectable()
export class RelaxedCommits implements OnApplicationShutdown {
  private readonly pool: pg.Pool;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.pool = new pg.Pool({
      connectionString: (dataSource.options as { url?: string }).url,
      options: '-c synchronous_commit=off',
      max: 4,
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that drops is replaced on the next query; its error must not crash the process.
    this.pool.on('error', () => undefined);
  }

  /** The rows of one autocommitted statement. */
  async query<T>(sql: string, parameters?: unknown[]): Promise<T[]> {
    const result = await this.pool.query(sql, parameters);
    return result.rows as T[];
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** Infrastructure, global like the database connection it sits beside. */
@Global()
@Module({ providers: [RelaxedCommits], exports: [RelaxedCommits] })
export class RelaxedCommitsModule {}
