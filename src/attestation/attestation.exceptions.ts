import { AppException } from '../common/errors/app-exception.js';
import type { AppAttestErrorCode } from './app-attest/app-attest-errors.js';
import type { AdmissionRefusal } from './admission.js';

/*
 * The refusals of the attestation endpoints and of the debug-token routes. Every code here is in
 * the failure-code catalog (failure-codes.ts); test/unit/failure-codes-doc.spec.ts reads this file
 * for `new AppException(<status>, '<code>'`, so keep that form.
 */

/** Malformed input rather than a failed check: 400 instead of 401. */
const MALFORMED: ReadonlySet<AppAttestErrorCode> = new Set(['invalid_cbor', 'invalid_format', 'invalid_assertion']);

/** An App Attest verification step failed. */
export function attestationFailure(code: AppAttestErrorCode, message: string): AppException {
  return new AppException(MALFORMED.has(code) ? 400 : 401, code, message, {
    hint: `Verification failed at the ${code.replace(/_/g, ' ')} step`,
  });
}

export const receiptMissing = () =>
  new AppException(403, 'receipt_missing', 'This app requires an App Store receipt in the attestation');

export const unknownKey = () =>
  new AppException(401, 'reattest_required', 'This key is unknown or revoked: attest the device again', {
    hint: 'Generate a new App Attest key and call POST /api/v1/attestation/validate',
  });

export const keyTooOld = (maxDays: number) =>
  new AppException(401, 'reattest_required', `This key is older than the app's limit of ${maxDays} days`, {
    hint: 'Generate a new App Attest key and attest again',
  });

export const deviceBlocked = () => new AppException(403, 'device_blocked', 'This device is blocked by the app owner');

export const jailbreakDetected = () =>
  new AppException(403, 'jailbreak_detected', 'This app does not accept jailbroken devices');

export const riskThresholdExceeded = (score: number, reasons: readonly string[]) =>
  new AppException(403, 'risk_threshold_exceeded', `The device's risk score ${score} is above the app's limit`, {
    hint: `Signals: ${reasons.join(', ')}`,
  });

export const insufficientAttestationHistory = (minAttestationCount: number) =>
  new AppException(403, 'insufficient_attestation_history', 'This device has not attested often enough yet', {
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
  new AppException(401, 'subject_signature_invalid', message, {
    hint: 'Sign the subject on your backend: HMAC-SHA256 of "attestly-subject-v1\\n<appId>\\n<subjectId>\\n<expiresAt>" with the app\'s subject signing secret, base64url',
  });

export const challengeExpired = () =>
  new AppException(400, 'challenge_expired', 'The challenge is older than 5 minutes', {
    hint: 'Request a new challenge with GET /api/v1/attestation/challenge',
  });

export const challengeInvalid = () =>
  new AppException(400, 'challenge_invalid', 'The challenge is unknown, already used, or for another app', {
    hint: 'Request a new challenge with GET /api/v1/attestation/challenge',
  });

export const debugTokenLimitReached = (max: number) =>
  new AppException(403, 'debug_token_limit_reached', `An app holds at most ${max} live debug tokens`, {
    hint: 'Revoke a debug token the team no longer uses',
  });

export const debugTokenInvalid = () =>
  new AppException(401, 'debug_token_invalid', 'The debug token is unknown or belongs to another app', {
    hint: "Create a debug token for this app in the dashboard (app settings) and pass it to the SDK's debug provider",
  });

export const debugTokensDisabled = () =>
  new AppException(403, 'debug_tokens_disabled', 'Debug tokens are turned off for this app', {
    hint: 'An Admin turns them on with PUT /api/v1/apps/:appID {"debugTokensEnabled": true}',
  });

export const debugTokenRevoked = () =>
  new AppException(401, 'debug_token_revoked', 'The debug token was revoked', {
    hint: 'Create a new debug token in the dashboard',
  });

export const debugTokenExpired = () =>
  new AppException(401, 'debug_token_expired', 'The debug token has expired', {
    hint: 'Create a new debug token in the dashboard',
  });
