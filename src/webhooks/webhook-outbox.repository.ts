import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppId, OrganizationId } from '../common/access/tenant-id.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { preparedStatement, queryPrepared } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { WEBHOOK_EVENTS, tiersReceiving, type WebhookEventName } from './webhook-event-catalog.js';

export interface EnqueueOptions {
  /** The app a device event comes from: nothing is written when that app has webhooks disabled. */
  appId?: AppId;
}

/** Per event, the raw tiers that receive it; computed once. */
const RECEIVING_TIERS = new Map(WEBHOOK_EVENTS.map((event) => [event, tiersReceiving(event)]));

/** The events an organization's active endpoints listen to (every device event asks: prepared, decision 0077). */
const SUBSCRIBED_EVENTS = preparedStatement(
  'webhooks_subscribed_events',
  `SELECT DISTINCT unnest(e.events) AS event, o.tier
     FROM webhook_endpoints e JOIN organization_tenants o ON o.id = e.organization_id
    WHERE e.organization_id = $1 AND e.is_active AND ($2::uuid IS NULL OR app_webhooks_enabled($2::uuid))`,
);

/** An event and its deliveries, written only when some endpoint receives it (`insert`). */
const INSERT_EVENT = preparedStatement(
  'webhooks_insert_event',
  `WITH targets AS (
     SELECT e.id FROM webhook_endpoints e JOIN organization_tenants o ON o.id = e.organization_id
      WHERE e.organization_id = $1 AND e.is_active AND $2 = ANY (e.events) AND o.tier = ANY ($4::text[])
        AND ($5::uuid IS NULL OR app_webhooks_enabled($5::uuid))
   ), event AS (
     INSERT INTO webhook_events (organization_id, event_type, data)
     SELECT $1, $2, $3::jsonb WHERE EXISTS (SELECT 1 FROM targets)
     RETURNING id
   )
   INSERT INTO webhook_deliveries (organization_id, endpoint_id, event_id)
   SELECT $1, targets.id, event.id FROM targets CROSS JOIN event
   RETURNING id`,
);

/**
 * The outbox (`webhook_events`, `webhook_deliveries` as written by producers). An event is written
 * with the change it announces, in the open unit of work, as one row plus one delivery per active
 * endpoint subscribed to it; the dispatcher's sweep sends them after commit. Nothing is written on
 * plans without webhooks, for an app with webhooks disabled (the apps feature's
 * `app_webhooks_enabled`), or when no endpoint listens.
 */
@Injectable()
export class WebhookOutboxRepository {
  private readonly logger: Logger;

  constructor(
    private readonly uow: UnitOfWork,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.logger = createLogger(config).child({ component: 'webhook-outbox' });
  }

  /** The number of deliveries written. A failure here is logged and never fails the caller. */
  enqueue(
    organizationId: OrganizationId,
    event: WebhookEventName,
    data: Record<string, unknown>,
    options: EnqueueOptions = {},
  ): Promise<number> {
    return this.guarded(() => this.insert(organizationId, event, data, options), 0);
  }

  /** The events some active endpoint of the organization would receive now. */
  async subscribedEvents(organizationId: OrganizationId, options: EnqueueOptions = {}): Promise<Set<WebhookEventName>> {
    const rows = await queryPrepared<{ event: WebhookEventName; tier: string }>(this.uow.manager(), SUBSCRIBED_EVENTS, [
      organizationId,
      options.appId ?? null,
    ]);
    return new Set(rows.filter((row) => RECEIVING_TIERS.get(row.event)?.includes(row.tier)).map((row) => row.event));
  }

  /**
   * Runs producer work so that its failure cannot fail the change that caused it: inside a
   * transaction under a savepoint (an error would otherwise abort the whole transaction),
   * outside one simply caught. Either way the error is logged and `fallback` returned.
   */
  async guarded<T>(work: () => Promise<T>, fallback: T): Promise<T> {
    const manager = this.uow.manager();
    const inTransaction = manager.queryRunner?.isTransactionActive ?? false;
    if (inTransaction) await manager.query('SAVEPOINT webhook_outbox');
    try {
      const result = await work();
      if (inTransaction) await manager.query('RELEASE SAVEPOINT webhook_outbox');
      return result;
    } catch (error) {
      this.logger.error({ err: error }, 'webhook event not written');
      if (inTransaction) {
        await manager.query('ROLLBACK TO SAVEPOINT webhook_outbox');
        await manager.query('RELEASE SAVEPOINT webhook_outbox');
      }
      return fallback;
    }
  }

  /** `enqueue` without its guard: for producers that already run inside `guarded`. */
  async insert(
    organizationId: OrganizationId,
    event: WebhookEventName,
    data: Record<string, unknown>,
    options: EnqueueOptions = {},
  ): Promise<number> {
    const deliveries = await queryPrepared<{ id: string }>(this.uow.manager(), INSERT_EVENT, [
      organizationId,
      event,
      JSON.stringify(data),
      RECEIVING_TIERS.get(event) ?? [],
      options.appId ?? null,
    ]);
    return deliveries.length;
  }
}
