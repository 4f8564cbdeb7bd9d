import { createPublicKey, hash, verify, type KeyObject } from 'node:crypto';
import { Decoder } from 'cbor-x';
import { during, duringAsync, fail, refusalAsResultAsync, type AppAttestFailure } from './app-attest-errors.js';
import { parseAttestedAuthenticatorData, parseAuthenticatorData } from './auth-data.js';
import { credentialPublicKey, readCertificateNonce, spkiPem } from './credential-certificate.js';
import { verifyCertificateChain, type TrustStore } from './trust-store.js';

export type { AppAttestErrorCode, AppAttestFailure } from './app-attest-errors.js';
export { createTrustStore, type TrustStore } from './trust-store.js';

export type AppAttestEnvironment = 'development' | 'production';

export interface AttestationInput {
  /** The CBOR attestation object, base64-decoded. */
  attestationObject: Buffer;
  /** The key identifier as the device reports it: standard base64 of SHA256(public key point). */
  keyId: string;
  /** Accepted clientDataHash values; the attestation is valid when its nonce matches any of them. */
  clientDataHashes: readonly Buffer[];
  teamId: string;
  bundleId: string;
  trustAnchors: TrustStore;
  /** The time the certificates must be valid at; vectors and replays need it in the past. */
  now: Date;
}

export interface AttestationVerified {
  ok: true;
  environment: AppAttestEnvironment;
  /** The attested key, SPKI PEM: store it to verify later assertions. */
  publicKeyPem: string;
  /** Apple's receipt, for a later fraud-metric exchange with Apple. */
  receipt: Buffer;
  counter: number;
  credentialId: Buffer;
  leafNotAfter: Date;
}

export type AttestationVerification = AttestationVerified | AppAttestFailure;

export interface AssertionInput {
  /** The CBOR assertion, base64-decoded. */
  assertion: Buffer;
  /** The key stored from the attestation. */
  publicKeyPem: string;
  /** Accepted SHA256(clientData) values; the signature is valid when it covers any of them. */
  clientDataHashes: readonly Buffer[];
  teamId: string;
  bundleId: string;
  /** The counter stored after the previous attestation or assertion; the new one must exceed it. */
  previousCounter: number;
}

export type AssertionVerification = { ok: true; counter: number } | AppAttestFailure;

const FORMAT = 'apple-appattest';
const AAGUID_PRODUCTION = Buffer.concat([Buffer.from('appattest'), Buffer.alloc(7)]);
const AAGUID_DEVELOPMENT = Buffer.from('appattestdevelop');
// Records and structured-clone extensions are cbor-x conventions no Apple device emits.
const cbor = new Decoder({ useRecords: false, mapsAsObjects: true });
const PADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function sha256(...parts: Buffer[]): Buffer {
  return hash('sha256', parts.length === 1 ? parts[0] : Buffer.concat(parts), 'buffer');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Uint8Array) &&
    !(value instanceof Map)
  );
}

