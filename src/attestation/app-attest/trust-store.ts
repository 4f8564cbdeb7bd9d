import { constants, X509Certificate, verify, type KeyObject } from 'node:crypto';
import { fail } from './app-attest-errors.js';
import { readSignedParts } from './der.js';

interface TrustAnchor {
  certificate: X509Certificate;
  publicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
}

/** A CA certificate (the top of a chain) whose signature by an anchor has been verified. */
interface VerifiedIssuer {
  certificate: X509Certificate;
  publicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** The anchors whose key signed it. */
  anchors: readonly TrustAnchor[];
}

/**
 * Parsed trust anchors, built once (at startup) so a verification never re-parses the root; and
 * the CA certificates found signed by them, by their DER (base64), so the one intermediate every
 * device sends (Apple's App Attestation CA 1) is parsed and its P-384 signature checked once, not
 * on every attestation. Only certificates an anchor signed are kept, so no input can fill it, and
 * at most MAX_VERIFIED_ISSUERS; validity dates are still checked on every chain.
 */
export interface TrustStore {
  readonly anchors: readonly TrustAnchor[];
  readonly verifiedIssuers: Map<string, VerifiedIssuer>;
}

const MAX_VERIFIED_ISSUERS = 16;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Parses PEM certificates (several per string allowed, as in a CA bundle file) into a trust store.
 * Throws on input without any certificate: that is a configuration error, not a device's.
 */
export function createTrustStore(pems: string | readonly string[]): TrustStore {
  const blocks = [pems].flat().flatMap((pem) => pem.match(PEM_CERTIFICATE) ?? []);
  if (blocks.length === 0) throw new Error('App Attest trust store: no PEM certificate given');
  const anchors = blocks.map((block) => {
    const certificate = new X509Certificate(block);
    return { certificate, publicKey: certificate.publicKey, ...validityOf(certificate) };
  });
  return Object.freeze({ anchors: Object.freeze(anchors), verifiedIssuers: new Map<string, VerifiedIssuer>() });
}

function validityOf(certificate: X509Certificate): { notBefore: Date; notAfter: Date } {
  return { notBefore: new Date(certificate.validFrom), notAfter: new Date(certificate.validTo) };
}

function isWithin(validity: { notBefore: Date; notAfter: Date }, now: Date): boolean {
  return validity.notBefore <= now && now <= validity.notAfter;
}

/**
 * The signature algorithms a chain is verified with on the thread pool, by the whole DER of their
 * AlgorithmIdentifier, with the digest and the only key type each goes with: ECDSA (Apple's chain:
 * ecdsa-with-SHA256 over the leaf and ecdsa-with-SHA384 over the intermediate, both by P-384 keys)
 * and RSA PKCS #1 v1.5, with or without the NULL parameters. Any other algorithm, or a key of
 * another type than its label names, is left to OpenSSL on the event loop (which refuses the
 * mismatch).
 */
const SIGNATURE_ALGORITHMS = new Map<string, { digest: string; keyType: 'ec' | 'rsa' }>([
  ['300a06082a8648ce3d040302', { digest: 'sha256', keyType: 'ec' }],
  ['300a06082a8648ce3d040303', { digest: 'sha384', keyType: 'ec' }],
  ['300a06082a8648ce3d040304', { digest: 'sha512', keyType: 'ec' }],
  ['300d06092a864886f70d01010b0500', { digest: 'sha256', keyType: 'rsa' }],
  ['300d06092a864886f70d01010c0500', { digest: 'sha384', keyType: 'rsa' }],
  ['300d06092a864886f70d01010d0500', { digest: 'sha512', keyType: 'rsa' }],
  ['300b06092a864886f70d01010b', { digest: 'sha256', keyType: 'rsa' }],
  ['300b06092a864886f70d01010c', { digest: 'sha384', keyType: 'rsa' }],
  ['300b06092a864886f70d01010d', { digest: 'sha512', keyType: 'rsa' }],
]);

/**
 * Whether `issuer` (a CA) signed `subject`, its signature checked on libuv's thread pool
 * (`crypto.verify` with a callback) so a validation does not hold the event loop for the P-384
 * verify. Refused, as OpenSSL's X509_verify refuses, when the tbsCertificate's own signature
 * algorithm is not the outer one (compared byte for byte, stricter than OpenSSL's comparison by
 * meaning), when the issuer's key is not of the type the algorithm names, or when the signature
 * does not verify. Names are not compared: x5c fixes the order, and only the issuer's key
 * signature binds anything.
 */
