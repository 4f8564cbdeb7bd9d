import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { trustAppId, type AppId, type OrganizationId } from '../common/access/tenant-id.js';
import { withAdvisoryLock } from '../database/advisory-lock.js';
import { deleteInBatches } from '../database/batches.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/** A push the sweep claimed: leased to this instance until it records an outcome or the lease ends. */
export interface ClaimedPush {
  id: string;
  app_id: AppId;
  push_token_id: string | null;
  device_token: string;
  payload: Record<string, unknown>;
  attempts: number;
}

/** The owner of `push_deliveries`, the push outbox the dispatcher delivers to APNs. */
@Injectable()
export class PushDeliveriesRepository {
  constructor(
    private readonly uow: UnitOfWork,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * One delivery of `payload` (the APNs JSON) per registered token of the subscribers in the organization's app,
   * only when the app has APNs credentials (without them the stored inbox is the whole story).
   */
  async enqueue(
    organizationId: OrganizationId,
    appId: string,
    subscriberIds: readonly string[],
    payload: string,
  ): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO push_deliveries (organization_id, app_id, push_token_id, device_token, payload)
       SELECT t.organization_id, t.app_id, t.id, t.device_token, $4::jsonb
         FROM push_tokens t
        WHERE t.app_id = $2 AND t.organization_id = $1 AND t.subscriber_id = ANY($3::text[])
          AND EXISTS (SELECT 1 FROM push_credentials c WHERE c.app_id = $2)`,
      [organizationId, appId, [...new Set(subscriberIds)], payload],
    );
  }

  /**
   * Claims up to `batch` due pushes of every app with `FOR UPDATE SKIP LOCKED` and a lease of
   * `leaseSeconds` (so instances never send one push twice at once, and a push whose sweeper died
   * is taken over when its lease ends), counting the attempt.
   */
  async claimDue(batch: number, leaseSeconds: number): Promise<ClaimedPush[]> {
    const rows = await queryRows<ClaimedPush>(
      this.uow.manager(),
      `UPDATE push_deliveries d
          SET attempts = d.attempts + 1, lease_until = now() + make_interval(secs => $2), updated_at = now()
        WHERE d.id IN (
          SELECT id FROM push_deliveries
           WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
           ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING d.id, d.app_id, d.push_token_id, d.device_token, d.payload, d.attempts`,
      [batch, leaseSeconds],
    );
    return rows.map((row) => ({ ...row, app_id: trustAppId(row.app_id) }));
  }

  /** Releases the push for another attempt in `delaySeconds`, keeping APNs' last answer. */
  async retryLater(
    pushId: string,
    delaySeconds: number,
    httpStatus: number | null,
    error: string | null,
  ): Promise<void> {
    await this.uow.manager().query(
      `UPDATE push_deliveries SET lease_until = NULL, next_attempt_at = now() + make_interval(secs => $2),
              last_status = $3, last_error = $4, updated_at = now()
        WHERE id = $1`,
      [pushId, delaySeconds, httpStatus, error],
    );
  }

  /** Records the push's final outcome (`sent`, `unregistered`, `failed`). */
  async finish(pushId: string, status: string, httpStatus: number | null, error: string | null): Promise<void> {
    await this.uow.manager().query(
      `UPDATE push_deliveries SET status = $2, lease_until = NULL, last_status = $3, last_error = $4, updated_at = now()
        WHERE id = $1`,
      [pushId, status, httpStatus, error],
    );
  }

  /**
   * Deletes finished pushes older than `keepDays`, in batches, under the advisory lock `lockKey`
   * (one instance prunes at a time; the others skip the round).
   */
  async pruneFinished(keepDays: number, lockKey: number): Promise<void> {
    await withAdvisoryLock(this.dataSource, lockKey, (manager) =>
      deleteInBatches(1000, async (size) => {
        const rows = await queryRows<{ one: number }>(
          manager,
          `DELETE FROM push_deliveries WHERE id IN (
             SELECT id FROM push_deliveries
              WHERE status <> 'pending' AND created_at < now() - make_interval(days => $1)
              LIMIT $2)
           RETURNING 1 AS one`,
          [keepDays, size],
        );
        return rows.length;
      }),
    );
  }
}
