import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { badRequest, serviceUnavailable } from '../common/errors/app-exception.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AuditService } from '../audit/audit.service.js';
import type { Organization } from '../organizations/organization.entity.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { verifiedStripeEvent } from './stripe-signature.js';
import {
  isSubscriptionEvent,
  subscriptionChange,
  type SubscriptionChange,
  type SubscriptionEventType,
} from './stripe-subscription.js';

interface StripeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: unknown };
}

export type WebhookOutcome = 'applied' | 'stale' | 'unmatched' | 'duplicate' | 'ignored';

/**
 * Applies Stripe's subscription events to the organization's plan. Each event id is applied at
 * most once (`billing_events`), and an event older than one already applied to the organization
 * is recorded but not applied, since Stripe does not deliver in order.
 */
@Injectable()
export class StripeWebhookService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly organizations: OrganizationsService,
  ) {}

  async receive(rawBody: Buffer | undefined, signature: string | undefined): Promise<WebhookOutcome> {
    const secret = this.config.stripeWebhookSecret;
    if (!secret) throw serviceUnavailable('Billing webhooks are not configured on this server');
    if (!rawBody?.length) throw badRequest('The webhook body must be a JSON Stripe event');
    const check = verifiedStripeEvent(rawBody, signature, secret, Math.floor(Date.now() / 1000));
    if (!check.valid) throw badRequest(`Invalid Stripe-Signature: ${check.reason}`);
    const event = eventOf(check.event);
    if (!isSubscriptionEvent(event.type)) return 'ignored';
    const change = subscriptionChange(event.type, event.data.object);
    if (!change) throw badRequest('data.object is not a subscription');
    return this.dataSource.transaction((manager) =>
      this.apply(manager, event, event.type as SubscriptionEventType, change),
    );
  }

  private async apply(
    manager: EntityManager,
    event: StripeEvent,
    type: SubscriptionEventType,
    change: SubscriptionChange,
  ): Promise<WebhookOutcome> {
    const organization = await this.findOrganization(manager, change);
    const createdAt = new Date(event.created * 1000);
    let outcome: 'applied' | 'stale' | 'unmatched' = 'unmatched';
    if (organization) outcome = (await this.isStale(manager, organization, createdAt, change)) ? 'stale' : 'applied';
    const recorded: unknown[] = await manager.query(
      `INSERT INTO billing_events (event_id, event_type, organization_id, event_created_at, outcome)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
      [event.id, type, organization?.id ?? null, createdAt, outcome],
    );
    if (!recorded.length) return 'duplicate';
    if (!organization || outcome !== 'applied') return outcome;

    const next =
      change.effect === 'end'
        ? { tier: 'free', subscriptionId: null, periodEnd: null, anchorDay: null }
        : {
            tier: change.effect === 'grant' ? (change.tier ?? organization.serviceTier) : organization.serviceTier,
            subscriptionId: change.subscriptionId,
            periodEnd: change.currentPeriodEnd,
            anchorDay: change.anchorDay,
          };
    await this.organizations.setSubscription(
      organization.id,
      {
        tier: next.tier,
        customerId: change.customerId,
        subscriptionId: next.subscriptionId,
        periodEnd: next.periodEnd,
        anchorDay: next.anchorDay,
      },
      manager,
    );
    await this.audit.record(
      null,
      {
        organizationId: organization.id,
        action: 'billing.subscription_updated',
        resourceType: 'subscription',
        resourceId: change.subscriptionId,
        metadata: {
          eventId: event.id,
          eventType: type,
          status: change.status,
          tier: { from: organization.serviceTier, to: next.tier },
        },
      },
      manager,
    );
    return 'applied';
  }

  /** By the organization id the checkout put in the metadata, else by the Stripe customer; locked. */
  private async findOrganization(manager: EntityManager, change: SubscriptionChange): Promise<Organization | null> {
    if (change.organizationId) {
      const byId = await this.organizations.find(change.organizationId, { manager, lock: true });
      if (byId) return byId;
    }
    if (!change.customerId) return null;
    return this.organizations.findByProviderCustomer(change.customerId, { manager, lock: true });
  }

  /**
   * Older than an event already applied to this organization, or about a subscription that is
   * not the organization's current one ending (a replaced subscription must not downgrade).
   */
  private async isStale(
    manager: EntityManager,
    organization: Organization,
    createdAt: Date,
    change: SubscriptionChange,
  ): Promise<boolean> {
    if (
      change.effect === 'end' &&
      organization.providerSubscriptionId !== null &&
      organization.providerSubscriptionId !== change.subscriptionId
    ) {
      return true;
    }
    const newer: unknown[] = await manager.query(
      `SELECT 1 FROM billing_events WHERE organization_id = $1 AND outcome = 'applied' AND event_created_at > $2 LIMIT 1`,
      [organization.id, createdAt],
    );
    return newer.length > 0;
  }
}

/** Stripe signs what it sends, but the shape is checked all the same before anything is applied. */
function eventOf(parsed: unknown): StripeEvent {
  const event = parsed as Partial<StripeEvent> | null;
  if (
    !event ||
    typeof event.id !== 'string' ||
    !event.id ||
    typeof event.type !== 'string' ||
    typeof event.created !== 'number' ||
    typeof event.data !== 'object' ||
    event.data === null
  ) {
    throw badRequest('The webhook body is not a Stripe event', { hint: 'Expected id, type, created and data.object' });
  }
  return event as StripeEvent;
}
