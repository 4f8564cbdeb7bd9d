import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import type { SubscriptionEventName, SubscriptionWebhookData } from './webhook-event-catalog.js';
import { WebhookOutboxRepository } from './webhook-outbox.repository.js';

/** Flag event data: the flags module adds what it knows (environment, version, actor...). */
export interface FlagWebhookData {
  flag_id: string;
  flag_key: string;
  app_id: string;
  [field: string]: unknown;
}

/**
 * The producers of flag and subscription webhook events: typed methods those features call inside
 * the unit of work of their change, so each event commits or rolls back with its cause. None of
 * them ever throws. Device events arrive as domain events instead (`DeviceEventDeliveries`).
 */
@Injectable()
export class WebhookEvents {
  constructor(private readonly outbox: WebhookOutboxRepository) {}

  /** `flag.created`, `flag.updated` or `flag.deleted`, in the open unit of work (the flag change's). */
  async announceFlagChange(
    organizationId: OrganizationId,
    kind: 'created' | 'updated' | 'deleted',
    data: FlagWebhookData,
  ): Promise<void> {
    await this.outbox.enqueue(organizationId, `flag.${kind}`, data);
  }

  /** Subscription events of one ingested entitlement change, in the open unit of work. */
  async announceSubscriptionChange(
    organizationId: OrganizationId,
    events: readonly SubscriptionEventName[],
    data: SubscriptionWebhookData,
  ): Promise<void> {
    if (!events.length) return;
    await this.outbox.guarded(async () => {
      for (const event of events) await this.outbox.insert(organizationId, event, { ...data });
    }, undefined);
  }
}
