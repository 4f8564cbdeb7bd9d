import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { entitlementFromRow, type EntitlementRow, type EntitlementState } from './entitlement-state.js';

/** A subject's entitlement as stored, with when it last changed. */
export type StoredEntitlement = EntitlementState & { updatedAt: Date };

const ENTITLEMENT_COLUMNS = `subject_id, tier, status, interval, source, product_id, expires_at, source_subscription_id,
  environment, auto_renew, updated_at`;

/** The owner of `entitlement_events` (each event id once per organization) and `subject_entitlements`. */
@Injectable()
export class EntitlementsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * Records the event; false when the organization ingested its id before. The unique index
   * decides: a concurrent redelivery waits for the first one's unit of work, then finds the row.
   */
  async recordEvent(
    organizationId: OrganizationId,
    event: { eventId: string; subjectId: string; payload: unknown; fingerprint: string },
  ): Promise<boolean> {
    const recorded = await this.uow.manager().query<unknown[]>(
      `INSERT INTO entitlement_events (organization_id, event_id, subject_id, payload, fingerprint)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (organization_id, event_id) DO NOTHING RETURNING id`,
      [organizationId, event.eventId, event.subjectId, JSON.stringify(event.payload), event.fingerprint],
    );
    return recorded.length > 0;
  }

  /** The fingerprint and subject of an event ingested before. */
  async event(
    organizationId: OrganizationId,
    eventId: string,
  ): Promise<{ fingerprint: string; subjectId: string } | null> {
    const [row] = await this.uow
      .manager()
      .query<{ fingerprint: string; subject_id: string }[]>(
        `SELECT fingerprint, subject_id FROM entitlement_events WHERE organization_id = $1 AND event_id = $2`,
        [organizationId, eventId],
      );
    return row ? { fingerprint: row.fingerprint, subjectId: row.subject_id } : null;
  }

  /** Until the unit of work ends, the subject's events apply one at a time. */
  async lockSubject(organizationId: OrganizationId, subjectId: string): Promise<void> {
    await this.uow
      .manager()
      .query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`entitlement:${organizationId}:${subjectId}`]);
  }

  async find(organizationId: OrganizationId, subjectId: string): Promise<StoredEntitlement | null> {
    const [row] = await this.uow
      .manager()
      .query<EntitlementRow[]>(
        `SELECT ${ENTITLEMENT_COLUMNS} FROM subject_entitlements WHERE organization_id = $1 AND subject_id = $2`,
        [organizationId, subjectId],
      );
    return row ? stored(row) : null;
  }

  /** Replaces the subject's entitlement by `state`, applied from `eventId`. */
  async save(organizationId: OrganizationId, state: EntitlementState, eventId: string): Promise<StoredEntitlement> {
    const [saved] = await this.uow.manager().query<EntitlementRow[]>(
      `INSERT INTO subject_entitlements (organization_id, subject_id, tier, status, interval, source, product_id,
                                         expires_at, source_subscription_id, environment, auto_renew, last_event_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (organization_id, subject_id) DO UPDATE SET
         tier = EXCLUDED.tier, status = EXCLUDED.status, interval = EXCLUDED.interval, source = EXCLUDED.source,
         product_id = EXCLUDED.product_id, expires_at = EXCLUDED.expires_at,
         source_subscription_id = EXCLUDED.source_subscription_id, environment = EXCLUDED.environment,
         auto_renew = EXCLUDED.auto_renew, last_event_id = EXCLUDED.last_event_id, updated_at = now()
       RETURNING ${ENTITLEMENT_COLUMNS}`,
      [
        organizationId,
        state.subjectId,
        state.tier,
        state.status,
        state.interval,
        state.source,
        state.productId,
        state.expiresAt,
        state.sourceSubscriptionId,
        state.environment,
        state.autoRenew,
        eventId,
      ],
    );
    return stored(saved);
  }
}

function stored(row: EntitlementRow): StoredEntitlement {
  return { ...entitlementFromRow(row), updatedAt: row.updated_at };
}
