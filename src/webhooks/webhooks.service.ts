import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { randomSecret } from '../common/crypto.js';
import { conflict, invalidField, notFound } from '../common/errors/app-exception.js';
import { webhookLimitReached } from './webhooks.exceptions.js';
import { UnsafeUrlError, assertPublicUrl } from '../common/ssrf-guard.js';
import { type TierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { queryRows } from '../database/sql.js';
import { AuditService } from '../audit/audit.service.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { TEST_EVENT, deliveredOnTier, type WebhookEventName } from './webhook-event-catalog.js';
import { MAX_ATTEMPTS } from './webhook-retry-policy.js';
import { postWebhook } from './webhook-sender.js';
import { webhookBody, webhookHeaders } from './webhook-signing.js';
import type { CreateWebhookDto, DeliveriesQuery, UpdateWebhookDto } from './webhooks.dto.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { PlanService } from '../organizations/plan.service.js';
import { pageEnvelope, pageWindow } from '../common/pagination.js';

export const SECRET_PREFIX = 'whsec_';

export interface WebhookTestResult {
  success: boolean;
  statusCode: number | null;
  responseBody: string | null;
  latencyMs: number;
  error: string | null;
}

interface DeliveryRow {
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

interface AttemptRow {
  delivery_id: string;
  attempt_number: number;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  latency_ms: number;
  attempted_at: Date;
}

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, ev.event_type, ev.data, ev.occurred_at, d.status, d.attempt_count,
  d.next_attempt_at, d.last_status_code, d.last_error, d.delivered_at, d.created_at, d.updated_at`;

/** Webhook endpoint management for organization admins, on plans with the `webhooks` feature. */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
    private readonly organizations: OrganizationsService,
  ) {}

  /** Newest first. */
  async list(auth: OrgAuthContext): Promise<WebhookEndpoint[]> {
    await this.planOf(this.dataSource.manager, auth.organizationId);
    return this.dataSource.getRepository(WebhookEndpoint).find({
      where: { organizationId: auth.organizationId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  async create(auth: OrgAuthContext, input: CreateWebhookDto): Promise<WebhookEndpoint> {
    await this.planOf(this.dataSource.manager, auth.organizationId);
    await this.assertEventsDelivered(auth.organizationId, input.events);
    await this.assertDeliverableUrl(input.url);
    return this.dataSource.transaction(async (manager) => {
      // The organization row lock makes the count and the insert one decision.
      const plan = await this.planOf(manager, auth.organizationId, { lock: true });
      const { maxWebhooks } = plan.limits;
      const count = await manager.countBy(WebhookEndpoint, { organizationId: auth.organizationId });
      if (count >= maxWebhooks) {
        throw webhookLimitReached(maxWebhooks);
      }
      const endpoint = await manager.save(
        manager.create(WebhookEndpoint, {
          organizationId: auth.organizationId,
          url: input.url,
          secret: SECRET_PREFIX + randomSecret(32),
          events: input.events,
          isActive: true,
          description: input.description ?? '',
        }),
      );
      await this.record(manager, auth, 'webhook.created', endpoint.id, { url: endpoint.url, events: endpoint.events });
      return endpoint;
    });
  }

  async update(auth: OrgAuthContext, id: string, input: UpdateWebhookDto): Promise<WebhookEndpoint> {
    await this.planOf(this.dataSource.manager, auth.organizationId);
    if (input.events !== undefined) await this.assertEventsDelivered(auth.organizationId, input.events);
    return this.dataSource.transaction(async (manager) => {
      const endpoint = await this.lock(manager, auth, id);
      if (input.isActive !== undefined) endpoint.isActive = input.isActive;
      if (input.events !== undefined) endpoint.events = input.events;
      if (input.description !== undefined) endpoint.description = input.description;
      const saved = await manager.save(endpoint);
      await this.record(manager, auth, 'webhook.updated', id, { fields: Object.keys(input), ...input });
      return saved;
    });
  }

  /** Its deliveries go with it, so none still pending is attempted again. */
  async remove(auth: OrgAuthContext, id: string): Promise<void> {
    await this.planOf(this.dataSource.manager, auth.organizationId);
    await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.lock(manager, auth, id);
      await manager.delete(WebhookEndpoint, { id });
      await this.record(manager, auth, 'webhook.deleted', id, { url: endpoint.url });
    });
  }

  /** A synthetic `attestation.completed`, signed like a real delivery; not recorded, not retried. */
  async test(auth: OrgAuthContext, id: string): Promise<WebhookTestResult> {
    const endpoint = await this.find(auth, id);
    const body = webhookBody(TEST_EVENT, new Date(), {
      key_id: 'test_key_id',
      device_id: '',
      risk_score: 0,
      jailbreak_detected: false,
      device_model: 'unknown',
      os_version: 'unknown',
      app_id: '',
      bundle_id: '',
      test: true,
    });
    const response = await postWebhook({
      url: endpoint.url,
      body,
      headers: webhookHeaders({
        secret: endpoint.secret,
        body,
        event: TEST_EVENT,
        deliveryId: randomUUID(),
        sentAt: new Date(),
      }),
      timeoutMs: WebhookDispatcher.settings.timeoutMs,
      allowPrivateNetworks: this.config.webhookAllowPrivateNetworks,
    });
    return { success: response.error === null, ...response };
  }

  async deliveries(auth: OrgAuthContext, id: string, query: DeliveriesQuery) {
    await this.find(auth, id);
    const { limit, offset } = pageWindow(query);
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query<DeliveryRow[]>(
        `SELECT ${DELIVERY_COLUMNS}
           FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
          WHERE d.endpoint_id = $1 AND d.organization_id = $2
          ORDER BY d.created_at DESC, d.id DESC
          LIMIT $3 OFFSET $4`,
        [id, auth.organizationId, limit, offset],
      ),
      this.dataSource.query<{ total: number }[]>(
        `SELECT count(*)::int AS total FROM webhook_deliveries WHERE endpoint_id = $1 AND organization_id = $2`,
        [id, auth.organizationId],
      ),
    ]);
    const attempts = await this.attemptsOf(rows.map((row) => row.id));
    const items = rows.map((row) => toDeliveryResponse(row, attempts.get(row.id) ?? []));
    return pageEnvelope('metadata', query, items, total);
  }

  /** Only a permanently failed delivery: it gets a fresh budget of attempts, the first one now. */
  async retry(auth: OrgAuthContext, id: string, deliveryId: string) {
    await this.find(auth, id);
    return this.dataSource.transaction(async (manager) => {
      const reset = await queryRows<{ id: string }>(
        manager,
        `UPDATE webhook_deliveries
            SET status = 'pending', attempt_count = 0, next_attempt_at = now(), locked_until = NULL,
                claim_token = NULL, updated_at = now()
          WHERE id = $1 AND endpoint_id = $2 AND organization_id = $3 AND status = 'failed'
        RETURNING id`,
        [deliveryId, id, auth.organizationId],
      );
      const rows = await manager.query<DeliveryRow[]>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
          WHERE d.id = $1 AND d.endpoint_id = $2 AND d.organization_id = $3`,
        [deliveryId, id, auth.organizationId],
      );
      if (!rows.length) throw notFound('Delivery');
      if (!reset.length) {
        throw conflict(`Only a permanently failed delivery can be retried; this one is ${rows[0].status}`, {
          hint: 'A pending delivery is still being retried automatically',
        });
      }
      await this.record(manager, auth, 'webhook.delivery_retried', id, { deliveryId });
      const attempts = await this.attemptsOf([deliveryId], manager);
      return toDeliveryResponse(rows[0], attempts.get(deliveryId) ?? []);
    });
  }

  /** The organization's plan; 403 when it has no webhooks. */
  /** A subscription the plan never delivers (`subscription.changed` below Enterprise) is refused, saying why. */
  private async assertEventsDelivered(organizationId: string, events: readonly string[]): Promise<void> {
    const { serviceTier } = await this.organizations.get(organizationId);
    // The DTO already admitted only catalogue names.
    const never = events.filter((event) => !deliveredOnTier(event as WebhookEventName, serviceTier));
    if (never.length) {
      throw invalidField(
        'events',
        `${never.join(', ')} is delivered on the Enterprise plan only; this plan would never send it`,
      );
    }
  }

  private async planOf(
    manager: EntityManager,
    organizationId: string,
    options: { lock?: boolean } = {},
  ): Promise<TierDefinition> {
    return this.plans.requireFeature(
      organizationId,
      'webhooks',
      { message: 'Webhooks are available from the Pro plan', hint: 'Upgrade the plan to receive webhooks' },
      { manager, lock: options.lock },
    );
  }

  /** Scheme and address now; the address is checked again when each delivery connects. */
  private async assertDeliverableUrl(url: string): Promise<void> {
    try {
      await assertPublicUrl(url, { allowPrivateNetworks: this.config.webhookAllowPrivateNetworks });
    } catch (error) {
      if (error instanceof UnsafeUrlError) throw invalidField('url', error.message);
      throw error;
    }
  }

  private async find(auth: OrgAuthContext, id: string): Promise<WebhookEndpoint> {
    await this.planOf(this.dataSource.manager, auth.organizationId);
    const endpoint = await this.dataSource
      .getRepository(WebhookEndpoint)
      .findOneBy({ id, organizationId: auth.organizationId });
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  }

  private async lock(manager: EntityManager, auth: OrgAuthContext, id: string): Promise<WebhookEndpoint> {
    const endpoint = await manager
      .createQueryBuilder(WebhookEndpoint, 'webhook_endpoints')
      .setLock('pessimistic_write')
      .where('webhook_endpoints.id = :id AND webhook_endpoints.organization_id = :org', {
        id,
        org: auth.organizationId,
      })
      .getOne();
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  }

  private async attemptsOf(deliveryIds: string[], manager: EntityManager = this.dataSource.manager) {
    const byDelivery = new Map<string, AttemptRow[]>();
    if (!deliveryIds.length) return byDelivery;
    const rows = await manager.query<AttemptRow[]>(
      `SELECT delivery_id, attempt_number, status_code, response_body, error, latency_ms, attempted_at
         FROM webhook_delivery_attempts WHERE delivery_id = ANY ($1::uuid[])
        ORDER BY attempt_number`,
      [deliveryIds],
    );
    for (const row of rows) byDelivery.set(row.delivery_id, [...(byDelivery.get(row.delivery_id) ?? []), row]);
    return byDelivery;
  }

  private record(
    manager: EntityManager,
    auth: OrgAuthContext,
    action: string,
    endpointId: string,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(
      auth,
      { organizationId: auth.organizationId, action, resourceType: 'webhook', resourceId: endpointId, metadata },
      manager,
    );
  }
}