async function isIssuedBy(subject: X509Certificate, issuer: X509Certificate, key: KeyObject): Promise<boolean> {
  if (!issuer.ca) return false;
  const parts = readSignedParts(subject.raw);
  if (!parts.algorithm.equals(parts.innerAlgorithm)) return false;
  const algorithm = SIGNATURE_ALGORITHMS.get(parts.algorithm.toString('hex'));
  if (!algorithm || key.asymmetricKeyType !== algorithm.keyType) return subject.verify(key);
  const options =
    algorithm.keyType === 'ec' ? { key, dsaEncoding: 'der' as const } : { key, padding: constants.RSA_PKCS1_PADDING };
  return new Promise((resolve) => {
    verify(algorithm.digest, parts.tbs, options, parts.signature, (error, valid) => resolve(!error && valid));
  });
}

/** The anchors whose key signed `top`. */
async function issuersAmong(anchors: readonly TrustAnchor[], top: X509Certificate): Promise<TrustAnchor[]> {
  const signed = await Promise.all(anchors.map((anchor) => isIssuedBy(top, anchor.certificate, anchor.publicKey)));
  return anchors.filter((_, index) => signed[index]);
}

/**
 * The certificates of x5c, each exactly its bytes: OpenSSL ignores bytes after a certificate, and
 * a certificate with some appended would be another entry of the verified issuers for the same CA.
 */
function parseChain(x5c: readonly Buffer[]): X509Certificate[] {
  return x5c.map((der, index) => {
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(der);
    } catch {
      return fail('certificate_chain_invalid', `x5c[${index}] is not a DER X.509 certificate`);
    }
    if (!certificate.raw.equals(der)) fail('certificate_chain_invalid', `x5c[${index}] is not exactly one certificate`);
    return certificate;
  });
}

/**
 * Apple sends the credential certificate and its intermediate; a longer x5c is refused before any
 * signature is checked, so no request costs more than a few signature checks.
 */
export const MAX_CHAIN_LENGTH = 3;

/**
 * Checks that x5c (leaf first) chains to one of the store's anchors, with every certificate,
 * anchor included, valid at `now`. Returns the parsed leaf.
 */
export async function verifyCertificateChain(
  x5c: readonly [Buffer, ...Buffer[]],
  store: TrustStore,
  now: Date,
): Promise<X509Certificate> {
  if (x5c.length > MAX_CHAIN_LENGTH) {
    fail('certificate_chain_invalid', `x5c holds ${x5c.length} certificates, more than ${MAX_CHAIN_LENGTH}`);
  }
  const topIndex = x5c.length - 1;
  const topKey = topIndex > 0 ? x5c[topIndex].toString('base64') : null;
  const known = topKey === null ? undefined : store.verifiedIssuers.get(topKey);
  const chain = known ? [...parseChain(x5c.slice(0, topIndex)), known.certificate] : parseChain(x5c);
  chain.forEach((certificate, index) => {
    const validity = index === topIndex && known ? known : validityOf(certificate);
    if (!isWithin(validity, now)) {
      fail('certificate_chain_invalid', `x5c[${index}] is not valid at ${now.toISOString()}`);
    }
  });
  // The top first: a chain that leads to no trusted root costs one check per anchor, whatever it holds.
  const top = chain[topIndex];
  const issuers = known ? known.anchors : await issuersAmong(store.anchors, top);
  if (issuers.length === 0) fail('certificate_chain_invalid', 'the chain does not lead to a trusted root');
  if (!issuers.some((anchor) => isWithin(anchor, now))) {
    fail('certificate_chain_invalid', `the trusted root is not valid at ${now.toISOString()}`);
  }
  for (let index = 1; index < chain.length; index += 1) {
    const [subject, issuer] = [chain[index - 1], chain[index]];
    const key = index === topIndex && known ? known.publicKey : issuer.publicKey;
    if (!(await isIssuedBy(subject, issuer, key))) {
      fail('certificate_chain_invalid', `x5c[${index - 1}] is not signed by x5c[${index}]`);
    }
  }
  if (topKey !== null && !known && top.ca && store.verifiedIssuers.size < MAX_VERIFIED_ISSUERS) {
    store.verifiedIssuers.set(topKey, {
      certificate: top,
      publicKey: top.publicKey,
      ...validityOf(top),
      anchors: issuers,
    });
  }
  return chain[0];
}
