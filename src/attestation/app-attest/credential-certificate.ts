import type { X509Certificate } from 'node:crypto';
import { fail } from './app-attest-errors.js';
import { DerError, expectTag, findExtension, readChildren, readDer } from './der.js';

// DER content octets of 1.2.840.113635.100.8.2, Apple's App Attest nonce extension.
const NONCE_EXTENSION_OID = Buffer.from('2a864886f763640802', 'hex');
const TAG_SEQUENCE = 0x30;
const TAG_NONCE = 0xa1; // [1] EXPLICIT
const TAG_OCTET_STRING = 0x04;
const UNCOMPRESSED_P256_POINT_LENGTH = 65;

/** The nonce Apple put in the credential certificate: SEQUENCE { [1] EXPLICIT OCTET STRING }. */
export function readCertificateNonce(leaf: X509Certificate): Buffer {
  try {
    const value = findExtension(leaf.raw, NONCE_EXTENSION_OID);
    if (!value) return fail('nonce_mismatch', 'the credential certificate has no nonce extension');
    const sequence = expectTag(readDer(value), TAG_SEQUENCE);
    const tagged = readChildren(sequence).find((node) => node.tag === TAG_NONCE);
    return expectTag(tagged && readChildren(tagged)[0], TAG_OCTET_STRING).content;
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
    return fail('nonce_mismatch', `the nonce extension is malformed (${error.message})`);
  }
}

/**
 * The credential key, read from the certificate once: its SubjectPublicKeyInfo (DER) and the
 * uncompressed point 0x04 || X || Y in it, the bytes Apple hashes into keyId.
 */
export function credentialPublicKey(leaf: X509Certificate): { spki: Buffer; point: Buffer } {
  const key = leaf.publicKey;
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    return fail('key_id_mismatch', 'the credential certificate key is not an EC P-256 key');
  }
  const spki = key.export({ type: 'spki', format: 'der' });
  // A P-256 SubjectPublicKeyInfo ends with its BIT STRING holding the 65-byte uncompressed point.
  return { spki, point: spki.subarray(-UNCOMPRESSED_P256_POINT_LENGTH) };
}

/** SubjectPublicKeyInfo DER as PEM, as `KeyObject.export({ type: 'spki', format: 'pem' })` writes it. */
export function spkiPem(spki: Buffer): string {
  const lines = spki.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PUBLIC KEY-----\n${lines.join('\n')}\n-----END PUBLIC KEY-----\n`;
}
