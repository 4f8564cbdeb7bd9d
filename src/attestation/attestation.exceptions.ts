import { AppException } from '../common/errors/app-exception.js';
import type { AppAttestErrorCode } from './app-attest/app-attest-errors.js';
import type { AdmissionRefusal } from './admission.js';
import { attestationRefusal } from './failure-codes.js';

/*
 * The refusals of the attestation endpoints and of the debug-token routes, built from the
 * failure-code catalog (failure-codes.ts): its status, and its message and hint where one serves
 * every refusal of the code.
 */

/** An App Attest verification step failed (malformed input is 400, a failed check 401: the catalog's). */
export function attestationFailure(code: AppAttestErrorCode, message: string): AppException {
  return attestationRefusal(code, { message, hint: `Verification failed at the ${code.replace(/_/g, ' ')} step` });
}

export const receiptMissing = () => attestationRefusal('receipt_missing');

/** App Attest asked of an Android-only app (named by X-Package-Name): there is no App ID to check against. */
export const iosNotConfigured = () => attestationRefusal('ios_not_configured');

export const unknownKey = () =>
  attestationRefusal('reattest_required', {
    message: 'This key is unknown or revoked: attest the device again',
    hint: 'Generate a new App Attest key and call POST /api/v1/attestation/validate',
  });

export const keyTooOld = (maxDays: number) =>
  attestationRefusal('reattest_required', {
    message: `This key is older than the app's limit of ${maxDays} days`,
    hint: 'Generate a new App Attest key and attest again',
  });

export const deviceBlocked = () => attestationRefusal('device_blocked');

export const jailbreakDetected = () => attestationRefusal('jailbreak_detected');

export const riskThresholdExceeded = (score: number, reasons: readonly string[]) =>
  attestationRefusal('risk_threshold_exceeded', {
    message: `The device's risk score ${score} is above the app's limit`,
    hint: `Signals: ${reasons.join(', ')}`,
  });

export const insufficientAttestationHistory = (minAttestationCount: number) =>
  attestationRefusal('insufficient_attestation_history', {
    hint: `The app requires ${minAttestationCount} successful attestations`,
  });

/** What the admission rule's refusal answers; a refresh of a blocked key is told to attest again. */
export function admissionRefused(kind: 'attestation' | 'assertion', refusal: AdmissionRefusal): AppException {
  switch (refusal.reason) {
    case 'too_old':
      return keyTooOld(refusal.maxDays);
    case 'blocked':
      return kind === 'assertion' ? unknownKey() : deviceBlocked();
    case 'jailbreak':
      return jailbreakDetected();
    case 'risk':
      return riskThresholdExceeded(refusal.risk.score, refusal.risk.reasons);
    case 'history':
      return insufficientAttestationHistory(refusal.minAttestationCount);
  }
}

export const subjectSignatureInvalid = (message: string) =>
  attestationRefusal('subject_signature_invalid', {
    message,
    hint: 'Sign the subject on your backend: HMAC-SHA256 of "attestly-subject-v1\\n<appId>\\n<subjectId>\\n<expiresAt>" with the app\'s subject signing secret, base64url',
  });

export const challengeExpired = () => attestationRefusal('challenge_expired');

export const challengeInvalid = () => attestationRefusal('challenge_invalid');

/** A dashboard refusal (creating a debug token), not an attestation endpoint's: outside the catalog. */
export const debugTokenLimitReached = (max: number) =>
  new AppException(403, 'debug_token_limit_reached', `An app holds at most ${max} live debug tokens`, {
    hint: 'Revoke a debug token the team no longer uses',
  });

export const debugTokenInvalid = () => attestationRefusal('debug_token_invalid');

export const debugTokensDisabled = () => attestationRefusal('debug_tokens_disabled');

export const debugTokenRevoked = () => attestationRefusal('debug_token_revoked');

export const debugTokenExpired = () => attestationRefusal('debug_token_expired');
