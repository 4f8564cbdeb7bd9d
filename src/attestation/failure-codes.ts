import { AppException, type AppExceptionOptions } from '../common/errors/app-exception.js';
import type { AppAttestErrorCode } from './app-attest/app-attest-errors.js';
import type { PlayIntegrityErrorCode } from './play-integrity/play-integrity.js';

export interface FailureCodeEntry {
  /** The HTTP status the attestation endpoints answer with it. */
  readonly status: number;
  /** Recorded as a failed device event: counted in app usage, device details and /metrics. */
  readonly counted: boolean;
  /** What a developer should do about it (the README's table says the same). */
  readonly advice: string;
  /** The answer's message, where one message serves every refusal with the code. */
  readonly message?: string;
  /** The answer's hint, where one hint serves every refusal with the code. */
  readonly hint?: string;
}

type OtherFailureCode =
  | 'receipt_missing'
  | 'device_blocked'
  | 'jailbreak_detected'
  | 'risk_threshold_exceeded'
  | 'insufficient_attestation_history'
  | 'quota_exceeded'
  | 'reattest_required'
  | 'challenge_invalid'
  | 'challenge_expired'
  | 'subject_signature_invalid'
  | 'debug_token_invalid'
  | 'debug_token_revoked'
  | 'debug_token_expired'
  | 'debug_tokens_disabled'
  | 'android_not_configured'
  | 'ios_not_configured';

export type AttestationFailureCode = AppAttestErrorCode | PlayIntegrityErrorCode | OtherFailureCode;

/**
 * Every domain `code` the attestation endpoints (challenge, validate, refresh, debug) answer
 * with: the one table their refusals are built from (`attestationRefusal`), so a refusal's status
 * and code cannot differ from what is documented. The README lists the same codes with the same
 * advice; a test compares them.
 */
