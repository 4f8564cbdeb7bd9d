import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';

/** A delivery with its event, as the admin routes show it. */
export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  data: Record<string, unknown>;
  occurred_at: Date;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** One attempt of a delivery. */
export interface AttemptRow {
  delivery_id: string;
  attempt_number: number;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  latency_ms: number;
  attempted_at: Date;
}

/** What an endpoint is created with. */
export type NewWebhookEndpoint = Pick<WebhookEndpoint, 'url' | 'secret' | 'events' | 'isActive' | 'description'>;

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, ev.event_type, ev.data, ev.occurred_at, d.status, d.attempt_count,
  d.next_attempt_at, d.last_status_code, d.last_error, d.delivered_at, d.created_at, d.updated_at`;

/**
 * The owner of `webhook_endpoints`, and of the deliveries and attempts as the organization's
 * admins read and retry them. Every method takes the organization id first: another
 * organization's endpoint or delivery is as unknown as a missing one.
 */
@Injectable()
export class WebhookEndpointsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private endpoints() {
    return this.uow.manager().getRepository(WebhookEndpoint);
  }

  /** Newest first. */
  list(organizationId: OrganizationId): Promise<WebhookEndpoint[]> {
    return this.endpoints().find({ where: { organizationId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  find(organizationId: OrganizationId, id: string): Promise<WebhookEndpoint | null> {
    return this.endpoints().findOneBy({ id, organizationId });
  }

  /** The endpoint locked FOR UPDATE until the unit of work ends, or null. */
  lock(organizationId: OrganizationId, id: string): Promise<WebhookEndpoint | null> {
    return this.endpoints()
      .createQueryBuilder('webhook_endpoints')
      .setLock('pessimistic_write')
      .where('webhook_endpoints.id = :id AND webhook_endpoints.organization_id = :org', { id, org: organizationId })
      .getOne();
  }

  count(organizationId: OrganizationId): Promise<number> {
    return this.endpoints().countBy({ organizationId });
  }

  insert(organizationId: OrganizationId, fields: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    const repository = this.endpoints();
    return repository.save(repository.create({ ...fields, organizationId }));
  }

  /** Writes an endpoint read through this repository for the same organization. */
  save(organizationId: OrganizationId, endpoint: WebhookEndpoint): Promise<WebhookEndpoint> {
    if (endpoint.organizationId !== organizationId) throw new Error('webhook endpoint of another organization');
    return this.endpoints().save(endpoint);
  }

  /** Its deliveries go with it (ON DELETE CASCADE). */
  async delete(organizationId: OrganizationId, id: string): Promise<void> {
    await this.endpoints().delete({ id, organizationId });
  }

  /** One page of the endpoint's deliveries, newest first, and how many it has. */
  async deliveries(
    organizationId: OrganizationId,
    endpointId: string,
    window: { limit: number; offset: number },
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const manager = this.uow.manager();
    const [rows, [{ total }]] = await Promise.all([
      manager.query<DeliveryRow[]>(
        `SELECT ${DELIVERY_COLUMNS}
           FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
          WHERE d.endpoint_id = $1 AND d.organization_id = $2
          ORDER BY d.created_at DESC, d.id DESC
          LIMIT $3 OFFSET $4`,
        [endpointId, organizationId, window.limit, window.offset],
      ),
      manager.query<{ total: number }[]>(
        `SELECT count(*)::int AS total FROM webhook_deliveries WHERE endpoint_id = $1 AND organization_id = $2`,
        [endpointId, organizationId],
      ),
    ]);
    return { rows, total };
  }

  /** The delivery of the endpoint, or null. */
  async delivery(organizationId: OrganizationId, endpointId: string, deliveryId: string): Promise<DeliveryRow | null> {
    const rows = await this.uow.manager().query<DeliveryRow[]>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.id = $1 AND d.endpoint_id = $2 AND d.organization_id = $3`,
      [deliveryId, endpointId, organizationId],
    );
    return rows[0] ?? null;
  }

  /** A permanently failed delivery pending again with a fresh budget, its first attempt now; false unless it was failed. */
  async resetFailed(organizationId: OrganizationId, endpointId: string, deliveryId: string): Promise<boolean> {
    const reset = await queryRows<{ id: string }>(
      this.uow.manager(),
      `UPDATE webhook_deliveries
          SET status = 'pending', attempt_count = 0, next_attempt_at = now(), locked_until = NULL,
              claim_token = NULL, updated_at = now()
        WHERE id = $1 AND endpoint_id = $2 AND organization_id = $3 AND status = 'failed'
      RETURNING id`,
      [deliveryId, endpointId, organizationId],
    );
    return reset.length > 0;
  }

  /** The attempts of these deliveries of the organization, in order, by delivery. */
  async attemptsOf(organizationId: OrganizationId, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
    const byDelivery = new Map<string, AttemptRow[]>();
    if (!deliveryIds.length) return byDelivery;
    const rows = await this.uow.manager().query<AttemptRow[]>(
      `SELECT a.delivery_id, a.attempt_number, a.status_code, a.response_body, a.error, a.latency_ms, a.attempted_at
         FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE a.delivery_id = ANY ($1::uuid[]) AND d.organization_id = $2
        ORDER BY a.attempt_number`,
      [deliveryIds, organizationId],
    );
    for (const row of rows) byDelivery.set(row.delivery_id, [...(byDelivery.get(row.delivery_id) ?? []), row]);
    return byDelivery;
  }
}
