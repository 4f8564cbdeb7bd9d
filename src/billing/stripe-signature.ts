import Stripe from 'stripe';

/** Stripe's default: a signed event older (or further in the future) than this is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type VerifiedEvent = { valid: true; event: unknown } | { valid: false; reason: string };

/**
 * Verifies a `Stripe-Signature` header with Stripe's SDK (`webhooks.constructEvent`: some v1 must
 * be the HMAC-SHA256 of `<t>.<raw body>` under the endpoint secret, compared in constant time, and
 * t no older than the tolerance) and answers the parsed event. The SDK admits timestamps from the
 * future; a captured request must not become replayable later, so those are refused here too.
 */
export function verifiedStripeEvent(
  payload: Buffer,
  header: string | undefined,
  secret: string,
  nowSeconds: number,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
): VerifiedEvent {
  if (!header) return { valid: false, reason: 'the Stripe-Signature header is missing' };
  const timestamp = /(?:^|,)\s*t=(\d{1,12})\s*(?:,|$)/.exec(header)?.[1];
  if (!timestamp) return { valid: false, reason: 'the header has no timestamp' };
  if (Number(timestamp) - nowSeconds > toleranceSeconds) {
    return { valid: false, reason: 'the timestamp is outside the tolerance' };
  }
  try {
    const event = Stripe.webhooks.constructEvent(
      payload,
      header,
      secret,
      toleranceSeconds,
      undefined,
      nowSeconds * 1000,
    );
    return { valid: true, event };
  } catch (error) {
    if (!(error instanceof Stripe.errors.StripeSignatureVerificationError)) {
      return { valid: false, reason: 'the body is not a signed JSON event' };
    }
    return { valid: false, reason: signatureReason(error.message) };
  }
}

/** Stripe's messages are long and link to its docs; the caller gets the gist. */
function signatureReason(message: string): string {
  if (/tolerance/i.test(message)) return 'the timestamp is outside the tolerance';
  if (/No signatures found with expected scheme/i.test(message)) return 'the header has no v1 signature';
  if (/Unable to extract timestamp/i.test(message)) return 'the header has no timestamp';
  return 'no signature matches the payload';
}
