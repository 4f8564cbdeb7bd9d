// A minimal DER reader: node:crypto's X509Certificate does not expose arbitrary extensions, and
// reading the one extension App Attest needs is cheaper than a second full certificate parse.

const TAG_SEQUENCE = 0x30;
const TAG_OCTET_STRING = 0x04;
const TAG_OID = 0x06;
const TAG_EXTENSIONS = 0xa3; // [3] EXPLICIT in TBSCertificate

export interface DerNode {
  tag: number;
  content: Buffer;
}

export class DerError extends Error {}

function readLength(der: Buffer, offset: number): { length: number; next: number } {
  const first = der[offset];
  if (first === undefined) throw new DerError('truncated length');
  if (first < 0x80) return { length: first, next: offset + 1 };
  const octets = first & 0x7f;
  // 0x80 is BER's indefinite length, never valid in DER; more than 4 octets cannot fit a Buffer.
  if (octets === 0 || octets > 4 || offset + 1 + octets > der.length) {
    throw new DerError('bad length');
  }
  return { length: der.readUIntBE(offset + 1, octets), next: offset + 1 + octets };
}

function readNode(der: Buffer, offset: number): { node: DerNode; next: number } {
  const tag = der[offset];
  // Certificates only use single-byte tags; a high-tag-number form means we are lost.
  if (tag === undefined || (tag & 0x1f) === 0x1f) throw new DerError('bad tag');
  const { length, next } = readLength(der, offset + 1);
  const end = next + length;
  if (end > der.length) throw new DerError('content overruns its parent');
  return { node: { tag, content: der.subarray(next, end) }, next: end };
}

/** Decodes exactly one element spanning the whole buffer. */
export function readDer(der: Buffer): DerNode {
  const { node, next } = readNode(der, 0);
  if (next !== der.length) throw new DerError('trailing bytes');
  return node;
}

/** The elements inside a constructed node, in order. */
export function readChildren(parent: DerNode): DerNode[] {
  const children: DerNode[] = [];
  for (let offset = 0; offset < parent.content.length;) {
    const { node, next } = readNode(parent.content, offset);
    children.push(node);
    offset = next;
  }
  return children;
}

export function expectTag(node: DerNode | undefined, tag: number): DerNode {
  if (node?.tag !== tag) throw new DerError(`expected tag 0x${tag.toString(16)}`);
  return node;
}

/**
 * The extnValue octets of a certificate extension, or undefined when the certificate lacks it.
 * @param oid the DER content octets of the extension's object identifier
 */
export function findExtension(certificateDer: Buffer, oid: Buffer): Buffer | undefined {
  const certificate = expectTag(readDer(certificateDer), TAG_SEQUENCE);
  const tbs = expectTag(readChildren(certificate)[0], TAG_SEQUENCE);
  const wrapper = readChildren(tbs).find((node) => node.tag === TAG_EXTENSIONS);
  if (!wrapper) return undefined;
  const extensions = expectTag(readChildren(wrapper)[0], TAG_SEQUENCE);
  for (const extension of readChildren(extensions)) {
    // Extension ::= SEQUENCE { extnID OID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }
    const fields = readChildren(expectTag(extension, TAG_SEQUENCE));
    if (expectTag(fields[0], TAG_OID).content.equals(oid)) {
      return expectTag(fields[fields.length - 1], TAG_OCTET_STRING).content;
    }
  }
  return undefined;
}

const TAG_BIT_STRING = 0x03;
const TAG_TBS_VERSION = 0xa0; // [0] EXPLICIT Version, absent in v1 certificates

/** The parts of a certificate its issuer's signature covers and names, as DER. */
export interface SignedParts {
  /** tbsCertificate, whole (tag and length included): the bytes the signature covers. */
  tbs: Buffer;
  /** The outer signatureAlgorithm AlgorithmIdentifier, whole. */
  algorithm: Buffer;
  /** The tbsCertificate's own `signature` AlgorithmIdentifier, whole; RFC 5280 has it equal the outer one. */
  innerAlgorithm: Buffer;
  /** The signatureValue's bits (the BIT STRING without its unused-bits octet). */
  signature: Buffer;
}

/** One element at `offset` of `der`, with its whole encoding and its content. */
function element(der: Buffer, offset: number): { whole: Buffer; node: DerNode; next: number } {
  const { node, next } = readNode(der, offset);
  return { whole: der.subarray(offset, next), node, next };
}

/** Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }. */
export function readSignedParts(certificateDer: Buffer): SignedParts {
  const certificate = expectTag(readDer(certificateDer), TAG_SEQUENCE).content;
  const tbs = element(certificate, 0);
  const algorithm = element(certificate, tbs.next);
  const signature = element(certificate, algorithm.next);
  if (signature.next !== certificate.length) throw new DerError('trailing bytes after the signature');
  expectTag(tbs.node, TAG_SEQUENCE);
  expectTag(algorithm.node, TAG_SEQUENCE);
  const bits = expectTag(signature.node, TAG_BIT_STRING).content;
  if (bits.length < 2 || bits[0] !== 0) throw new DerError('the signature is not a whole number of octets');
  const first = element(tbs.node.content, 0);
  // TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature AlgorithmIdentifier, … }
  const serial = first.node.tag === TAG_TBS_VERSION ? element(tbs.node.content, first.next) : first;
  const innerAlgorithm = element(tbs.node.content, serial.next);
  expectTag(innerAlgorithm.node, TAG_SEQUENCE);
  return {
    tbs: tbs.whole,
    algorithm: algorithm.whole,
    innerAlgorithm: innerAlgorithm.whole,
    signature: bits.subarray(1),
  };
}
