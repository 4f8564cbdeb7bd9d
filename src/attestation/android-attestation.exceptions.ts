import { AppException } from '../common/errors/app-exception.js';
import type { PlayIntegrityErrorCode } from './play-integrity/play-integrity.js';

/*
 * The refusals of Android validation (Play Integrity). Every code is in the failure-code catalog
 * (failure-codes.ts); test/unit/failure-codes-doc.spec.ts reads this file for
 * `new AppException(<status>, '<code>'`, so keep that form.
 */

/** The status each Play Integrity step answers with: malformed input 400, a failed check 401, the app's policy 403. */
const STATUS: Readonly<Record<PlayIntegrityErrorCode, 400 | 401 | 403>> = {
  integrity_token_malformed: 400,
  integrity_payload_invalid: 400,
  integrity_decrypt_failed: 401,
  integrity_signature_invalid: 401,
  package_mismatch: 401,
  request_hash_mismatch: 401,
  verdict_stale: 401,
  certificate_mismatch: 401,
  app_unrecognized: 403,
  app_unlicensed: 403,
  device_integrity_failed: 403,
};

export function integrityStatus(code: PlayIntegrityErrorCode): number {
  return STATUS[code];
}

/** A Play Integrity verification step failed. */
export function integrityFailure(code: PlayIntegrityErrorCode, message: string): AppException {
  return new AppException(STATUS[code], code, message, {
    hint: `Verification failed at the ${code.replace(/_/g, ' ')} step`,
  });
}

export const androidNotConfigured = () =>
  new AppException(400, 'android_not_configured', 'This app has no Android identity', {
    hint: 'An Admin sets it with PUT /api/v1/apps/{appID}/android; Android SDK calls send X-Package-Name',
  });
