import { createHash, createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { compactDecrypt, compactVerify, errors as joseErrors } from 'jose';
import type { DeviceVerdict } from '../../common/android-device-verdicts.js';

/**
 * Google Play Integrity verdicts, verified locally (no call to Google), as Play Console's
 * "manage and download my response encryption keys" set-up gives them: the integrity token is a
 * JWE (A256KW, A256GCM) under the app's AES-256 decryption key, holding a JWS (ES256) signed with
 * Google's per-app EC P-256 key whose public half is the app's verification key. Pure logic: no
 * framework, no I/O; the service supplies the app's identity, its policy and the challenge.
 */

/** Every way an integrity token can be refused; each code names the failed step. */
export const PLAY_INTEGRITY_ERROR_CODES = [
  'integrity_token_malformed',
  'integrity_decrypt_failed',
  'integrity_signature_invalid',
  'integrity_payload_invalid',
  'package_mismatch',
  'request_hash_mismatch',
  'verdict_stale',
  'certificate_mismatch',
  'app_unrecognized',
  'app_unlicensed',
  'device_integrity_failed',
] as const;

export type PlayIntegrityErrorCode = (typeof PLAY_INTEGRITY_ERROR_CODES)[number];

/** What the service knows of an app's Android build. */
export interface AndroidIdentity {
  readonly packageName: string;
  /** SHA-256 digests of the app's signing certificates, as Play reports them (base64url, no padding). */
  readonly certificateSha256Digests: readonly string[];
  /** The response decryption key: AES-256, 32 bytes. */
  readonly decryptionKey: Uint8Array;
  /** The response verification key: EC P-256 public key. */
  readonly verificationKey: KeyObject;
}

/** Which verdicts an app accepts. */
export interface AndroidPolicy {
  /** A device passes when Play lists at least one of these labels for it. */
  readonly acceptedDeviceVerdicts: readonly DeviceVerdict[];
  /** Refuse `UNRECOGNIZED_VERSION` (a build Play does not know: modified or re-signed). */
  readonly refuseUnrecognizedVersion: boolean;
  /** Refuse `UNLICENSED` installs (sideloaded, not from Play). */
  readonly refuseUnlicensed: boolean;
}

export const DEFAULT_ANDROID_POLICY: AndroidPolicy = {
  acceptedDeviceVerdicts: ['MEETS_STRONG_INTEGRITY', 'MEETS_DEVICE_INTEGRITY'],
  refuseUnrecognizedVersion: true,
  refuseUnlicensed: false,
};

/** How old a verdict may be (Play's own advice for standard requests), and how far ahead a clock may run. */
export const VERDICT_MAX_AGE_MS = 5 * 60_000;
export const VERDICT_MAX_SKEW_MS = 60_000;

/** What the service keeps of an accepted verdict (risk signals and device fields). */
export interface IntegrityVerdict {
  readonly packageName: string;
  readonly timestampMillis: number;
  readonly appRecognitionVerdict: string;
  readonly deviceVerdicts: readonly string[];
  readonly appLicensingVerdict: string | null;
  readonly versionCode: string | null;
  /** `standard` (request hash) or `classic` (nonce). */
  readonly requestKind: 'standard' | 'classic';
}

export type IntegrityOutcome =
  { ok: true; verdict: IntegrityVerdict } | { ok: false; code: PlayIntegrityErrorCode; message: string };

/**
 * The request hash (standard requests) an app sends for `challenge`: base64url (no padding) of
 * SHA-256 over the challenge string exactly as the service issued it. Classic requests send the
 * challenge itself as the nonce (it is already base64, 32 random bytes, single use).
 */
export function requestHashOf(challenge: string): string {
  return createHash('sha256').update(challenge, 'utf8').digest('base64url');
}

/** The verification key Play Console shows (base64 DER SubjectPublicKeyInfo), as a key; throws when it is not EC P-256. */
export function verificationKeyFromBase64(base64: string): KeyObject {
  const key = createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('the verification key is not an EC P-256 public key');
  }
  return key;
}

/** The decryption key Play Console shows (base64 of 32 bytes); throws when it is not AES-256. */
export function decryptionKeyFromBase64(base64: string): Uint8Array {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('the decryption key is not 32 bytes (AES-256)');
  return new Uint8Array(key);
}

/**
 * A signing certificate's SHA-256 digest as the service stores it (base64url, no padding), from
 * what a developer pastes: Play Console's hex fingerprint (colons optional) or base64/base64url.
 * Throws when it is not 32 bytes.
 */
