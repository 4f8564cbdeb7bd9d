import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The service's own challenges carry their expiry, sealed for their app (decision 0063), so an
 * expired one is recognised as such however long after, with no row kept for it. 32 bytes,
 * base64 as before:
 *
 * | bytes | content |
 * |---|---|
 * | 0-3 | expiry, Unix seconds, unsigned big-endian |
 * | 4-15 | random |
 * | 16-31 | the first 16 bytes of HMAC-SHA256(key, `attestly-challenge-v1`, app id, bytes 0-15) |
 *
 * The stamp only tells `challenge_expired` from `challenge_invalid`; whether a challenge is still
 * usable is decided by its stored row (single use). Pure: no I/O.
 */
export const CHALLENGE_BYTES = 32;
const STAMPED = 16;
const CONTEXT = 'attestly-challenge-v1';

function seal(key: Buffer, appId: string, stamped: Buffer): Buffer {
  return createHmac('sha256', key)
    .update(`${CONTEXT}\n${appId}\n`)
    .update(stamped)
    .digest()
    .subarray(0, CHALLENGE_BYTES - STAMPED);
}

/** A new challenge for the app expiring at `expiresAtS` (Unix seconds), base64. */
export function stampChallenge(key: Buffer, appId: string, expiresAtS: number, random = randomBytes(12)): string {
  const stamped = Buffer.alloc(STAMPED);
  stamped.writeUInt32BE(expiresAtS, 0);
  random.copy(stamped, 4, 0, STAMPED - 4);
  return Buffer.concat([stamped, seal(key, appId, stamped)]).toString('base64');
}

/**
 * The expiry (Unix seconds) the service sealed into a challenge it issued for this app; null for
 * anything else (another app's challenge, another key, garbage, a challenge from before stamps).
 * The seal is compared in constant time.
 */
export function stampedExpiry(key: Buffer, appId: string, challenge: string): number | null {
  const bytes = Buffer.from(challenge, 'base64');
  if (bytes.length !== CHALLENGE_BYTES || bytes.toString('base64') !== challenge) return null;
  const stamped = bytes.subarray(0, STAMPED);
  const presented = bytes.subarray(STAMPED);
  return timingSafeEqual(presented, seal(key, appId, stamped)) ? stamped.readUInt32BE(0) : null;
}
