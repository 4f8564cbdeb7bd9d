import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/** One payment-provider event as recorded. */
export interface BillingEventRow {
  eventId: string;
  eventType: string;
  /** Null when the event matched no organization. */
  organizationId: OrganizationId | null;
  createdAt: Date;
  outcome: 'applied' | 'stale' | 'unmatched';
}

/** The owner of `billing_events`: each provider event id is recorded once. */
@Injectable()
export class BillingEventsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Records the event; false when its id was recorded before (nothing is written then). */
  async record(event: BillingEventRow): Promise<boolean> {
    const recorded: unknown[] = await this.uow.manager().query(
      `INSERT INTO billing_events (event_id, event_type, organization_id, event_created_at, outcome)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
      [event.eventId, event.eventType, event.organizationId, event.createdAt, event.outcome],
    );
    return recorded.length > 0;
  }

  /** Whether an event created after `createdAt` was already applied to the organization. */
  async appliedAfter(organizationId: OrganizationId, createdAt: Date): Promise<boolean> {
    const newer: unknown[] = await this.uow
      .manager()
      .query(
        `SELECT 1 FROM billing_events WHERE organization_id = $1 AND outcome = 'applied' AND event_created_at > $2 LIMIT 1`,
        [organizationId, createdAt],
      );
    return newer.length > 0;
  }
}
