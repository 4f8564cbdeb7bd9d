// Test, benchmark and demo tooling, outside the service (src/ may not import it, bar the CLI's demo
// commands): it signs with keys it makes up.
// Fabricates Apple-like App Attest attestations and assertions for tests.
//
// A fabricated authority is a root CA and an intermediate CA, both P-384 like Apple's; each device
// holds a software P-256 key in place of the Secure Enclave's. Attestations have Apple's layout
// (CBOR `apple-appattest`, x5c [credential certificate, intermediate], receipt, authData with the
// attested credential) and verify against `rootPem` exactly as real ones verify against Apple's
// root; `overrides` break one field at a time to exercise each refusal.
//
//   const authority = await appAttestAuthority();
//   const device = authority.createDevice();
//   const attestationObject = await device.attest({ challenge, teamId, bundleId });
//   const assertion = device.assert({ challenge, counter: 1, teamId, bundleId });
import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe, which needs it
import * as x509 from '@peculiar/x509';
import { Encoder } from 'cbor-x';
import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  sign,
  webcrypto,
  type KeyObject,
} from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export type FabricatedEnvironment = 'development' | 'production';

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

/** The clientDataHash an attestation covers: SHA256 of the challenge's UTF-8 bytes, or given as is. */
export type AttestClientData =
  { challenge: string; clientDataHash?: never } | { clientDataHash: Buffer; challenge?: never };

/** The attestation object as it is about to be CBOR-encoded. */
export interface FabricatedAttestationObject {
  fmt: string;
  attStmt: { x5c: Buffer[]; receipt: Buffer };
  authData: Buffer;
}

/** Each override breaks one field of an otherwise valid attestation. */
export interface AttestOverrides {
  rpIdHash?: Buffer;
  counter?: number;
  aaguid?: Buffer;
  credentialId?: Buffer;
  /** Appended to authData as a CBOR extensions map, with the ED flag set. */
  extensions?: Map<unknown, unknown>;
  /** Replaces the nonce in the credential certificate; null leaves the nonce extension out. */
  nonce?: Buffer | null;
  /** Certifies this public key instead of the device's, so the certificate no longer matches keyId. */
  certificateKey?: KeyObject;
  /** Rewrites the object last, e.g. to change fmt, drop a certificate or truncate authData. */
  attestationObject?: (object: FabricatedAttestationObject) => unknown;
}

export interface AttestSettings {
  teamId: string;
  bundleId: string;
  /** Selects the aaguid; default production. */
  environment?: FabricatedEnvironment;
  /** Validity of the credential certificate; default from one hour ago to three days ahead, as Apple's. */
  validity?: Validity;
  overrides?: AttestOverrides;
}

export type AttestOptions = AttestClientData & AttestSettings;

/**
 * What the device signs: clientData is the challenge's UTF-8 bytes by default (the service's rule),
 * or the exact bytes given; clientDataHash skips the hashing.
 */
export type AssertClientData =
  | { challenge: string; clientData?: never; clientDataHash?: never }
  | { clientData: Buffer | string; challenge?: never; clientDataHash?: never }
  | { clientDataHash: Buffer; challenge?: never; clientData?: never };

export type AssertOptions = AssertClientData & { counter: number; teamId: string; bundleId: string };

export interface FabricatedDevice {
  /** Standard base64 SHA256 of the uncompressed public key point, as DCAppAttestService reports it. */
  keyId: string;
  privateKey: KeyObject;
  publicKeyPem: string;
  /** Resolves to the attestation object, base64. */
  attest(options: AttestOptions): Promise<string>;
  /** The assertion, base64. */
  assert(options: AssertOptions): string;
}

export interface FabricatedAuthority {
  /** The root CA, PEM: the trust anchor that fabricated attestations verify against. */
  rootPem: string;
  /** A new device, or the device holding `privateKey` (to sign assertions for a key attested earlier). */
  createDevice(privateKey?: KeyObject): FabricatedDevice;
}

/** Options that build a deliberately flawed authority, for testing chain checks. */
export interface AuthorityOptions {
  /** false issues the intermediate without the CA flag. */
  intermediateIsCa?: boolean;
  /** Validity of the root only; by default root and intermediate share 2020 to 2049. */
  rootValidity?: Validity;
}

const NONCE_EXTENSION_OID = '1.2.840.113635.100.8.2';
const CA_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-384' };
const CA_VALIDITY: Validity = {
  notBefore: new Date('2020-01-01T00:00:00Z'),
  notAfter: new Date('2049-12-31T00:00:00Z'),
};
const HOUR_MS = 3_600_000;
const FLAG_ATTESTED_CREDENTIAL_DATA = 0x40;
const FLAG_EXTENSIONS = 0x80;
// Plain CBOR as Apple writes it: no cbor-x records, no tag 259 around integer-keyed maps.
const cbor = new Encoder({ useRecords: false, mapsAsObjects: false, variableMapSize: true, tagUint8Array: false });

