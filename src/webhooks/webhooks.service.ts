import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { randomSecret } from '../common/crypto.js';
import { conflict, invalidField, notFound } from '../common/errors/app-exception.js';
import { webhookLimitReached } from './webhooks.exceptions.js';
import { UnsafeUrlError, assertPublicUrl } from '../common/ssrf-guard.js';
import { type TierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditService } from '../audit/audit.service.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookEndpointsRepository, type AttemptRow, type DeliveryRow } from './webhook-endpoints.repository.js';
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

/** Webhook endpoint management for organization admins, on plans with the `webhooks` feature. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
    private readonly organizations: OrganizationsService,
  ) {}

  /** Newest first. */
  async list(auth: OrgAuthContext): Promise<WebhookEndpoint[]> {
    await this.planOf(auth.organizationId);
    return this.endpoints.list(auth.organizationId);
  }

  async create(auth: OrgAuthContext, input: CreateWebhookDto): Promise<WebhookEndpoint> {
    await this.planOf(auth.organizationId);
    await this.assertEventsDelivered(auth.organizationId, input.events);
    await this.assertDeliverableUrl(input.url);
    return this.uow.run(async () => {
      // The organization row lock makes the count and the insert one decision.
      const plan = await this.planOf(auth.organizationId, { lock: true });
      const { maxWebhooks } = plan.limits;
      const count = await this.endpoints.count(auth.organizationId);
      if (count >= maxWebhooks) {
        throw webhookLimitReached(maxWebhooks);
      }
      const endpoint = await this.endpoints.insert(auth.organizationId, {
        url: input.url,
        secret: SECRET_PREFIX + randomSecret(32),
        events: input.events,
        isActive: true,
        description: input.description ?? '',
      });
      await this.record(auth, 'webhook.created', endpoint.id, { url: endpoint.url, events: endpoint.events });
      return endpoint;
    });
  }

  async update(auth: OrgAuthContext, id: string, input: UpdateWebhookDto): Promise<WebhookEndpoint> {
    await this.planOf(auth.organizationId);
    if (input.events !== undefined) await this.assertEventsDelivered(auth.organizationId, input.events);
    return this.uow.run(async () => {
      const endpoint = await this.lock(auth, id);
      if (input.isActive !== undefined) endpoint.isActive = input.isActive;
      if (input.events !== undefined) endpoint.events = input.events;
      if (input.description !== undefined) endpoint.description = input.description;
      const saved = await this.endpoints.save(auth.organizationId, endpoint);
      await this.record(auth, 'webhook.updated', id, { fields: Object.keys(input), ...input });
      return saved;
    });
  }

  /** Its deliveries go with it, so none still pending is attempted again. */
  async remove(auth: OrgAuthContext, id: string): Promise<void> {
    await this.planOf(auth.organizationId);
    await this.uow.run(async () => {
      const endpoint = await this.lock(auth, id);
      await this.endpoints.delete(auth.organizationId, id);
      await this.record(auth, 'webhook.deleted', id, { url: endpoint.url });
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
    const { rows, total } = await this.endpoints.deliveries(auth.organizationId, id, { limit, offset });
    const attempts = await this.endpoints.attemptsOf(
      auth.organizationId,
      rows.map((row) => row.id),
    );
    const items = rows.map((row) => toDeliveryResponse(row, attempts.get(row.id) ?? []));
    return pageEnvelope('metadata', query, items, total);
  }

  /** Only a permanently failed delivery: it gets a fresh budget of attempts, the first one now. */
  async retry(auth: OrgAuthContext, id: string, deliveryId: string) {
    await this.find(auth, id);
    return this.uow.run(async () => {
      const reset = await this.endpoints.resetFailed(auth.organizationId, id, deliveryId);
      const delivery = await this.endpoints.delivery(auth.organizationId, id, deliveryId);
      if (!delivery) throw notFound('Delivery');
      if (!reset) {
        throw conflict(`Only a permanently failed delivery can be retried; this one is ${delivery.status}`, {
          hint: 'A pending delivery is still being retried automatically',
        });
      }
      await this.record(auth, 'webhook.delivery_retried', id, { deliveryId });
      const attempts = await this.endpoints.attemptsOf(auth.organizationId, [deliveryId]);
      return toDeliveryResponse(delivery, attempts.get(deliveryId) ?? []);
    });
  }

  /** The organization's plan; 403 when it has no webhooks. */
  /** A subscription the plan never delivers (`subscription.changed` below Enterprise) is refused, saying why. */
  private async assertEventsDelivered(organizationId: OrganizationId, events: readonly string[]): Promise<void> {
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

  /** The plan (in the open unit of work, its organization row locked with `lock`); 403 without webhooks. */
  private async planOf(organizationId: OrganizationId, options: { lock?: boolean } = {}): Promise<TierDefinition> {
    return this.plans.requireFeature(
      organizationId,
      'webhooks',
      { message: 'Webhooks are available from the Pro plan', hint: 'Upgrade the plan to receive webhooks' },
      { lock: options.lock },
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
    await this.planOf(auth.organizationId);
    const endpoint = await this.endpoints.find(auth.organizationId, id);
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  }

  private async lock(auth: OrgAuthContext, id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.endpoints.lock(auth.organizationId, id);
    if (!endpoint) throw notFound('Webhook endpoint');
    return endpoint;
  }

  private record(
    auth: OrgAuthContext,
    action: string,
    endpointId: string,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(auth, {
      organizationId: auth.organizationId,
      action,
      resourceType: 'webhook',
      resourceId: endpointId,
      metadata,
    });
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
