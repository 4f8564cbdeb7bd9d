import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { withAdvisoryLock } from '../database/advisory-lock.js';
import { deleteInBatches } from '../database/batches.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/**
 * The owner of `consumed_tokens`: the `jti` of each device token a backend consumed, kept until
 * the token expires; the primary key decides between concurrent consumes on any instance.
 */
@Injectable()
export class ConsumedTokensRepository {
  constructor(
    private readonly uow: UnitOfWork,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Consumes the token: false when its `jti` was consumed already. */
  async consume(organizationId: OrganizationId, jti: string, appId: string, expiresAtS: number): Promise<boolean> {
    const rows = await this.uow.manager().query<unknown[]>(
      `INSERT INTO consumed_tokens (jti, organization_id, app_id, expires_at)
       VALUES ($1, $2, $3, to_timestamp($4)) ON CONFLICT (jti) DO NOTHING RETURNING 1`,
      [jti, organizationId, appId, expiresAtS],
    );
    return rows.length > 0;
  }

  /** Whether the token with this `jti` of the organization was consumed. */
  async isConsumed(organizationId: OrganizationId, jti: string): Promise<boolean> {
    const rows = await this.uow
      .manager()
      .query<unknown[]>(`SELECT 1 FROM consumed_tokens WHERE jti = $1 AND organization_id = $2`, [jti, organizationId]);
    return rows.length > 0;
  }

  /**
   * Deletes every organization's consumed tokens expired at `now`, in batches of `batch`, under
   * the advisory lock `lockKey`: the number deleted, or null when another instance holds it.
   */
  async deleteExpired(now: Date, batch: number, lockKey: number): Promise<number | null> {
    const outcome = await withAdvisoryLock(this.dataSource, lockKey, (manager) =>
      deleteInBatches(batch, async (size) => {
        const rows = await queryRows<{ one: number }>(
          manager,
          `DELETE FROM consumed_tokens WHERE jti IN (
             SELECT jti FROM consumed_tokens WHERE expires_at <= $1 LIMIT $2)
           RETURNING 1 AS one`,
          [now, size],
        );
        return rows.length;
      }),
    );
    return outcome.ran ? outcome.result : null;
  }
}
