import { isRawTier, type RawTier } from '../common/tiers.js';

/** The fields of a Stripe subscription object this service reads; everything else is ignored. */
export interface StripeSubscription {
  id?: unknown;
  customer?: unknown;
  status?: unknown;
  current_period_end?: unknown;
  billing_cycle_anchor?: unknown;
  metadata?: unknown;
  items?: { data?: unknown };
}

export const SUBSCRIPTION_EVENTS = [
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
] as const;
export type SubscriptionEventType = (typeof SUBSCRIPTION_EVENTS)[number];

export function isSubscriptionEvent(type: string): type is SubscriptionEventType {
  return (SUBSCRIPTION_EVENTS as readonly string[]).includes(type);
}

/**
 * What a subscription event means for the organization:
 * - `grant`: the subscription is live (active, trialing, past due during the provider's retries):
 *   the plan is the subscription's tier.
 * - `end`: the subscription is over (deleted, canceled, unpaid, expired, paused): back to Free.
 * - `track`: not live yet (incomplete: first payment pending): ids recorded, plan unchanged.
 */
export type SubscriptionEffect = 'grant' | 'end' | 'track';

export interface SubscriptionChange {
  subscriptionId: string;
  customerId: string | null;
  /** `metadata.organization_id` of the subscription, when the checkout set it. */
  organizationId: string | null;
  tier: RawTier | null;
  currentPeriodEnd: Date | null;
  /** The UTC day of month of `billing_cycle_anchor`: the day the subscription renews on. */
  anchorDay: number | null;
  status: string;
  effect: SubscriptionEffect;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Tier names a price may carry besides the raw values: the display and usage names. */
const TIER_ALIASES: Readonly<Record<string, RawTier>> = { pro: 'basic', business: 'professional' };

/** Reads a subscription event; null when the object is not a subscription this service can use. */
export function subscriptionChange(type: SubscriptionEventType, object: unknown): SubscriptionChange | null {
  if (!isRecord(object)) return null;
  const subscription = object as StripeSubscription;
  if (typeof subscription.id !== 'string' || !subscription.id) return null;
  const status = typeof subscription.status === 'string' ? subscription.status : '';
  const metadata = isRecord(subscription.metadata) ? subscription.metadata : {};
  const organizationId =
    typeof metadata.organization_id === 'string' && UUID.test(metadata.organization_id)
      ? metadata.organization_id.toLowerCase()
      : null;
  return {
    subscriptionId: subscription.id,
    customerId: idOf(subscription.customer),
    organizationId,
    tier: tierOf(subscription),
    currentPeriodEnd: periodEndOf(subscription),
    anchorDay: anchorDayOf(subscription),
    status,
    effect: type === 'customer.subscription.deleted' ? 'end' : effectOf(status),
  };
}

function effectOf(status: string): SubscriptionEffect {
  switch (status) {
    case 'active':
    case 'trialing':
    case 'past_due':
      return 'grant';
    case 'canceled':
    case 'unpaid':
    case 'incomplete_expired':
    case 'paused':
      return 'end';
    default:
      return 'track';
  }
}

/** `metadata.tier` of the subscription, else of its price, plan or (expanded) product. */
export function tierOf(subscription: StripeSubscription): RawTier | null {
  const candidates: unknown[] = [isRecord(subscription.metadata) ? subscription.metadata.tier : undefined];
  for (const item of itemsOf(subscription)) {
    const price = isRecord(item.price) ? item.price : {};
    const plan = isRecord(item.plan) ? item.plan : {};
    candidates.push(metadataTier(price), metadataTier(plan), metadataTier(price.product), metadataTier(plan.product));
  }
  for (const candidate of candidates) {
    if (typeof candidate !== 'string') continue;
    const value = candidate.trim().toLowerCase();
    if (isRawTier(value)) return value;
    if (TIER_ALIASES[value]) return TIER_ALIASES[value];
  }
  return null;
}

/** `current_period_end` sits on the subscription in older API versions and on its items in newer ones. */
function periodEndOf(subscription: StripeSubscription): Date | null {
  const ends = [
    subscription.current_period_end,
    ...itemsOf(subscription).map((item) => item.current_period_end),
  ].filter((value): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0);
  return ends.length ? new Date(Math.max(...ends) * 1000) : null;
}

function anchorDayOf(subscription: StripeSubscription): number | null {
  const anchor = subscription.billing_cycle_anchor;
  if (typeof anchor !== 'number' || !Number.isFinite(anchor) || anchor <= 0) return null;
  return new Date(anchor * 1000).getUTCDate();
}

function itemsOf(subscription: StripeSubscription): Record<string, unknown>[] {
  const data = subscription.items?.data;
  return Array.isArray(data) ? data.filter(isRecord) : [];
}

function metadataTier(holder: unknown): unknown {
  return isRecord(holder) && isRecord(holder.metadata) ? holder.metadata.tier : undefined;
}

function idOf(value: unknown): string | null {
  if (typeof value === 'string' && value) return value;
  if (isRecord(value) && typeof value.id === 'string' && value.id) return value.id;
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
