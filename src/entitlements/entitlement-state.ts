import type { SubscriptionEventName, SubscriptionWebhookData } from '../webhooks/webhook-event-catalog.js';

/**
 * A subject's entitlement as the normalized events describe it, and what changes of it announce.
 * Pure: no I/O.
 */

export const ENTITLEMENT_STATUSES = [
  'active',
  'trialing',
  'grace_period',
  'billing_retry',
  'paused',
  'expired',
  'revoked',
  'refunded',
] as const;
export type EntitlementStatus = (typeof ENTITLEMENT_STATUSES)[number];

export const ENTITLEMENT_INTERVALS = ['day', 'week', 'month', 'year', 'lifetime'] as const;
export const ENTITLEMENT_ENVIRONMENTS = ['production', 'sandbox'] as const;

/** Statuses that end access and fire `subscription.expired`. */
const ENDED: ReadonlySet<string> = new Set(['expired', 'revoked']);

export interface EntitlementState {
  subjectId: string;
  tier: string;
  status: EntitlementStatus;
  /** '' when the source names no billing interval. */
  interval: string;
  source: string;
  productId: string;
  expiresAt: Date | null;
  sourceSubscriptionId: string;
  environment: string;
  autoRenew: boolean;
}

/** The fields whose change is material (the interface document's list). */
export function materiallyDiffers(previous: EntitlementState, next: EntitlementState): boolean {
  return (
    previous.tier !== next.tier ||
    previous.status !== next.status ||
    previous.interval !== next.interval ||
    previous.productId !== next.productId ||
    previous.autoRenew !== next.autoRenew ||
    (previous.expiresAt?.getTime() ?? null) !== (next.expiresAt?.getTime() ?? null)
  );
}

/**
 * The events one new state fires: `subscription.changed` on a material change (the first state
 * of a subject is one), plus `subscription.expired` when the status becomes expired or revoked,
 * and `subscription.refunded` when it becomes refunded.
 */
export function subscriptionEventsFor(
  previous: EntitlementState | null,
  next: EntitlementState,
): SubscriptionEventName[] {
  const events: SubscriptionEventName[] = [];
  if (!previous || materiallyDiffers(previous, next)) events.push('subscription.changed');
  if (previous?.status !== next.status) {
    if (ENDED.has(next.status)) events.push('subscription.expired');
    if (next.status === 'refunded') events.push('subscription.refunded');
  }
  return events;
}

/** The documented webhook `data`: ISO `expires_at` or '', `auto_renew` as a string. */
export function toSubscriptionWebhookData(state: EntitlementState, eventId: string): SubscriptionWebhookData {
  return {
    subject_id: state.subjectId,
    tier: state.tier,
    status: state.status,
    interval: state.interval,
    source: state.source,
    product_id: state.productId,
    expires_at: state.expiresAt ? state.expiresAt.toISOString() : '',
    source_subscription_id: state.sourceSubscriptionId,
    environment: state.environment,
    auto_renew: String(state.autoRenew),
    event_id: eventId,
  };
}

/** The reserved `subscription` claim: `expires_at` in epoch seconds (null without expiry). */
export function toSubscriptionClaim(state: EntitlementState | null): Record<string, unknown> {
  if (!state) return { status: 'none' };
  return {
    subject_id: state.subjectId,
    status: state.status,
    tier: state.tier,
    interval: state.interval,
    product_id: state.productId,
    source: state.source,
    environment: state.environment,
    expires_at: state.expiresAt ? Math.floor(state.expiresAt.getTime() / 1000) : null,
    auto_renew: state.autoRenew,
  };
}

/** A `subject_entitlements` row. */
export interface EntitlementRow {
  subject_id: string;
  tier: string;
  status: EntitlementStatus;
  interval: string;
  source: string;
  product_id: string;
  expires_at: Date | null;
  source_subscription_id: string;
  environment: string;
  auto_renew: boolean;
  updated_at: Date;
}

export function entitlementFromRow(row: EntitlementRow): EntitlementState {
  return {
    subjectId: row.subject_id,
    tier: row.tier,
    status: row.status,
    interval: row.interval,
    source: row.source,
    productId: row.product_id,
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    sourceSubscriptionId: row.source_subscription_id,
    environment: row.environment,
    autoRenew: row.auto_renew,
  };
}
