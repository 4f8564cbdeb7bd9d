import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SubscriptionEventName, SubscriptionWebhookData } from './webhook-event-catalog.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { WebhookOutbox } from './webhook-outbox.js';

/** Flag event data: the flags module adds what it knows (environment, version, actor...). */
export interface FlagWebhookData {
  flag_id: string;
  flag_key: string;
  app_id: string;
  [field: string]: unknown;
}

/**
 * The producers of flag and subscription webhook events: typed methods those features call with
 * their transaction's manager, so each event commits or rolls back with its cause. None of them
 * ever throws. Device events arrive as domain events instead (`DeviceEventDeliveries`).
 */
@Injectable()
export class WebhookEvents {
  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly uow: UnitOfWork,
  ) {}

  /** `flag.created`, `flag.updated` or `flag.deleted`, in the open unit of work (the flag change's). */
  announceFlagChange(organizationId: string, kind: 'created' | 'updated' | 'deleted', data: FlagWebhookData) {
    return this.flagChanged(this.uow.manager(), organizationId, kind, data);
  }

  /** Subscription events of one ingested entitlement change, in the open unit of work. */
  announceSubscriptionChange(
    organizationId: string,
    events: readonly SubscriptionEventName[],
    data: SubscriptionWebhookData,
  ): Promise<void> {
    return this.subscriptionChanged(this.uow.manager(), organizationId, events, data);
  }

  /** @deprecated with the manager of a transaction opened by hand: use `announceFlagChange` in a unit of work. */
  async flagChanged(
    manager: EntityManager,
    organizationId: string,
    kind: 'created' | 'updated' | 'deleted',
    data: FlagWebhookData,
  ): Promise<void> {
    await this.outbox.enqueue(manager, organizationId, `flag.${kind}`, data);
  }

  /** @deprecated with the manager of a transaction opened by hand: use `announceSubscriptionChange`. */
  async subscriptionChanged(
    manager: EntityManager,
    organizationId: string,
    events: readonly SubscriptionEventName[],
    data: SubscriptionWebhookData,
  ): Promise<void> {
    if (!events.length) return;
    await this.outbox.guarded(
      manager,
      async () => {
        for (const event of events) await this.outbox.insert(manager, organizationId, event, { ...data });
      },
      undefined,
    );
  }
}
