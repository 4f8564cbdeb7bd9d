import { Global, Inject, Injectable, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { queryPreparedOnPool, type PreparedStatement } from './sql.js';

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
export class RelaxedCommits implements OnModuleInit, OnApplicationShutdown {
  private readonly pool: pg.Pool;
  private readonly logger: Logger;

  constructor(@InjectDataSource() dataSource: DataSource, @Inject(APP_CONFIG) config: AppConfig) {
    this.logger = createLogger(config).child({ component: 'relaxed-commits' });
    this.pool = new pg.Pool({
      connectionString: (dataSource.options as { url?: string }).url,
      // A statement that waits over 2 s for a lock fails instead of holding one of the 4 connections
      // every tenant's challenges share (a migration locking `devices`, which a refresh's use reads).
      options: '-c synchronous_commit=off -c lock_timeout=2000',
      max: 4,
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: 5_000,
    });
    // An idle connection that drops is replaced on the next query; its error must not crash the process.
    // Only the code and message: pg-pool hangs the whole client on the error.
    this.pool.on('error', (error: Error & { code?: string }) =>
      this.logger.warn({ code: error.code, error: error.message }, 'an idle relaxed-commit connection failed'),
    );
  }

  /**
   * Connects once before the service answers: a server or pooler that refuses the session setting
   * (a transaction-mode PgBouncer without `ignore_startup_parameters = options`) stops the start
   * here rather than fail every attestation later, and a setting overridden by DATABASE_URL's own
   * `options` is said, since these commits then wait for the flush like the others.
   */
  async onModuleInit(): Promise<void> {
    const [row] = await this.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    if (row?.synchronous_commit !== 'off') {
      this.logger.warn(
        { synchronousCommit: row?.synchronous_commit },
        'attestation challenges commit durably: the relaxed pool did not get synchronous_commit = off',
      );
    }
  }

  /** The rows of one autocommitted statement (a prepared one is parsed once per connection). */
  async query<T>(statement: string | PreparedStatement, parameters?: unknown[]): Promise<T[]> {
    if (typeof statement !== 'string') return queryPreparedOnPool<T>(this.pool, statement, parameters ?? []);
    const result = await this.pool.query(statement, parameters);
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