export function normalizeCertificateDigest(input: string): string {
  const text = input.trim();
  const hex = text.replace(/:/g, '');
  const bytes = /^[0-9a-fA-F]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : Buffer.from(toBase64Url(text), 'base64url');
  if (bytes.length !== 32) throw new Error('a certificate digest is SHA-256: 32 bytes, as hex or base64');
  return bytes.toString('base64url');
}

/** The most an integrity token may weigh (Play's are a few KB). */
export const MAX_INTEGRITY_TOKEN_LENGTH = 16_384;
const COMPACT_JWE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

class Refusal extends Error {
  constructor(
    readonly code: PlayIntegrityErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (code: PlayIntegrityErrorCode, message: string): never => {
  throw new Refusal(code, message);
};

/**
 * Verifies `token` for the app `identity` against the single-use `challenge` the device was
 * issued, under `policy`, at `now`: decryption, signature, package, request binding, freshness,
 * signing certificate, app recognition, licensing and device integrity, in that order. Never
 * throws: anything attacker-shaped ends as the failed step's code.
 */
export async function verifyIntegrityToken(
  token: string,
  options: { identity: AndroidIdentity; policy: AndroidPolicy; challenge: string; now: number },
): Promise<IntegrityOutcome> {
  try {
    return { ok: true, verdict: await verify(token, options) };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

async function verify(
  token: string,
  {
    identity,
    policy,
    challenge,
    now,
  }: { identity: AndroidIdentity; policy: AndroidPolicy; challenge: string; now: number },
): Promise<IntegrityVerdict> {
  if (typeof token !== 'string' || token.length > MAX_INTEGRITY_TOKEN_LENGTH || !COMPACT_JWE.test(token)) {
    refuse('integrity_token_malformed', 'The integrity token is not a compact JWE of at most 16 KB.');
  }
  const jws = await decrypt(token, identity.decryptionKey);
  const payload = await verifySignature(jws, identity.verificationKey);
  const claims = parsePayload(payload);

  const details = claims.requestDetails;
  if (details.requestPackageName !== identity.packageName) {
    refuse('package_mismatch', 'The verdict was requested by another package than this app.');
  }
  const requestKind = checkBinding(details, challenge);
  checkFreshness(details.timestampMillis, now);

  const app = claims.appIntegrity;
  if (app.appRecognitionVerdict !== 'UNEVALUATED') {
    if (app.packageName !== identity.packageName) {
      refuse('package_mismatch', "The verdict's app integrity names another package.");
    }
    const digests = app.certificateSha256Digest ?? [];
    const known = identity.certificateSha256Digests.map(normalizeCertificateDigest);
    if (!digests.some((digest) => known.some((registered) => sameText(toBase64Url(digest), registered)))) {
      refuse('certificate_mismatch', 'The app was not signed with a certificate registered for this app.');
    }
  }
  if (app.appRecognitionVerdict !== 'PLAY_RECOGNIZED') {
    if (app.appRecognitionVerdict !== 'UNRECOGNIZED_VERSION' || policy.refuseUnrecognizedVersion) {
      refuse('app_unrecognized', `Play does not recognise this build (${app.appRecognitionVerdict}).`);
    }
  }
  const licensing = claims.accountDetails?.appLicensingVerdict ?? null;
  if (policy.refuseUnlicensed && licensing === 'UNLICENSED') {
    refuse('app_unlicensed', 'The app was not installed from Google Play.');
  }
  const deviceVerdicts = claims.deviceIntegrity.deviceRecognitionVerdict ?? [];
  if (!deviceVerdicts.some((label) => (policy.acceptedDeviceVerdicts as readonly string[]).includes(label))) {
    refuse(
      'device_integrity_failed',
      `The device does not meet the integrity this app requires (${policy.acceptedDeviceVerdicts.join(' or ')}).`,
    );
  }
  return {
    packageName: details.requestPackageName,
    timestampMillis: details.timestampMillis,
    appRecognitionVerdict: app.appRecognitionVerdict,
    deviceVerdicts,
    appLicensingVerdict: licensing,
    versionCode: app.versionCode ?? null,
    requestKind,
  };
}

async function decrypt(token: string, key: Uint8Array): Promise<string> {
  try {
    const { plaintext } = await compactDecrypt(token, key, {
      keyManagementAlgorithms: ['A256KW'],
      contentEncryptionAlgorithms: ['A256GCM'],
      // Play never compresses a verdict: a `zip` header is refused rather than inflated.
      maxDecompressedLength: 0,
    });
    return new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch {
    return refuse(
      'integrity_decrypt_failed',
      "The token does not decrypt with this app's decryption key (A256KW, A256GCM): another app's token, a tampered one, or the wrong key in the app's settings.",
    );
  }
}

async function verifySignature(jws: string, key: KeyObject): Promise<Uint8Array> {
  try {
    const { payload } = await compactVerify(jws, key, { algorithms: ['ES256'] });
    return payload;
  } catch (error) {
    const message =
      error instanceof joseErrors.JOSEAlgNotAllowed
        ? 'The verdict is not signed with ES256.'
        : "The verdict's signature does not verify with this app's verification key.";
    return refuse('integrity_signature_invalid', message);
  }
}

interface Claims {
  requestDetails: { requestPackageName: string; timestampMillis: number; requestHash?: string; nonce?: string };
  appIntegrity: {
    appRecognitionVerdict: string;
    packageName?: string;
    certificateSha256Digest?: string[];
    versionCode?: string;
  };
  deviceIntegrity: { deviceRecognitionVerdict?: string[] };
  accountDetails?: { appLicensingVerdict?: string };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isStringList = (value: unknown, max: number): value is string[] =>
  Array.isArray(value) && value.length <= max && value.every((item) => typeof item === 'string' && item.length <= 512);
const optionalString = (value: unknown) => value === undefined || (typeof value === 'string' && value.length <= 1024);

/** The verdict's fields this service reads, checked for shape; anything else is ignored. */
function parsePayload(bytes: Uint8Array): Claims {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return refuse('integrity_payload_invalid', 'The verdict is not JSON.');
  }
  const invalid = (what: string) =>
    refuse('integrity_payload_invalid', `The verdict's ${what} is missing or malformed.`);
  if (!isObject(parsed)) return invalid('body');
  const { requestDetails, appIntegrity, deviceIntegrity, accountDetails } = parsed;
  if (
    !isObject(requestDetails) ||
    typeof requestDetails.requestPackageName !== 'string' ||
    !optionalString(requestDetails.requestHash) ||
    !optionalString(requestDetails.nonce)
  ) {
    return invalid('requestDetails');
  }
  const timestamp = Number(requestDetails.timestampMillis);
  if (!Number.isSafeInteger(timestamp) || timestamp <= 0) return invalid('requestDetails.timestampMillis');
  if (
    !isObject(appIntegrity) ||
    typeof appIntegrity.appRecognitionVerdict !== 'string' ||
    !optionalString(appIntegrity.packageName) ||
    !optionalString(appIntegrity.versionCode) ||
    (appIntegrity.certificateSha256Digest !== undefined && !isStringList(appIntegrity.certificateSha256Digest, 16))
  ) {
    return invalid('appIntegrity');
  }
  if (
    !isObject(deviceIntegrity) ||
    (deviceIntegrity.deviceRecognitionVerdict !== undefined &&
      !isStringList(deviceIntegrity.deviceRecognitionVerdict, 16))
  ) {
    return invalid('deviceIntegrity');
  }
  if (
    accountDetails !== undefined &&
    (!isObject(accountDetails) || !optionalString(accountDetails.appLicensingVerdict))
  ) {
    return invalid('accountDetails');
  }
  return {
    requestDetails: {
      requestPackageName: requestDetails.requestPackageName,
      timestampMillis: timestamp,
      requestHash: requestDetails.requestHash as string | undefined,
      nonce: requestDetails.nonce as string | undefined,
    },
    appIntegrity: appIntegrity as unknown as Claims['appIntegrity'],
    deviceIntegrity: deviceIntegrity,
    accountDetails: accountDetails,
  };
}

/** The request is bound to the challenge: the request hash of a standard request, else a classic nonce. */
function checkBinding(details: Claims['requestDetails'], challenge: string): 'standard' | 'classic' {
  if (details.requestHash !== undefined) {
    if (!sameText(details.requestHash, requestHashOf(challenge))) {
      refuse('request_hash_mismatch', 'The request hash is not SHA-256 of the challenge this device was issued.');
    }
    return 'standard';
  }
  if (details.nonce !== undefined) {
    if (!sameText(toBase64Url(details.nonce), toBase64Url(challenge))) {
      refuse('request_hash_mismatch', 'The nonce is not the challenge this device was issued.');
    }
    return 'classic';
  }
  return refuse('request_hash_mismatch', 'The verdict carries neither a request hash nor a nonce.');
}

function checkFreshness(timestampMillis: number, now: number): void {
  if (timestampMillis > now + VERDICT_MAX_SKEW_MS) {
    refuse('verdict_stale', 'The verdict is dated in the future.');
  }
  if (now - timestampMillis > VERDICT_MAX_AGE_MS) {
    refuse('verdict_stale', 'The verdict is older than 5 minutes: request a new one.');
  }
}

/** base64 and base64url spell the same bytes differently: compare in one alphabet, without padding. */
function toBase64Url(text: string): string {
  return text.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
