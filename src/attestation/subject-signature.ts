import { createHmac, timingSafeEqual } from 'node:crypto';

/** The longest a signature may be valid for: the tenant's backend signs for a sign-in, not forever. */
export const MAX_SUBJECT_SIGNATURE_LIFETIME_S = 30 * 24 * 60 * 60;

/**
 * What the tenant's backend signs: a version tag, the app's id, the subject and the signature's
 * expiry in epoch seconds, joined by line feeds. The app id binds a signature to one app; the
 * expiry bounds how long an intercepted signature is worth replaying.
 */
export function canonicalSubject(appId: string, subjectId: string, expiresAt: number): string {
  return `attestly-subject-v1\n${appId}\n${subjectId}\n${expiresAt}`;
}

/** HMAC-SHA256 of the canonical string with the app's secret, base64url without padding. */
export function signSubject(secret: string, appId: string, subjectId: string, expiresAt: number): string {
  return createHmac('sha256', secret)
    .update(canonicalSubject(appId, subjectId, expiresAt))
    .digest('base64url');
}

export type SubjectSignatureCheck = 'valid' | 'missing' | 'expired' | 'too_long' | 'invalid';

export interface SubjectSignatureInput {
  secret: string;
  appId: string;
  subjectId: string;
  signature: string | undefined;
  expiresAt: number | undefined;
  /** Epoch seconds. */
  now: number;
}

/** Checks a signed subject; the signature is compared in constant time. */
export function checkSubjectSignature(input: SubjectSignatureInput): SubjectSignatureCheck {
  if (input.signature === undefined || input.expiresAt === undefined) return 'missing';
  if (input.expiresAt <= input.now) return 'expired';
  if (input.expiresAt - input.now > MAX_SUBJECT_SIGNATURE_LIFETIME_S) return 'too_long';
  const expected = Buffer.from(signSubject(input.secret, input.appId, input.subjectId, input.expiresAt));
  const presented = Buffer.from(input.signature);
  return presented.length === expected.length && timingSafeEqual(presented, expected) ? 'valid' : 'invalid';
}
