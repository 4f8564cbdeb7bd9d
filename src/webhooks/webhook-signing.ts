import { createHmac } from 'node:crypto';

/**
 * The wire format of a webhook: the body is `{ event, timestamp, data }` as JSON with every
 * object's keys sorted (recursively), and `X-Service-Signature` is `sha256=` followed by the hex
 * HMAC-SHA256 of exactly those bytes, keyed with the endpoint's secret. Pure: no I/O.
 */

export const SIGNATURE_PREFIX = 'sha256=';

/** JSON with the keys of every object in code-unit order; arrays keep their order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const source = value as Record<string, unknown>;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(source).sort()) {
      if (source[key] !== undefined) sorted[key] = sortKeys(source[key]);
    }
    return sorted;
  }
  return value;
}

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
