import { createHmac } from 'node:crypto';
import { safeEqual } from '../common/crypto.js';

/** Stripe's default: a signed event older (or further in the future) than this is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureCheck = { valid: true } | { valid: false; reason: string };

/**
 * Verifies a `Stripe-Signature` header (`t=<unix seconds>,v1=<hex>[,v1=<hex>…]`): some v1 must be
 * the HMAC-SHA256, keyed with the endpoint secret, of `<t>.<raw body>`, and t must be within the
 * tolerance of now, so a captured request cannot be replayed later.
 */
export function verifyStripeSignature(
  payload: Buffer,
  header: string | undefined,
  secret: string,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): SignatureCheck {
  if (!header) return { valid: false, reason: 'the Stripe-Signature header is missing' };
  const parts = header.split(',').map((part) => {
    const at = part.indexOf('=');
    return at < 0 ? [part.trim(), ''] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });
  const timestamp = parts.find(([key]) => key === 't')?.[1];
  const signatures = parts.filter(([key]) => key === 'v1').map(([, value]) => value);
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return { valid: false, reason: 'the header has no timestamp' };
  if (!signatures.length) return { valid: false, reason: 'the header has no v1 signature' };
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) {
    return { valid: false, reason: 'the timestamp is outside the tolerance' };
  }
  const expected = stripeSignatureOf(payload, timestamp, secret);
  const matches = signatures.some((signature) => safeEqual(signature, expected));
  return matches ? { valid: true } : { valid: false, reason: 'no signature matches the payload' };
}

export function stripeSignatureOf(payload: Buffer, timestamp: string, secret: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest('hex');
}
