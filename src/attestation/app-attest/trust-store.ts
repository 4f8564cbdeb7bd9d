import { X509Certificate, type KeyObject } from 'node:crypto';
import { fail } from './app-attest-errors.js';

interface TrustAnchor {
  certificate: X509Certificate;
  publicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
}

/** Parsed trust anchors, built once (at startup) so a verification never re-parses the root. */
export interface TrustStore {
  readonly anchors: readonly TrustAnchor[];
}

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
  return Object.freeze({ anchors: Object.freeze(anchors) });
}

function validityOf(certificate: X509Certificate): { notBefore: Date; notAfter: Date } {
  return { notBefore: new Date(certificate.validFrom), notAfter: new Date(certificate.validTo) };
}

function isWithin(validity: { notBefore: Date; notAfter: Date }, now: Date): boolean {
  return validity.notBefore <= now && now <= validity.notAfter;
}

function isIssuedBy(subject: X509Certificate, issuer: X509Certificate, key: KeyObject): boolean {
  // Names are not compared: x5c fixes the order, and only the issuer's key signature binds anything.
  return issuer.ca && subject.verify(key);
}

function parseChain(x5c: readonly Buffer[]): X509Certificate[] {
  return x5c.map((der, index) => {
    try {
      return new X509Certificate(der);
    } catch {
      return fail('certificate_chain_invalid', `x5c[${index}] is not a DER X.509 certificate`);
    }
  });
}

/**
 * Checks that x5c (leaf first) chains to one of the store's anchors, with every certificate,
 * anchor included, valid at `now`. Returns the parsed leaf.
 */
export function verifyCertificateChain(
  x5c: readonly [Buffer, ...Buffer[]],
  store: TrustStore,
  now: Date,
): X509Certificate {
  const chain = parseChain(x5c);
  chain.forEach((certificate, index) => {
    if (!isWithin(validityOf(certificate), now)) {
      fail('certificate_chain_invalid', `x5c[${index}] is not valid at ${now.toISOString()}`);
    }
  });
  for (let index = 1; index < chain.length; index += 1) {
    const [subject, issuer] = [chain[index - 1], chain[index]];
    if (!isIssuedBy(subject, issuer, issuer.publicKey)) {
      fail('certificate_chain_invalid', `x5c[${index - 1}] is not signed by x5c[${index}]`);
    }
  }
  const top = chain[chain.length - 1];
  const issuers = store.anchors.filter((anchor) => isIssuedBy(top, anchor.certificate, anchor.publicKey));
  if (issuers.length === 0) fail('certificate_chain_invalid', 'the chain does not lead to a trusted root');
  if (!issuers.some((anchor) => isWithin(anchor, now))) {
    fail('certificate_chain_invalid', `the trusted root is not valid at ${now.toISOString()}`);
  }
  return chain[0];
}
