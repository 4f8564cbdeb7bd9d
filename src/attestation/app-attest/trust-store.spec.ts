import 'reflect-metadata'; // @peculiar/x509 resolves its services through tsyringe
import { afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { constants, createPrivateKey, sign, webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { AppAttestError } from './app-attest-errors.js';
import { readSignedParts } from './der.js';
import { createTrustStore, MAX_CHAIN_LENGTH, verifyCertificateChain } from './trust-store.js';

const validity = { notBefore: new Date('2030-01-01T00:00:00Z'), notAfter: new Date('2031-01-01T00:00:00Z') };
const now = new Date('2030-06-01T00:00:00Z');
const ECDSA_SHA384 = Buffer.from('300a06082a8648ce3d040303', 'hex');

interface Pki {
  rootPem: string;
  root: x509.X509Certificate;
  rootKeys: webcrypto.CryptoKeyPair;
}

async function pki(
  algorithm: webcrypto.RsaHashedKeyGenParams | webcrypto.EcKeyGenParams,
  signing: webcrypto.RsaPssParams | webcrypto.EcdsaParams | webcrypto.Algorithm = algorithm,
): Promise<Pki> {
  const rootKeys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const root = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Test Root',
    ...validity,
    keys: rootKeys,
    signingAlgorithm: signing,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  return { rootPem: root.toString('pem'), root, rootKeys };
}

async function leafOf(
  authority: Pki,
  algorithm: webcrypto.RsaHashedKeyGenParams | webcrypto.EcdsaParams,
): Promise<Buffer> {
  const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=Test Leaf',
    issuer: authority.root.subjectName,
    ...validity,
    publicKey: keys.publicKey,
    signingKey: authority.rootKeys.privateKey,
    signingAlgorithm: algorithm,
  });
  return Buffer.from(leaf.rawData);
}

async function privateKeyOf(authority: Pki) {
  const jwk = await webcrypto.subtle.exportKey('jwk', authority.rootKeys.privateKey);
  return createPrivateKey({ key: jwk, format: 'jwk' });
}

/** DER length octets for `length`. */
function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const octets = Buffer.alloc(4);
  octets.writeUInt32BE(length);
  const trimmed = octets.subarray(octets.findIndex((byte) => byte !== 0));
  return Buffer.concat([Buffer.from([0x80 | trimmed.length]), trimmed]);
}

function sequence(...parts: Buffer[]): Buffer {
  const content = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([0x30]), derLength(content.length), content]);
}

function bitString(bits: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x03]), derLength(bits.length + 1), Buffer.from([0]), bits]);
}

async function refusal(chain: Promise<unknown>): Promise<string> {
  const error = await chain.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof AppAttestError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return `${error.code}: ${error.message}`;
}