let sharedAuthority: Promise<FabricatedAuthority> | undefined;

/** The process-wide authority, created on first use because CA key generation takes a while. */
export function appAttestAuthority(): Promise<FabricatedAuthority> {
  sharedAuthority ??= createAppAttestAuthority();
  return sharedAuthority;
}

function sha256(...parts: Buffer[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
}

function randomSerial(): string {
  // A leading 0x01 keeps the DER INTEGER positive and of fixed length.
  return `01${randomBytes(8).toString('hex')}`;
}

function derTlv(tag: number, content: Buffer): Buffer {
  const length = content.length < 0x80 ? Buffer.of(content.length) : Buffer.of(0x81, content.length);
  return Buffer.concat([Buffer.of(tag), length, content]);
}

/** Apple's nonce extension value: SEQUENCE { [1] EXPLICIT OCTET STRING nonce }. */
function nonceExtensionValue(nonce: Buffer): Buffer {
  return derTlv(0x30, derTlv(0xa1, derTlv(0x04, nonce)));
}

function uncompressedPoint(publicKey: KeyObject): Buffer {
  const { x = '', y = '' } = publicKey.export({ format: 'jwk' });
  return Buffer.concat([Buffer.of(0x04), Buffer.from(x, 'base64url'), Buffer.from(y, 'base64url')]);
}

function coseKey(publicKey: KeyObject): Buffer {
  const point = uncompressedPoint(publicKey);
  // kty EC2, alg ES256, crv P-256, x, y
  const key = new Map<number, number | Buffer>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, point.subarray(1, 33)],
    [-3, point.subarray(33)],
  ]);
  return cbor.encode(key);
}

function aaguidOf(environment: FabricatedEnvironment): Buffer {
  return environment === 'production'
    ? Buffer.concat([Buffer.from('appattest'), Buffer.alloc(7)])
    : Buffer.from('appattestdevelop');
}

function rpIdHash(teamId: string, bundleId: string): Buffer {
  return sha256(Buffer.from(`${teamId}.${bundleId}`));
}

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

interface AuthDataFields {
  rpIdHash: Buffer;
  counter: number;
  aaguid: Buffer;
  credentialId: Buffer;
  publicKey: KeyObject;
  extensions: Map<unknown, unknown> | undefined;
}

function attestationAuthData(fields: AuthDataFields): Buffer {
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(fields.credentialId.length);
  const flags = FLAG_ATTESTED_CREDENTIAL_DATA | (fields.extensions ? FLAG_EXTENSIONS : 0);
  return Buffer.concat([
    fields.rpIdHash,
    Buffer.of(flags),
    counterBytes(fields.counter),
    fields.aaguid,
    idLength,
    fields.credentialId,
    coseKey(fields.publicKey),
    fields.extensions ? cbor.encode(fields.extensions) : Buffer.alloc(0),
  ]);
}

function attestClientDataHash(options: AttestClientData): Buffer {
  return options.clientDataHash ?? sha256(Buffer.from(options.challenge, 'utf8'));
}

function assertClientDataHash(options: AssertClientData): Buffer {
  if (options.clientDataHash) return options.clientDataHash;
  const clientData = options.clientData ?? options.challenge;
  return sha256(typeof clientData === 'string' ? Buffer.from(clientData, 'utf8') : clientData);
}

interface Issuer {
  certificate: x509.X509Certificate;
  privateKey: webcrypto.CryptoKey;
}

async function generateCaKeys(extractable = false): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(CA_ALGORITHM, extractable, ['sign', 'verify']);
}

function caExtensions(isCa: boolean): x509.Extension[] {
  return [
    new x509.BasicConstraintsExtension(isCa, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
  ];
}

/** A fresh, independent authority; most tests want the shared {@link appAttestAuthority}. */
export async function createAppAttestAuthority(options: AuthorityOptions = {}): Promise<FabricatedAuthority> {
  const { rootPem, issuer } = await buildAuthority(options, false);
  return authorityOf(rootPem, issuer);
}

/**
 * An authority kept in a file (its root, its intermediate and the intermediate's key), so a
 * server started once with `APP_ATTEST_ROOT_CA` pointing at its root keeps trusting devices
 * fabricated later: for the README tour and local SDK development, never for production.
 */
export async function persistentAppAttestAuthority(file: string): Promise<FabricatedAuthority> {
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as {
      rootPem: string;
      intermediatePem: string;
      intermediateKey: webcrypto.JsonWebKey;
    };
    const privateKey = await webcrypto.subtle.importKey('jwk', saved.intermediateKey, CA_ALGORITHM, false, ['sign']);
    return authorityOf(saved.rootPem, { certificate: new x509.X509Certificate(saved.intermediatePem), privateKey });
  }
  const { rootPem, issuer } = await buildAuthority({}, true);
  const intermediateKey = await webcrypto.subtle.exportKey('jwk', issuer.privateKey);
  writeFileSync(
    file,
    JSON.stringify({ rootPem, intermediatePem: issuer.certificate.toString('pem'), intermediateKey }),
    { mode: 0o600 },
  );
  return authorityOf(rootPem, issuer);
}

