import { createHmac } from 'node:crypto';
import { canonicalJson } from '../common/rules/canonical-json.js';

/**
 * The wire format of a webhook: the body is `{ event, timestamp, data }` as canonical JSON (every
 * object's keys sorted, recursively: src/common/rules/canonical-json.ts), and `X-Service-Signature`
 * is `sha256=` followed by the hex HMAC-SHA256 of exactly those bytes, keyed with the endpoint's
 * secret. Pure: no I/O.
 */

export const SIGNATURE_PREFIX = 'sha256=';

/** The exact body bytes of a delivery (as a string; they are sent UTF-8 encoded). */
export function webhookBody(event: string, timestamp: Date, data: Record<string, unknown>): string {
  return canonicalJson({ event, timestamp: timestamp.toISOString(), data });
}

export function signWebhookBody(secret: string, body: string | Buffer): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}

/** Every header of a delivery; only the body is signed, as documented. */
export function webhookHeaders(options: {
  secret: string;
  body: string;
  event: string;
  deliveryId: string;
  sentAt: Date;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'Attestly-Webhooks/1',
    'X-Service-Event': options.event,
    'X-Service-Delivery': options.deliveryId,
    'X-Service-Timestamp': String(Math.floor(options.sentAt.getTime() / 1000)),
    'X-Service-Signature': signWebhookBody(options.secret, options.body),
  };
}
