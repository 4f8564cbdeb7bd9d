import { Inject, Injectable } from '@nestjs/common';
import { badRequest, serviceUnavailable } from '../common/errors/app-exception.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AuditService } from '../audit/audit.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { BillingEventsRepository } from './billing-events.repository.js';
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
    private readonly uow: UnitOfWork,
    private readonly events: BillingEventsRepository,
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
    return this.uow.run(() => this.apply(event, event.type as SubscriptionEventType, change));
  }

  private async apply(
    event: StripeEvent,
    type: SubscriptionEventType,
    change: SubscriptionChange,
  ): Promise<WebhookOutcome> {
    const organization = await this.findOrganization(change);
    const createdAt = new Date(event.created * 1000);
    let outcome: 'applied' | 'stale' | 'unmatched' = 'unmatched';
    if (organization) outcome = (await this.isStale(organization, createdAt, change)) ? 'stale' : 'applied';
    const recorded = await this.events.record({
      eventId: event.id,
      eventType: type,
      organizationId: organization?.id ?? null,
      createdAt,
      outcome,
    });
    if (!recorded) return 'duplicate';
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
    await this.organizations.setSubscription(organization.id, {
      tier: next.tier,
      customerId: change.customerId,
      subscriptionId: next.subscriptionId,
      periodEnd: next.periodEnd,
      anchorDay: next.anchorDay,
    });
    await this.audit.record(null, {
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
    });
    return 'applied';
  }

  /** By the organization id the checkout put in the metadata, else by the Stripe customer; locked. */
  private async findOrganization(change: SubscriptionChange): Promise<OrganizationRecord | null> {
    if (change.organizationId) {
      // Stripe's signature (verifiedStripeEvent) vouches for the metadata our checkout wrote: it
      // names the tenant, as a session or a key does on the API.
      const byId = await this.organizations.find(trustOrganizationId(change.organizationId), { lock: true });
      if (byId) return byId;
    }
    if (!change.customerId) return null;
    return this.organizations.findByProviderCustomer(change.customerId, { lock: true });
  }

  /**
   * Older than an event already applied to this organization, or about a subscription that is
   * not the organization's current one ending (a replaced subscription must not downgrade).
   */
  private async isStale(
    organization: OrganizationRecord,
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
    return this.events.appliedAfter(organization.id, createdAt);
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
