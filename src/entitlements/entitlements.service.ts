import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { sha256Hex } from '../common/crypto.js';
import { conflict } from '../common/errors/app-exception.js';
import { canonicalJson } from '../common/rules/canonical-json.js';
import { WebhookEvents } from '../webhooks/webhook-events.js';
import {
  entitlementFromRow,
  subscriptionEventsFor,
  toSubscriptionWebhookData,
  type EntitlementRow,
  type EntitlementState,
  type EntitlementStatus,
} from './entitlement-state.js';
import type { EntitlementEventDto } from './entitlements.dto.js';

export interface IngestResult {
  eventId: string;
  /** The event was ingested before: nothing changed and nothing fired. */
  duplicate: boolean;
  entitlement: EntitlementState & { updatedAt: Date };
}

const ENTITLEMENT_COLUMNS = `subject_id, tier, status, interval, source, product_id, expires_at, source_subscription_id,
  environment, auto_renew, updated_at`;

/**
 * Ingests normalized subscription events (DESIGN.md section 4): each `event_id` once per
 * organization, the subject's current entitlement replaced by the event's state, and the
 * subscription webhooks of a real change written in the same transaction.
 */
@Injectable()
export class EntitlementsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly webhooks: WebhookEvents,
  ) {}

  async ingest(auth: OrgAuthContext, input: EntitlementEventDto): Promise<IngestResult> {
    const state = stateOf(input);
    const fingerprint = sha256Hex(canonicalJson({ ...state, expiresAt: state.expiresAt?.toISOString() ?? null }));
    const organizationId = auth.organizationId;
    return this.dataSource.transaction(async (manager) => {
      // The unique index decides: a concurrent redelivery waits here, then finds the row.
      const recorded = await manager.query<unknown[]>(
        `INSERT INTO entitlement_events (organization_id, event_id, subject_id, payload, fingerprint)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (organization_id, event_id) DO NOTHING RETURNING id`,
        [organizationId, input.event_id, state.subjectId, JSON.stringify(input), fingerprint],
      );
      if (!recorded.length) return this.duplicate(manager, organizationId, input.event_id, fingerprint);

      // One subject's events apply one at a time, so each sees the state the previous one left.
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
        `entitlement:${organizationId}:${state.subjectId}`,
      ]);
      const previous = await this.current(manager, organizationId, state.subjectId);
      const [saved] = await manager.query<EntitlementRow[]>(
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
          input.event_id,
        ],
      );
      await this.webhooks.subscriptionChanged(
        manager,
        organizationId,
        subscriptionEventsFor(previous, state),
        toSubscriptionWebhookData(state, input.event_id),
      );
      return { eventId: input.event_id, duplicate: false, entitlement: withUpdatedAt(saved) };
    });
  }

  /** The same event again answers as before; the same id with other content is refused. */
  private async duplicate(
    manager: EntityManager,
    organizationId: string,
    eventId: string,
    fingerprint: string,
  ): Promise<IngestResult> {
    const [earlier] = await manager.query<{ fingerprint: string; subject_id: string }[]>(
      `SELECT fingerprint, subject_id FROM entitlement_events WHERE organization_id = $1 AND event_id = $2`,
      [organizationId, eventId],
    );
    if (earlier.fingerprint !== fingerprint) {
      throw conflict(`event_id ${eventId} was already ingested with different content`, {
        hint: 'Each distinct event needs its own event_id',
      });
    }
    const rows = await manager.query<EntitlementRow[]>(
      `SELECT ${ENTITLEMENT_COLUMNS} FROM subject_entitlements WHERE organization_id = $1 AND subject_id = $2`,
      [organizationId, earlier.subject_id],
    );
    return { eventId, duplicate: true, entitlement: withUpdatedAt(rows[0]) };
  }

  private async current(manager: EntityManager, organizationId: string, subjectId: string) {
    const rows = await manager.query<EntitlementRow[]>(
      `SELECT ${ENTITLEMENT_COLUMNS} FROM subject_entitlements WHERE organization_id = $1 AND subject_id = $2`,
      [organizationId, subjectId],
    );
    return rows[0] ? entitlementFromRow(rows[0]) : null;
  }
}

function stateOf(input: EntitlementEventDto): EntitlementState {
  return {
    subjectId: input.subject_id,
    tier: input.tier ?? '',
    status: input.status as EntitlementStatus,
    interval: input.interval ?? '',
    source: input.source ?? '',
    productId: input.product_id ?? '',
    expiresAt: input.expires_at ? new Date(input.expires_at) : null,
    sourceSubscriptionId: input.source_subscription_id ?? '',
    environment: input.environment ?? 'production',
    autoRenew: input.auto_renew ?? false,
  };
}

function withUpdatedAt(row: EntitlementRow): EntitlementState & { updatedAt: Date } {
  return { ...entitlementFromRow(row), updatedAt: row.updated_at };
}

/** The ingestion response, snake_case like the events. */
export interface EntitlementIngestResponse {
  event_id: string;
  /** The event id was seen before: nothing changed. */
  duplicate: boolean;
  entitlement: {
    subject_id: string;
    tier: string;
    status: IngestResult['entitlement']['status'];
    interval: string;
    source: string;
    product_id: string;
    expires_at: string | null;
    source_subscription_id: string;
    environment: string;
    auto_renew: boolean;
    updated_at: Date;
  };
}

export function toIngestResponse(result: IngestResult): EntitlementIngestResponse {
  const { entitlement } = result;
  return {
    event_id: result.eventId,
    duplicate: result.duplicate,
    entitlement: {
      subject_id: entitlement.subjectId,
      tier: entitlement.tier,
      status: entitlement.status,
      interval: entitlement.interval,
      source: entitlement.source,
      product_id: entitlement.productId,
      expires_at: entitlement.expiresAt?.toISOString() ?? null,
      source_subscription_id: entitlement.sourceSubscriptionId,
      environment: entitlement.environment,
      auto_renew: entitlement.autoRenew,
      updated_at: entitlement.updatedAt,
    },
  };
}