function asBytes(value: unknown): Buffer | undefined {
  if (!(value instanceof Uint8Array)) return undefined;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function decodeCbor(bytes: Buffer, onError: () => never): unknown {
  try {
    return cbor.decode(bytes);
  } catch {
    return onError();
  }
}

interface AttestationObject {
  authData: Buffer;
  x5c: [Buffer, ...Buffer[]];
  receipt: Buffer;
}

function readCertificates(value: unknown): [Buffer, ...Buffer[]] | undefined {
  const [first, ...rest] = Array.isArray(value) ? value.map(asBytes) : [];
  if (!first || !rest.every((der) => der !== undefined)) return undefined;
  return [first, ...rest];
}

function readAttestationObject(bytes: Buffer): AttestationObject {
  const decoded = decodeCbor(bytes, () => fail('invalid_cbor', 'the attestation is not CBOR'));
  if (!isRecord(decoded)) return fail('invalid_format', 'the attestation is not a CBOR map');
  if (decoded.fmt !== FORMAT) return fail('invalid_format', `fmt is not ${FORMAT}`);
  const statement = decoded.attStmt;
  const authData = asBytes(decoded.authData);
  if (!isRecord(statement) || !authData) {
    return fail('invalid_format', 'attStmt or authData is missing');
  }
  const x5c = readCertificates(statement.x5c);
  const receipt = asBytes(statement.receipt);
  if (!x5c || !receipt) {
    return fail('invalid_format', 'attStmt needs x5c (certificates) and receipt (bytes)');
  }
  return { authData, x5c, receipt };
}

function checkNonce(nonce: Buffer, authData: Buffer, clientDataHashes: readonly Buffer[]): void {
  if (!clientDataHashes.some((clientDataHash) => sha256(authData, clientDataHash).equals(nonce))) {
    fail('nonce_mismatch', 'the certificate nonce is not SHA256(authData || clientDataHash)');
  }
}

/** SHA256 of the credential key, checked against keyId. Returns it as the canonical key id bytes. */
function checkKeyId(publicKeyPoint: Buffer, keyId: string): Buffer {
  const expected = sha256(publicKeyPoint);
  // Compared as text, not bytes: keyId identifies the device from here on, so only Apple's own
  // spelling (standard padded base64) is accepted and one device cannot appear under two ids.
  if (expected.toString('base64') !== keyId) {
    fail('key_id_mismatch', 'keyId is not the SHA256 of the credential certificate key');
  }
  return expected;
}

function checkRpId(rpIdHash: Buffer, teamId: string, bundleId: string): void {
  if (!rpIdHash.equals(sha256(Buffer.from(`${teamId}.${bundleId}`)))) {
    fail('rp_id_mismatch', 'rpIdHash is not SHA256(teamId.bundleId)');
  }
}

function environmentOf(aaguid: Buffer): AppAttestEnvironment {
  if (aaguid.equals(AAGUID_PRODUCTION)) return 'production';
  if (aaguid.equals(AAGUID_DEVELOPMENT)) return 'development';
  return fail('aaguid_invalid', 'aaguid is neither appattest nor appattestdevelop');
}

/**
 * Verifies an App Attest attestation object, following Apple's server-side validation steps in order.
 * The certificate chain's signatures are verified on the thread pool (see `verifyCertificateChain`).
 */
export function verifyAttestation(input: AttestationInput): Promise<AttestationVerification> {
  return refusalAsResultAsync(async (): Promise<AttestationVerified> => {
    const { authData, x5c, receipt } = during('invalid_format', 'the attestation object does not read', () =>
      readAttestationObject(input.attestationObject),
    );
    const parsed =
      during('invalid_format', 'authData does not parse', () => parseAttestedAuthenticatorData(authData)) ??
      fail('invalid_format', 'authData lacks attested credential data');
    const leaf = await duringAsync('certificate_chain_invalid', 'the certificate chain does not verify', () =>
      verifyCertificateChain(x5c, input.trustAnchors, input.now),
    );
    checkNonce(
      during('nonce_mismatch', 'the nonce extension does not read', () => readCertificateNonce(leaf)),
      authData,
      input.clientDataHashes,
    );
    const credentialKey = during('key_id_mismatch', 'the credential key does not read', () =>
      credentialPublicKey(leaf),
    );
    const keyIdBytes = checkKeyId(credentialKey.point, input.keyId);
    checkRpId(parsed.rpIdHash, input.teamId, input.bundleId);
    if (parsed.counter !== 0) fail('counter_not_zero', `counter is ${parsed.counter}, not 0`);
    const environment = environmentOf(parsed.aaguid);
    if (!parsed.credentialId.equals(keyIdBytes)) {
      fail('credential_id_mismatch', 'credentialId is not the keyId');
    }
    return {
      ok: true,
      environment,
      publicKeyPem: spkiPem(credentialKey.spki),
      // Copies, because the decoder's byte strings are views into the caller's buffer.
      receipt: Buffer.from(receipt),
      counter: parsed.counter,
      credentialId: Buffer.from(parsed.credentialId),
      leafNotAfter: new Date(leaf.validTo),
    };
  });
}

function readAssertion(bytes: Buffer): { signature: Buffer; authenticatorData: Buffer } {
  const decoded = decodeCbor(bytes, () => fail('invalid_assertion', 'the assertion is not CBOR'));
  const signature = isRecord(decoded) ? asBytes(decoded.signature) : undefined;
  const authenticatorData = isRecord(decoded) ? asBytes(decoded.authenticatorData) : undefined;
  if (!signature || !authenticatorData) {
    return fail('invalid_assertion', 'the assertion needs signature and authenticatorData bytes');
  }
  return { signature, authenticatorData };
}

/** Parsed device keys by PEM, most recently used last; a refresh otherwise parses its PEM each time. */
const devicePublicKeys = new Map<string, KeyObject>();
const DEVICE_PUBLIC_KEYS_KEPT = 10_000;

function devicePublicKey(publicKeyPem: string): KeyObject {
  let key = devicePublicKeys.get(publicKeyPem);
  if (key) {
    devicePublicKeys.delete(publicKeyPem);
  } else {
    key = createPublicKey(publicKeyPem);
    if (devicePublicKeys.size >= DEVICE_PUBLIC_KEYS_KEPT) {
      devicePublicKeys.delete(devicePublicKeys.keys().next().value!);
    }
  }
  devicePublicKeys.set(publicKeyPem, key);
  return key;
}

/** ECDSA-SHA256 over `data` on libuv's thread pool (`crypto.verify` with a callback), off the event loop. */
function verifiesOffLoop(data: Buffer, key: KeyObject, signature: Buffer): Promise<boolean> {
  return new Promise((resolve, reject) => {
    verify('sha256', data, key, signature, (error, valid) => (error ? reject(error) : resolve(valid)));
  });
}

async function signsAnyNonce(
  assertion: { signature: Buffer; authenticatorData: Buffer },
  publicKeyPem: string,
  clientDataHashes: readonly Buffer[],
): Promise<boolean> {
  const key = devicePublicKey(publicKeyPem);
  for (const clientDataHash of clientDataHashes) {
    const nonce = sha256(assertion.authenticatorData, clientDataHash);
    // The device signs the nonce itself with ECDSA-SHA256, so the digest is SHA256(nonce).
    if (await verifiesOffLoop(nonce, key, assertion.signature)) return true;
  }
  return false;
}

/**
 * Verifies an App Attest assertion. The cheap checks run before the signature so a replayed or
 * misdirected assertion costs no ECDSA verify; otherwise it costs one verify per clientDataHash
 * tried, stopping at the first that matches. The verifies run on the thread pool.
 */
export function verifyAssertion(input: AssertionInput): Promise<AssertionVerification> {
  return refusalAsResultAsync(async (): Promise<{ ok: true; counter: number }> => {
    const assertion = during('invalid_assertion', 'the assertion does not read', () => readAssertion(input.assertion));
    const header =
      during('invalid_assertion', 'authenticatorData does not parse', () =>
        parseAuthenticatorData(assertion.authenticatorData),
      ) ?? fail('invalid_assertion', 'authenticatorData is shorter than 37 bytes');
    checkRpId(header.rpIdHash, input.teamId, input.bundleId);
    // The signature before the counter: `counter_not_increasing` then means the key itself signed
    // an old counter (a replayed or cloned key), never an assertion anyone could make up.
    const signed = await duringAsync('signature_invalid', 'the signature does not verify', () =>
      signsAnyNonce(assertion, input.publicKeyPem, input.clientDataHashes),
    );
    if (!signed) {
      fail('signature_invalid', 'the signature does not cover SHA256(authenticatorData || clientDataHash)');
    }
    if (header.counter <= input.previousCounter) {
      fail('counter_not_increasing', `counter ${header.counter} <= ${input.previousCounter}`);
    }
    return { ok: true, counter: header.counter };
  });
}

/**
 * The clientDataHash values a challenge string stands for: SHA256 of its UTF-8 bytes (what
 * `Data(challenge.utf8)` hashes to in Swift) and, when it is padded standard base64 (the form
 * the service issues), SHA256 of the decoded bytes. The UTF-8 form comes first, so the usual case costs a single ECDSA verify.
 */
export function challengeClientDataHashes(challenge: string): Buffer[] {
  const hashes = [sha256(Buffer.from(challenge, 'utf8'))];
  if (challenge.length > 0 && PADDED_BASE64.test(challenge)) {
    hashes.push(sha256(Buffer.from(challenge, 'base64')));
  }
  return hashes;
}
