import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { withAdvisoryLock } from '../database/advisory-lock.js';
import { deleteInBatches } from '../database/batches.js';
import { queryRows } from '../database/sql.js';

/** The credential tables whose expired rows are deleted: the owners are auth's sessions, CLI login and e-mail tokens. */
export type CredentialTable = 'sessions' | 'cli_sessions' | 'auth_tokens';

/**
 * Deletes expired credentials for ExpiredCredentialsJob (decision 0070): under the job's advisory
 * lock (one instance at a time), on the lock's own connection, in batches that each commit on
 * their own, so one run never holds a long lock or a large transaction.
 */
@Injectable()
export class ExpiredCredentialsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Per table, the rows whose `expires_at` is at or before its cutoff, deleted in batches; null
   * when another instance holds `lockKey`.
   */
  async deleteExpired<T extends CredentialTable>(
    lockKey: number,
    cutoffs: readonly { table: T; before: Date }[],
    batch: number,
  ): Promise<Record<T, number> | null> {
    const outcome = await withAdvisoryLock(this.dataSource, lockKey, async (manager) => {
      const counts = {} as Record<T, number>;
      for (const { table, before } of cutoffs) counts[table] = await deleteBatches(manager, table, before, batch);
      return counts;
    });
    return outcome.ran ? outcome.result : null;
  }
}

function deleteBatches(manager: EntityManager, table: CredentialTable, before: Date, batch: number) {
  return deleteInBatches(batch, async (size) => {
    // Each batch is its own statement and commit; the expiry index finds the rows.
    const rows = await queryRows<{ one: number }>(
      manager,
      `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM ${table} WHERE expires_at <= $1 LIMIT $2))
       RETURNING 1 AS one`,
      [before, size],
    );
    return rows.length;
  });
}
