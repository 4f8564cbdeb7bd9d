import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * SHA-256 as hex, through the one-shot `crypto.hash`: on every API-key request (the key's hash is
 * how it is found), a `createHash` object cost several times the digest itself.
 */
export function sha256Hex(value: string | Buffer): string {
  return hash('sha256', value, 'hex');
}

/** A URL-safe random secret with `bytes` of entropy. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Compares secrets in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
