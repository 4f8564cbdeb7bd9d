import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { withAdvisoryLock } from '../database/advisory-lock.js';
import { deleteInBatches } from '../database/batches.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/** A due delivery reserved by this process, with what it takes to send it. */
export interface ClaimedDelivery {
  id: string;
  claim_token: string;
  /** Attempts already recorded in the current budget. */
  attempt_count: number;
  organization_id: string;
  endpoint_id: string;
  url: string;
  secret: string;
  event_type: string;
  data: Record<string, unknown>;
  occurred_at: Date;
}

/** One attempt's outcome as recorded. */
export interface RecordedAttempt {
  status: 'pending' | 'succeeded' | 'failed';
  /** Seconds until the next attempt (0 unless pending). */
  retryInSeconds: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  latencyMs: number;
}

/**
 * The deliveries as the dispatcher works them, across every organization (a background sweep,
 * not a tenant's request): claiming due ones under a lease, recording attempts, pruning events
 * past retention, and the backlog figures.
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(
    private readonly uow: UnitOfWork,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** How many deliveries are pending, and the age in seconds of the oldest (0 when none). */
  async backlog(): Promise<{ pending: number; age: number }> {
    const [row] = await queryRows<{ pending: number; age: number }>(
      this.uow.manager(),
      `SELECT count(*)::int AS pending,
              COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age
         FROM webhook_deliveries WHERE status = 'pending'`,
    );
    return { pending: row?.pending ?? 0, age: row?.age ?? 0 };
  }

  /** Reserves up to `limit` due deliveries of active endpoints for `leaseSeconds` (FOR UPDATE SKIP LOCKED). */
  claim(limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    return queryRows<ClaimedDelivery>(
      this.uow.manager(),
      `WITH due AS (
         SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.locked_until IS NULL OR d.locked_until <= now()) AND e.is_active
          ORDER BY d.next_attempt_at
          LIMIT $1
            FOR UPDATE OF d SKIP LOCKED
       )
       UPDATE webhook_deliveries d
          SET locked_until = now() + make_interval(secs => $2::double precision),
              claim_token = gen_random_uuid(), updated_at = now()
         FROM due, webhook_endpoints e, webhook_events ev
        WHERE d.id = due.id AND e.id = d.endpoint_id AND ev.id = d.event_id
      RETURNING d.id, d.claim_token, d.attempt_count, d.organization_id, d.endpoint_id, e.url, e.secret,
                ev.event_type, ev.data, ev.occurred_at`,
      [limit, leaseSeconds],
    );
  }

  /**
   * The attempt and what follows it, in one statement, only while `claimToken` still holds the
   * claim: false (nothing written) when the claim was lost or the endpoint deleted meanwhile.
   */
  async record(deliveryId: string, claimToken: string, attempt: RecordedAttempt): Promise<boolean> {
    const recorded = await queryRows<{ id: string }>(
      this.uow.manager(),
      `WITH recorded AS (
         UPDATE webhook_deliveries SET
           attempt_count = attempt_count + 1,
           status = $3,
           next_attempt_at = CASE WHEN $3 = 'pending'
                                  THEN now() + make_interval(secs => $4::double precision) ELSE next_attempt_at END,
           locked_until = NULL, claim_token = NULL,
           last_status_code = $5, last_error = $6,
           delivered_at = CASE WHEN $3 = 'succeeded' THEN now() ELSE delivered_at END,
           updated_at = now()
         WHERE id = $1 AND claim_token = $2
         RETURNING id, organization_id
       )
       INSERT INTO webhook_delivery_attempts
         (organization_id, delivery_id, attempt_number, status_code, response_body, error, latency_ms)
       SELECT organization_id, id, (SELECT count(*) + 1 FROM webhook_delivery_attempts WHERE delivery_id = $1),
              $5, $7, $6, $8
         FROM recorded
      RETURNING id`,
      [
        deliveryId,
        claimToken,
        attempt.status,
        attempt.retryInSeconds,
        attempt.statusCode,
        attempt.error,
        attempt.responseBody,
        attempt.latencyMs,
      ],
    );
    return recorded.length > 0;
  }

  /**
   * Deletes, in batches, events older than their organization's retention (`days` per raw tier
   * in `tiers`) once none of their deliveries is pending, under the advisory lock `lockKey`: the
   * number deleted, or null when another instance holds the lock.
   */
  async pruneExpired(tiers: string[], days: number[], batch: number, lockKey: number): Promise<number | null> {
    const outcome = await withAdvisoryLock(this.dataSource, lockKey, (manager) =>
      deleteInBatches(batch, async (size) => {
        const rows = await queryRows<{ id: string }>(
          manager,
          `DELETE FROM webhook_events WHERE id IN (
             SELECT ev.id FROM webhook_events ev
               JOIN organization_tenants o ON o.id = ev.organization_id
               JOIN unnest($1::text[], $2::int[]) AS retention(tier, days) ON retention.tier = o.tier
              WHERE ev.occurred_at < now() - make_interval(days => retention.days)
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.status = 'pending')
              LIMIT $3)
           RETURNING id`,
          [tiers, days, size],
        );
        return rows.length;
      }),
    );
    return outcome.ran ? outcome.result : null;
  }
}