describe('verifyCertificateChain, signatures checked on the thread pool', () => {
  let ecdsa: Pki;

  afterEach(() => {
    jest.restoreAllMocks();
  });

  beforeAll(async () => {
    ecdsa = await pki({ name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' });
  });

  it('reads the signed parts of a certificate as OpenSSL does', async () => {
    const der = await leafOf(ecdsa, { name: 'ECDSA', hash: 'SHA-384' });
    const parts = readSignedParts(der);
    expect(parts.algorithm).toEqual(ECDSA_SHA384);
    expect(parts.innerAlgorithm).toEqual(ECDSA_SHA384);
    expect(sequence(parts.tbs, parts.algorithm, bitString(parts.signature))).toEqual(der);
  });

  it.each([
    [
      'ECDSA P-384 with SHA-384',
      { name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' },
      { name: 'ECDSA', hash: 'SHA-384' },
      0,
    ],
    [
      'ECDSA P-256 with SHA-256',
      { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' },
      { name: 'ECDSA', hash: 'SHA-256' },
      0,
    ],
    [
      'RSA PKCS #1 v1.5 with SHA-256',
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      { name: 'RSASSA-PKCS1-v1_5' },
      0,
    ],
    [
      'RSA-PSS (verified by OpenSSL on the event loop)',
      { name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      { name: 'RSA-PSS', saltLength: 32 },
      2,
    ],
  ])(
    'accepts a leaf its root signed with %s, and refuses it with one signature bit flipped',
    async (_name, keyAlgorithm, signing, onTheEventLoop) => {
      const authority = await pki(keyAlgorithm, { ...keyAlgorithm, ...signing });
      const der = await leafOf(authority, signing as webcrypto.EcdsaParams);
      const store = createTrustStore(authority.rootPem);
      const openSsl = jest.spyOn(X509Certificate.prototype, 'verify');
      await expect(
        verifyCertificateChain([der, Buffer.from(authority.root.rawData)], store, now),
      ).resolves.toBeInstanceOf(X509Certificate);
      // The root's signature over itself and the root's over the leaf: on the thread pool, or not.
      expect(openSsl).toHaveBeenCalledTimes(onTheEventLoop);
      openSsl.mockRestore();
      const flipped = Buffer.from(der);
      flipped[flipped.length - 1] ^= 0x01;
      expect(new X509Certificate(flipped).verify(new X509Certificate(authority.rootPem).publicKey)).toBe(false);
      expect(await refusal(verifyCertificateChain([flipped, Buffer.from(authority.root.rawData)], store, now))).toBe(
        'certificate_chain_invalid: x5c[0] is not signed by x5c[1]',
      );
    },
  );

  it('refuses a certificate whose outer signature algorithm is not the one its signed part names, as OpenSSL does', async () => {
    // Signed with SHA-256 as its tbsCertificate says, then relabelled and signed again with SHA-384:
    // the signature verifies under the outer label, and only the comparison of the two refuses it.
    const der = await leafOf(ecdsa, { name: 'ECDSA', hash: 'SHA-256' });
    const { tbs, innerAlgorithm } = readSignedParts(der);
    expect(innerAlgorithm.equals(ECDSA_SHA384)).toBe(false);
    const signature = sign('sha384', tbs, await privateKeyOf(ecdsa));
    const relabelled = sequence(tbs, ECDSA_SHA384, bitString(signature));
    const rootKey = new X509Certificate(ecdsa.rootPem).publicKey;
    expect(new X509Certificate(relabelled).verify(rootKey)).toBe(false);
    const store = createTrustStore(ecdsa.rootPem);
    expect(await refusal(verifyCertificateChain([relabelled, Buffer.from(ecdsa.root.rawData)], store, now))).toBe(
      'certificate_chain_invalid: x5c[0] is not signed by x5c[1]',
    );
    // The same bytes with the labels agreeing verify: the test's construction is sound.
    const agreeing = sequence(tbs, innerAlgorithm, bitString(sign('sha256', tbs, await privateKeyOf(ecdsa))));
    await expect(
      verifyCertificateChain([agreeing, Buffer.from(ecdsa.root.rawData)], store, now),
    ).resolves.toBeDefined();
  });

  it('leaves to OpenSSL, which refuses it, a signature whose label names another key type than the issuer has', async () => {
    // An RSA root's PKCS #1 signature over a tbsCertificate labelled ecdsa-with-SHA256: the digest
    // and the signature agree, only the label lies. crypto.verify would follow the key; OpenSSL refuses.
    const rsa = await pki({
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    });
    const labelled = readSignedParts(await leafOf(ecdsa, { name: 'ECDSA', hash: 'SHA-256' }));
    const rsaKey = await privateKeyOf(rsa);
    const signature = sign('sha256', labelled.tbs, { key: rsaKey, padding: constants.RSA_PKCS1_PADDING });
    const relabelled = sequence(labelled.tbs, labelled.algorithm, bitString(signature));
    expect(new X509Certificate(relabelled).verify(new X509Certificate(rsa.rootPem).publicKey)).toBe(false);
    const store = createTrustStore(rsa.rootPem);
    expect(await refusal(verifyCertificateChain([relabelled, Buffer.from(rsa.root.rawData)], store, now))).toBe(
      'certificate_chain_invalid: x5c[0] is not signed by x5c[1]',
    );
  });

  it('checks the top of the chain against the roots before anything below it', async () => {
    // A made-up CA over a leaf it did not sign: refused for its root, without checking the leaf.
    const stranger = await pki({ name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' });
    const leaf = await leafOf(ecdsa, { name: 'ECDSA', hash: 'SHA-384' });
    const store = createTrustStore(ecdsa.rootPem);
    expect(await refusal(verifyCertificateChain([leaf, Buffer.from(stranger.root.rawData)], store, now))).toBe(
      'certificate_chain_invalid: the chain does not lead to a trusted root',
    );
  });

  it('refuses more than 3 certificates, and keeps none of them', async () => {
    expect(MAX_CHAIN_LENGTH).toBe(3);
    const leaf = await leafOf(ecdsa, { name: 'ECDSA', hash: 'SHA-384' });
    const root = Buffer.from(ecdsa.root.rawData);
    const store = createTrustStore(ecdsa.rootPem);
    const openSsl = jest.spyOn(X509Certificate.prototype, 'verify');
    const long = [leaf, ...Array.from({ length: MAX_CHAIN_LENGTH }, () => root)] as [Buffer, ...Buffer[]];
    expect(await refusal(verifyCertificateChain(long, store, now))).toBe(
      `certificate_chain_invalid: x5c holds ${MAX_CHAIN_LENGTH + 1} certificates, more than ${MAX_CHAIN_LENGTH}`,
    );
    expect(openSsl).not.toHaveBeenCalled();
    expect(store.verifiedIssuers.size).toBe(0);
  });

  it('refuses a certificate with bytes after it, and keeps no second entry for its CA', async () => {
    const leaf = await leafOf(ecdsa, { name: 'ECDSA', hash: 'SHA-384' });
    const root = Buffer.from(ecdsa.root.rawData);
    const store = createTrustStore(ecdsa.rootPem);
    await verifyCertificateChain([leaf, root], store, now);
    expect(store.verifiedIssuers.size).toBe(1);
    for (const extra of [0x00, 0x01, 0xff]) {
      expect(
        await refusal(verifyCertificateChain([leaf, Buffer.concat([root, Buffer.from([extra])])], store, now)),
      ).toBe('certificate_chain_invalid: x5c[1] is not exactly one certificate');
    }
    expect(store.verifiedIssuers.size).toBe(1);
  });
});