/** A delivery with every attempt; `nextAttemptAt` only while attempts remain. */
/** One event sent to one endpoint, with its attempts. */
export interface WebhookDeliveryResponse {
  id: string;
  endpointId: string;
  eventId: string;
  event: string;
  status: DeliveryRow['status'];
  attemptCount: number;
  maxAttempts: number;
  /** When the next attempt is due; null unless pending. */
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** The body that was (or will be) sent. */
  payload: { event: string; timestamp: string; data: Record<string, unknown> };
  attempts: {
    attemptNumber: number;
    statusCode: number | null;
    responseBody: string | null;
    error: string | null;
    latencyMs: number;
    attemptedAt: Date;
  }[];
}

export function toDeliveryResponse(row: DeliveryRow, attempts: AttemptRow[]): WebhookDeliveryResponse {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    event: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    maxAttempts: MAX_ATTEMPTS,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    payload: { event: row.event_type, timestamp: new Date(row.occurred_at).toISOString(), data: row.data },
    attempts: attempts.map((attempt) => ({
      attemptNumber: attempt.attempt_number,
      statusCode: attempt.status_code,
      responseBody: attempt.response_body,
      error: attempt.error,
      latencyMs: attempt.latency_ms,
      attemptedAt: attempt.attempted_at,
    })),
  };
}