function authorityOf(rootPem: string, issuer: Issuer): FabricatedAuthority {
  return { rootPem, createDevice: (privateKey?: KeyObject) => createDevice(issuer, privateKey) };
}

async function buildAuthority(
  options: AuthorityOptions,
  extractable: boolean,
): Promise<{ rootPem: string; issuer: Issuer }> {
  const rootKeys = await generateCaKeys();
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: 'CN=Fabricated App Attestation Root CA, O=Attestly Test, ST=California',
    ...(options.rootValidity ?? CA_VALIDITY),
    keys: rootKeys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-384' },
    extensions: caExtensions(true),
  });
  const intermediateKeys = await generateCaKeys(extractable);
  const intermediate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: 'CN=Fabricated App Attestation CA 1, O=Attestly Test, ST=California',
    issuer: root.subjectName,
    ...CA_VALIDITY,
    publicKey: intermediateKeys.publicKey,
    signingKey: rootKeys.privateKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-384' },
    extensions: caExtensions(options.intermediateIsCa ?? true),
  });
  return {
    rootPem: root.toString('pem'),
    issuer: { certificate: intermediate, privateKey: intermediateKeys.privateKey },
  };
}

async function issueCredentialCertificate(
  issuer: Issuer,
  publicKey: KeyObject,
  nonce: Buffer | null,
  validity: Validity,
): Promise<Buffer> {
  const subjectKey = publicKey.export({ type: 'spki', format: 'der' });
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${sha256(uncompressedPoint(publicKey)).toString('hex')}, OU=AAA Certification, O=Apple Inc., ST=California`,
    issuer: issuer.certificate.subjectName,
    ...validity,
    publicKey: subjectKey,
    signingKey: issuer.privateKey,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ...(nonce ? [new x509.Extension(NONCE_EXTENSION_OID, false, nonceExtensionValue(nonce))] : []),
    ],
  });
  return Buffer.from(certificate.rawData);
}

function defaultValidity(): Validity {
  const now = Date.now();
  return { notBefore: new Date(now - HOUR_MS), notAfter: new Date(now + 72 * HOUR_MS) };
}

function createDevice(issuer: Issuer, existingKey?: KeyObject): FabricatedDevice {
  const privateKey = existingKey ?? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const publicKey = createPublicKey(privateKey);
  const keyIdBytes = sha256(uncompressedPoint(publicKey));

  async function attest(options: AttestOptions): Promise<string> {
    const overrides = options.overrides ?? {};
    const authData = attestationAuthData({
      rpIdHash: overrides.rpIdHash ?? rpIdHash(options.teamId, options.bundleId),
      counter: overrides.counter ?? 0,
      aaguid: overrides.aaguid ?? aaguidOf(options.environment ?? 'production'),
      credentialId: overrides.credentialId ?? keyIdBytes,
      publicKey,
      extensions: overrides.extensions,
    });
    const nonce = overrides.nonce === undefined ? sha256(authData, attestClientDataHash(options)) : overrides.nonce;
    const credentialCertificate = await issueCredentialCertificate(
      issuer,
      overrides.certificateKey ?? publicKey,
      nonce,
      options.validity ?? defaultValidity(),
    );
    const object: FabricatedAttestationObject = {
      fmt: 'apple-appattest',
      attStmt: {
        x5c: [credentialCertificate, Buffer.from(issuer.certificate.rawData)],
        receipt: Buffer.from('fabricated receipt'),
      },
      authData,
    };
    const final = overrides.attestationObject ? overrides.attestationObject(object) : object;
    return cbor.encode(final).toString('base64');
  }

  function assert(options: AssertOptions): string {
    const authenticatorData = Buffer.concat([
      rpIdHash(options.teamId, options.bundleId),
      Buffer.of(FLAG_ATTESTED_CREDENTIAL_DATA), // what real devices send, though no credential follows
      counterBytes(options.counter),
    ]);
    const nonce = sha256(authenticatorData, assertClientDataHash(options));
    const signature = sign('sha256', nonce, privateKey);
    return cbor.encode({ signature, authenticatorData }).toString('base64');
  }

  return {
    keyId: keyIdBytes.toString('base64'),
    privateKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    attest,
    assert,
  };
}