export const ATTESTATION_FAILURE_CODES: Readonly<Record<AttestationFailureCode, FailureCodeEntry>> = {
  invalid_cbor: {
    status: 400,
    counted: true,
    advice: 'Send the attestation object exactly as `attestKey` returned it, base64-encoded; it was not CBOR.',
  },
  invalid_format: {
    status: 400,
    counted: true,
    advice: 'The object is not an `apple-appattest` attestation; send the bytes from `DCAppAttestService.attestKey`.',
  },
  certificate_chain_invalid: {
    status: 401,
    counted: true,
    advice:
      "The certificates do not chain to Apple's App Attest root (or have expired): a real device never does this; suspect a forged attestation, or a server trusting the wrong root (`APP_ATTEST_ROOT_CA`).",
  },
  nonce_mismatch: {
    status: 401,
    counted: true,
    advice:
      'Hash the challenge string exactly as the service returned it: `SHA256(Data(challenge.utf8))`, with the same challenge in the request.',
  },
  key_id_mismatch: {
    status: 401,
    counted: true,
    advice: 'Send the `keyId` that `generateKey()` returned for the key you attested, unchanged (standard base64).',
  },
  rp_id_mismatch: {
    status: 401,
    counted: true,
    advice:
      "The attestation is for another app: check that `X-Bundle-ID` and `X-Team-ID` match the app's entitlements and the app registered in the dashboard.",
  },
  counter_not_zero: {
    status: 401,
    counted: true,
    advice: 'Attest a freshly generated key: an attestation must carry counter 0. Generate a new key and attest it.',
  },
  aaguid_invalid: {
    status: 401,
    counted: true,
    advice:
      'The attestation is from neither the production nor the development App Attest environment; check the `com.apple.developer.devicecheck.appattest-environment` entitlement.',
  },
  credential_id_mismatch: {
    status: 401,
    counted: true,
    advice: 'The credential in the attestation is not the attested key: suspect a tampered attestation.',
  },
  invalid_assertion: {
    status: 400,
    counted: true,
    advice:
      'Send the assertion exactly as `generateAssertion` returned it, base64-encoded (CBOR with `signature` and `authenticatorData`).',
  },
  signature_invalid: {
    status: 401,
    counted: true,
    advice:
      'Sign `SHA256(challenge.utf8)` (or the `clientData` you send) with the same key id you send; if it persists, the key was reset: attest a new key.',
  },
  counter_not_increasing: {
    status: 401,
    counted: true,
    advice:
      'Each assertion must carry a higher counter than the last: do not replay or reorder assertions; concurrent refreshes of one key lose all but one.',
  },
  receipt_missing: {
    status: 403,
    counted: true,
    advice:
      'The app requires an App Store receipt (`requireAppStoreReceipt`): turn it off for TestFlight or development builds.',
    message: 'This app requires an App Store receipt in the attestation',
  },
  device_blocked: {
    status: 403,
    counted: true,
    advice: 'An Admin blocked this device; unblock it in the dashboard if that was a mistake.',
    message: 'This device is blocked by the app owner',
  },
  jailbreak_detected: {
    status: 403,
    counted: true,
    advice: 'The app refuses jailbroken devices (`blockOnJailbreak`); nothing to fix in the app.',
    message: 'This app does not accept jailbroken devices',
  },
  risk_threshold_exceeded: {
    status: 403,
    counted: true,
    advice:
      "The device's risk score is above `maxAllowedRiskScore`; the `hint` names the signals. Raise the threshold or investigate the device (docs/risk.md).",
  },
  insufficient_attestation_history: {
    status: 403,
    counted: true,
    advice: 'The app requires more successful attestations first (`minAttestationCount`); lower it for new installs.',
    message: 'This device has not attested often enough yet',
  },
  quota_exceeded: {
    status: 402,
    counted: true,
    advice:
      "The plan's monthly active devices are used up after the grace period: new devices wait for an upgrade or the next period; known devices keep working.",
  },
  reattest_required: {
    status: 401,
    counted: true,
    advice:
      'The key is unknown, blocked or older than `maxDeviceAge`: generate a new App Attest key and call validate.',
  },
  challenge_invalid: {
    status: 400,
    counted: false,
    advice:
      'Use each challenge once, for the app that requested it: fetch a new one from GET /api/v1/attestation/challenge before every validate or refresh.',
    message: 'The challenge is unknown, already used, or for another app',
    hint: 'Request a new challenge with GET /api/v1/attestation/challenge',
  },
  challenge_expired: {
    status: 400,
    counted: false,
    advice:
      'A challenge lives 5 minutes: fetch it right before attesting, and check the device clock is not the cause.',
    message: 'The challenge is older than 5 minutes',
    hint: 'Request a new challenge with GET /api/v1/attestation/challenge',
  },
  subject_signature_invalid: {
    status: 401,
    counted: false,
    advice:
      'The app requires a signed `subjectId` (`requireSignedSubject`): have your backend sign it with the subject signing secret and send `subjectSignature` and `subjectExpiresAt` (README, subject binding).',
  },
  debug_token_invalid: {
    status: 401,
    counted: false,
    advice:
      "The debug token is unknown or for another app: create one for this app and pass it to the SDK's debug provider.",
    message: 'The debug token is unknown or belongs to another app',
    hint: "Create a debug token for this app in the dashboard (app settings) and pass it to the SDK's debug provider",
  },
  debug_token_revoked: {
    status: 401,
    counted: false,
    advice: 'The debug token was revoked: create a new one in the dashboard.',
    message: 'The debug token was revoked',
    hint: 'Create a new debug token in the dashboard',
  },
  debug_token_expired: {
    status: 401,
    counted: false,
    advice: 'The debug token expired: create a new one, with a later `expiresAt` or none.',
    message: 'The debug token has expired',
    hint: 'Create a new debug token in the dashboard',
  },
  debug_tokens_disabled: {
    status: 403,
    counted: false,
    advice: 'The app has `debugTokensEnabled` off, as it should once shipped; turn it on only for development.',
    message: 'Debug tokens are turned off for this app',
    hint: 'An Admin turns them on with PUT /api/v1/apps/:appID {"debugTokensEnabled": true}',
  },
  integrity_token_malformed: {
    status: 400,
    counted: true,
    advice:
      'Send the integrity token exactly as `StandardIntegrityToken.token()` (or the classic API) returned it: a compact JWE of at most 16 KB.',
  },
  integrity_decrypt_failed: {
    status: 401,
    counted: true,
    advice:
      "The token does not decrypt with the app's decryption key: paste Play Console's response decryption key into the app's Android settings, or suspect another app's or a tampered token.",
  },
  integrity_signature_invalid: {
    status: 401,
    counted: true,
    advice:
      "The verdict's ES256 signature does not verify with the app's verification key: paste Play Console's response verification key, or suspect a forged verdict.",
  },
  integrity_payload_invalid: {
    status: 400,
    counted: true,
    advice:
      'The verdict lacks fields Play always sends (requestDetails, appIntegrity, deviceIntegrity): suspect a forged verdict.',
  },
  package_mismatch: {
    status: 401,
    counted: true,
    advice:
      "The verdict names another package than the app's Android identity: check `X-Package-Name` and the package name in the app's Android settings.",
  },
  request_hash_mismatch: {
    status: 401,
    counted: true,
    advice:
      'Request the token with `requestHash` = base64url(SHA-256(challenge)) (or the challenge as the classic nonce), for the same challenge you send.',
  },
  verdict_stale: {
    status: 401,
    counted: true,
    advice:
      'Request a new integrity token right before validating: a verdict is accepted for 5 minutes and never from the future.',
  },
  certificate_mismatch: {
    status: 401,
    counted: true,
    advice:
      "The app was signed with a certificate not in the app's `certificateSha256Digests`: add Play Console's app signing key fingerprint (and your upload key's for internal builds).",
  },
  app_unrecognized: {
    status: 403,
    counted: true,
    advice:
      'Play does not recognise this build (modified, re-signed, or not uploaded to Play); turn `refuseUnrecognizedVersion` off for builds not yet on Play.',
  },
  app_unlicensed: {
    status: 403,
    counted: true,
    advice: 'The app was not installed from Google Play and the app refuses sideloaded installs (`refuseUnlicensed`).',
  },
  device_integrity_failed: {
    status: 403,
    counted: true,
    advice:
      "The device does not meet any of the app's `acceptedDeviceVerdicts` (rooted, emulator, or no Play services); accept `MEETS_BASIC_INTEGRITY` to admit it.",
  },
  android_not_configured: {
    status: 400,
    counted: false,
    advice:
      'The app has no Android identity: an Admin sets it with PUT /api/v1/apps/{appID}/android before Android devices validate.',
  },
  ios_not_configured: {
    status: 400,
    counted: false,
    advice:
      'The app is Android-only: an Admin gives it a Bundle ID and Team ID with PUT /api/v1/apps/{appID} before iOS devices attest.',
    message: 'This app has no iOS identity',
    hint: 'An Admin sets its bundleId and teamId with PUT /api/v1/apps/{appID}; iOS SDK calls send X-Bundle-ID and X-Team-ID',
  },
};

/**
 * The refusal answering `code`: its status from the catalog, and the catalog's message and hint
 * unless the refusal names its own (a verification step's finding, the app's limit it met).
 */
export function attestationRefusal(
  code: AttestationFailureCode,
  own: AppExceptionOptions & { readonly message?: string } = {},
): AppException {
  const entry: FailureCodeEntry = ATTESTATION_FAILURE_CODES[code];
  const { message, ...details } = own;
  const hint = details.hint ?? entry.hint;
  return new AppException(entry.status, code, message ?? entry.message ?? code, hint ? { ...details, hint } : details);
}
