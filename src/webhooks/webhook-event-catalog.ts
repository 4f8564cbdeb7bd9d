import { RAW_TIERS, tierDefinition, tierOf } from '../common/tiers.js';

/** The events an endpoint may subscribe to: the interface document's Events table, no other. */
export const WEBHOOK_EVENTS = [
  'device.new',
  'device.attested.first',
  'device.high_risk',
  'device.attestation_failed',
  'attestation.anomaly',
  'flag.created',
  'flag.updated',
  'flag.deleted',
  'subscription.changed',
  'subscription.expired',
  'subscription.refunded',
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

export type SubscriptionEventName = Extract<WebhookEventName, `subscription.${string}`>;

/** The documented `data` of subscription events: strings throughout, as receivers expect. */
export interface SubscriptionWebhookData {
  subject_id: string;
  tier: string;
  status: string;
  interval: string;
  source: string;
  product_id: string;
  /** ISO 8601, or '' when the source reports no expiry. */
  expires_at: string;
  source_subscription_id: string;
  environment: string;
  /** 'true' or 'false'. */
  auto_renew: string;
  event_id: string;
}

/** Delivered only by the test operation; it cannot be subscribed to. */
export const TEST_EVENT = 'attestation.completed';

/**
 * The raw tiers (legacy values included) whose organizations receive `event`: every plan with
 * the `webhooks` feature, and Enterprise alone for `subscription.changed`.
 */
export function tiersReceiving(event: WebhookEventName): string[] {
  return RAW_TIERS.filter(
    (raw) =>
      tierDefinition(raw).features.webhooks && (event !== 'subscription.changed' || tierOf(raw) === 'enterprise'),
  );
}

/** Whether an organization on the raw tier `rawTier` ever receives `event`. */
export function deliveredOnTier(event: WebhookEventName, rawTier: string): boolean {
  return tiersReceiving(event).includes(rawTier);
}
