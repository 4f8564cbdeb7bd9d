import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { decode, Encoder } from 'cbor-x';
import fc from 'fast-check';
import {
  appAttestAuthority,
  createAppAttestAuthority,
  type AttestSettings,
  type FabricatedAttestationObject,
  type FabricatedAuthority,
  type FabricatedDevice,
} from '../../tools/app-attest-fabricator/fabricator.js';
import { APP_ATTEST_ERROR_CODES } from '../../src/attestation/app-attest/app-attest-errors.js';
import {
  challengeClientDataHashes,
  createTrustStore,
  verifyAssertion,
  verifyAttestation,
  type AppAttestErrorCode,
  type AssertionInput,
  type AttestationInput,
  type AttestationVerification,
  type TrustStore,
} from '../../src/attestation/app-attest/app-attest.js';

/** Real App Attest vectors (public data, copied into the repository: see its README). */
const VECTOR_DIR = path.resolve(process.cwd(), 'test/fixtures/appattest');
const SHIPPED_ROOT = path.resolve(process.cwd(), 'src/attestation/app-attest/apple-app-attestation-root-ca.pem');
const APPLE_ROOT_FINGERPRINT =
  '1C:B9:82:3B:A2:8B:A6:AD:2D:33:A0:06:94:1D:E2:AE:4F:51:3E:F1:D4:E8:31:B9:F7:E0:FA:7B:62:42:C9:32';
const DAY_MS = 86_400_000;

interface AttestationVector {
  id: string;
  kind: 'attestation';
  keyId: string;
  attestationObject: string;
  challenge: { encoding: 'utf8' | 'base64'; value: string };
  clientDataHashDerivation: 'sha256' | 'raw';
  clientDataHash: string;
  teamId: string;
  bundleId: string;
  environment: 'development' | 'production';
  validAt: string;
  expectedPublicKeyPem?: string;
}

interface AssertionVector {
  id: string;
  kind: 'assertion';
  assertion: string;
  clientData: { encoding: 'utf8'; value: string };
  clientDataHash: string;
  attestationVector: string;
  teamId: string;
  bundleId: string;
  previousCounter: number;
  expectedCounter: number;
}

function sha256(bytes: Buffer | string): Buffer {
  return createHash('sha256').update(bytes).digest();
}

function readVectors(): { attestations: Map<string, AttestationVector>; assertions: AssertionVector[] } {
  const attestations = new Map<string, AttestationVector>();
  const assertions: AssertionVector[] = [];
  for (const file of readdirSync(VECTOR_DIR).filter((name) => name.endsWith('.json'))) {
    const vector = JSON.parse(readFileSync(path.join(VECTOR_DIR, file), 'utf8')) as AttestationVector | AssertionVector;
    if (vector.kind === 'attestation') attestations.set(file, vector);
    else assertions.push(vector);
  }
  return { attestations, assertions };
}

const vectors = readVectors();
const appleRoot = createTrustStore(readFileSync(SHIPPED_ROOT, 'utf8'));

function vectorInput(vector: AttestationVector, now = new Date(vector.validAt)): AttestationInput {
  return {
    attestationObject: Buffer.from(vector.attestationObject, 'base64'),
    keyId: vector.keyId,
    clientDataHashes: [Buffer.from(vector.clientDataHash, 'base64')],
    teamId: vector.teamId,
    bundleId: vector.bundleId,
    trustAnchors: appleRoot,
    now,
  };
}

function expectVerified<T extends { ok: boolean }>(result: T): Extract<T, { ok: true }> {
  expect(result).toMatchObject({ ok: true });
  return result as Extract<T, { ok: true }>;
}

function expectRefused(result: { ok: boolean; code?: AppAttestErrorCode }, code: AppAttestErrorCode): void {
  expect(result).toMatchObject({ ok: false, code });
}

describe('App Attest with real Apple device vectors', () => {
  const attestations = [...vectors.attestations.values()];

  it('ships Apple App Attestation Root CA itself', () => {
    const shipped = readFileSync(SHIPPED_ROOT, 'utf8');
    expect(shipped).toBe(readFileSync(path.join(VECTOR_DIR, 'apple_app_attest_root_ca.pem'), 'utf8'));
    expect(new X509Certificate(shipped).fingerprint256).toBe(APPLE_ROOT_FINGERPRINT);
  });

  it.each(attestations.map((vector) => [vector.id, vector] as const))(
    '%s verifies at its validAt date',
    async (_id, vector) => {
      const result = expectVerified(await verifyAttestation(vectorInput(vector)));
      expect(result.environment).toBe(vector.environment);
      expect(result.counter).toBe(0);
      expect(result.credentialId.toString('base64')).toBe(vector.keyId);
      expect(result.receipt.length).toBeGreaterThan(0);
      if (vector.expectedPublicKeyPem) {
        expect(result.publicKeyPem.trim()).toBe(vector.expectedPublicKeyPem.trim());
      }
    },
  );

  it.each(attestations.map((vector) => [vector.id, vector] as const))(
    '%s is refused one day after its credential certificate expires',
    async (_id, vector) => {
      const { leafNotAfter } = expectVerified(await verifyAttestation(vectorInput(vector)));
      const later = new Date(leafNotAfter.getTime() + DAY_MS);
      expectRefused(await verifyAttestation(vectorInput(vector, later)), 'certificate_chain_invalid');
    },
  );

  it.each(
    attestations
      .filter((vector) => vector.clientDataHashDerivation === 'sha256')
      .map((vector) => [vector.id, vector] as const),
  )('%s verifies with the hashes challengeClientDataHashes derives from its challenge', async (_id, vector) => {
    const clientDataHashes = challengeClientDataHashes(vector.challenge.value);
    expectVerified(await verifyAttestation({ ...vectorInput(vector), clientDataHashes }));
  });

  it("refuses Apple's guide sample when its raw challenge is hashed, as the vector warns", async () => {
    const vector = vectors.attestations.get('apple-guide-2024-production.attestation.json');
    if (!vector) throw new Error('apple guide vector missing');
    const clientDataHashes = challengeClientDataHashes(vector.challenge.value);
    expectRefused(await verifyAttestation({ ...vectorInput(vector), clientDataHashes }), 'nonce_mismatch');
  });

  it('refuses a real attestation presented for another app', async () => {
    const [vector] = attestations;
    if (!vector) throw new Error('no attestation vector');
    const input = { ...vectorInput(vector), bundleId: `${vector.bundleId}.other` };
    expectRefused(await verifyAttestation(input), 'rp_id_mismatch');
  });

  describe.each(vectors.assertions.map((vector) => [vector.id, vector] as const))('%s', (_id, vector) => {
    async function assertionInput(): Promise<AssertionInput> {
      const attestation = vectors.attestations.get(vector.attestationVector);
      if (!attestation) throw new Error(`${vector.attestationVector} missing`);
      const { publicKeyPem } = expectVerified(await verifyAttestation(vectorInput(attestation)));
      return {
        assertion: Buffer.from(vector.assertion, 'base64'),
        publicKeyPem,
        clientDataHashes: [sha256(Buffer.from(vector.clientData.value, 'utf8'))],
        teamId: vector.teamId,
        bundleId: vector.bundleId,
        previousCounter: vector.previousCounter,
      };
    }

    it('verifies against the key of its attestation', async () => {
      const input = await assertionInput();
      expect(input.clientDataHashes[0]?.toString('base64')).toBe(vector.clientDataHash);
      expect(await verifyAssertion(input)).toEqual({ ok: true, counter: vector.expectedCounter });
    });

    it('is refused when replayed', async () => {
      const input = { ...(await assertionInput()), previousCounter: vector.expectedCounter };
      expectRefused(await verifyAssertion(input), 'counter_not_increasing');
    });
  });
});

describe('createTrustStore', () => {
  it('refuses input without a certificate', () => {
    expect(() => createTrustStore('')).toThrow('no PEM certificate');
  });

  it('reads every certificate of a bundle', async () => {
    const other = await createAppAttestAuthority();
    const apple = readFileSync(SHIPPED_ROOT, 'utf8');
    expect(createTrustStore(`${other.rootPem}\n${apple}`).anchors).toHaveLength(2);
    expect(createTrustStore([other.rootPem, apple]).anchors).toHaveLength(2);
  });
});

describe('challengeClientDataHashes', () => {
  it('hashes the UTF-8 text, then the decoded bytes of canonical base64', () => {
    const challenge = randomBytes(32).toString('base64');
    expect(challengeClientDataHashes(challenge)).toEqual([
      sha256(Buffer.from(challenge, 'utf8')),
      sha256(Buffer.from(challenge, 'base64')),
    ]);
  });

  it.each(['not base64!', 'abc', 'YWJj-_8', 'YWJjZA', ''])('only hashes the text of %j', (challenge) => {
    expect(challengeClientDataHashes(challenge)).toEqual([sha256(Buffer.from(challenge, 'utf8'))]);
  });
});

describe('App Attest with fabricated attestations', () => {
  const teamId = 'ABCDE12345';
  const bundleId = 'com.example.app';
  const validity = { notBefore: new Date('2030-01-01T00:00:00Z'), notAfter: new Date('2030-01-04T00:00:00Z') };
  const now = new Date('2030-01-02T00:00:00Z');
  const challenge = randomBytes(32).toString('base64');
  const cbor = new Encoder({ useRecords: false, mapsAsObjects: false, variableMapSize: true });
  let authority: FabricatedAuthority;
  let store: TrustStore;
  let device: FabricatedDevice;

  beforeAll(async () => {
    authority = await appAttestAuthority();
    store = createTrustStore(authority.rootPem);
    device = authority.createDevice();
  });

  type AttestTweaks = Partial<AttestSettings> & { clientDataHash?: Buffer };

  async function attestation(tweaks: AttestTweaks = {}, by: FabricatedDevice = device): Promise<Buffer> {
    const { clientDataHash, ...settings } = tweaks;
    const clientData = clientDataHash ? { clientDataHash } : { challenge };
    const base64 = await by.attest({ ...clientData, teamId, bundleId, validity, ...settings });
    return Buffer.from(base64, 'base64');
  }

  function verify(attestationObject: Buffer, input: Partial<AttestationInput> = {}): Promise<AttestationVerification> {
    return verifyAttestation({
      attestationObject,
      keyId: device.keyId,
      clientDataHashes: challengeClientDataHashes(challenge),
      teamId,
      bundleId,
      trustAnchors: store,
      now,
      ...input,
    });
  }

  function rewrite(change: (object: FabricatedAttestationObject) => unknown): AttestTweaks {
    return { overrides: { attestationObject: change } };
  }

  describe('a genuine attestation', () => {
    it('verifies and yields what the service stores', async () => {
      const result = expectVerified(await verify(await attestation()));
      expect(result).toMatchObject({ environment: 'production', counter: 0, publicKeyPem: device.publicKeyPem });
      expect(result.credentialId.toString('base64')).toBe(device.keyId);
      expect(result.receipt.toString()).toBe('fabricated receipt');
      expect(result.leafNotAfter).toEqual(validity.notAfter);
    });

    it('reports the development environment from the appattestdevelop aaguid', async () => {
      const result = expectVerified(await verify(await attestation({ environment: 'development' })));
      expect(result.environment).toBe('development');
    });

    it('verifies when the app hashed the decoded challenge bytes', async () => {
      const clientDataHash = sha256(Buffer.from(challenge, 'base64'));
      expectVerified(await verify(await attestation({ clientDataHash })));
    });

    it('verifies when authData carries an extensions map', async () => {
      const extensions = new Map([['future', Buffer.from('extension')]]);
      expectVerified(await verify(await attestation({ overrides: { extensions } })));
    });

    it('verifies with a trust store holding other roots too', async () => {
      const other = await createAppAttestAuthority();
      const trustAnchors = createTrustStore([other.rootPem, authority.rootPem]);
      expectVerified(await verify(await attestation(), { trustAnchors }));
    });
  });

  it.each([
    ['an empty buffer', Buffer.alloc(0)],
    ['a truncated map', Buffer.from([0xa3, 0x63])],
    ['trailing bytes', Buffer.from([0xa0, 0x00])],
  ])('refuses %s as invalid_cbor', async (_name, bytes) => {
    expectRefused(await verify(bytes), 'invalid_cbor');
  });

  it.each<[string, (object: FabricatedAttestationObject) => unknown]>([
    ['a CBOR array', (object) => [object]],
    ['another fmt', (object) => ({ ...object, fmt: 'packed' })],
    ['no attStmt', ({ fmt, authData }) => ({ fmt, authData })],
    ['no receipt', (object) => ({ ...object, attStmt: { x5c: object.attStmt.x5c } })],
    ['an empty x5c', (object) => ({ ...object, attStmt: { ...object.attStmt, x5c: [] } })],
    ['a text x5c entry', (object) => ({ ...object, attStmt: { ...object.attStmt, x5c: ['MII'] } })],
    ['authData without credential', (object) => ({ ...object, authData: object.authData.subarray(0, 37) })],
    [
      'authData with the attested-credential flag cleared',
      (object) => {
        const authData = Buffer.from(object.authData);
        authData[32] = 0;
        return { ...object, authData };
      },
    ],
    ['a credentialId overrunning authData', (object) => ({ ...object, authData: object.authData.subarray(0, 60) })],
  ])('refuses %s as invalid_format', async (_name, change) => {
    expectRefused(await verify(await attestation(rewrite(change))), 'invalid_format');
  });

  describe('certificate_chain_invalid', () => {
    it('is reported before the credential certificate is valid', async () => {
      const before = new Date(validity.notBefore.getTime() - 1000);
      expectRefused(await verify(await attestation(), { now: before }), 'certificate_chain_invalid');
    });

    it('is reported after the credential certificate expired', async () => {
      const after = new Date(validity.notAfter.getTime() + 1000);
      expectRefused(await verify(await attestation(), { now: after }), 'certificate_chain_invalid');
    });

    it('is reported for a chain to an untrusted root', async () => {
      const stranger = (await createAppAttestAuthority()).createDevice();
      const result = await verify(await attestation({}, stranger), { keyId: stranger.keyId });
      expectRefused(result, 'certificate_chain_invalid');
    });

    it('is reported when the trusted root is not valid at that time', async () => {
      const rootValidity = { notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2029-12-31T00:00:00Z') };
      const expiredRoot = await createAppAttestAuthority({ rootValidity });
      const holder = expiredRoot.createDevice();
      const input = { keyId: holder.keyId, trustAnchors: createTrustStore(expiredRoot.rootPem) };
      expect(await verify(await attestation({}, holder), input)).toMatchObject({
        ok: false,
        code: 'certificate_chain_invalid',
        message: expect.stringContaining('trusted root'),
      });
    });

    it('is reported for an intermediate already verified once, when the chain is checked after it expired', async () => {
      expectVerified(await verify(await attestation()));
      // The intermediate is kept verified (one entry, however many devices), its dates are not.
      expect(store.verifiedIssuers.size).toBe(1);
      const late = { notBefore: new Date('2049-12-01T00:00:00Z'), notAfter: new Date('2050-02-01T00:00:00Z') };
      expect(
        await verify(await attestation({ validity: late }), { now: new Date('2050-01-15T00:00:00Z') }),
      ).toMatchObject({
        ok: false,
        code: 'certificate_chain_invalid',
        message: expect.stringContaining('x5c[1] is not valid'),
      });
      expect(store.verifiedIssuers.size).toBe(1);
    });

    it('is reported when the intermediate is not a CA', async () => {
      const flawed = await createAppAttestAuthority({ intermediateIsCa: false });
      const holder = flawed.createDevice();
      const input = { keyId: holder.keyId, trustAnchors: createTrustStore(flawed.rootPem) };
      expectRefused(await verify(await attestation({}, holder), input), 'certificate_chain_invalid');
    });

    it.each<[string, (x5c: Buffer[]) => Buffer[]]>([
      ['the intermediate is missing', (x5c) => x5c.slice(0, 1)],
      ['the certificates are swapped', (x5c) => [...x5c].reverse()],
      ['an entry is not a certificate', (x5c) => [x5c[0], Buffer.from('not a certificate')]],
      [
        'the credential certificate signature is altered',
        ([leaf, ...rest]) => {
          const altered = Buffer.from(leaf);
          altered[altered.length - 3] ^= 0x01;
          return [altered, ...rest];
        },
      ],
    ])('is reported when %s', async (_name, change) => {
      const bytes = await attestation(
        rewrite((object) => ({ ...object, attStmt: { ...object.attStmt, x5c: change(object.attStmt.x5c) } })),
      );
      expectRefused(await verify(bytes), 'certificate_chain_invalid');
    });
  });

  describe('nonce_mismatch', () => {
    it('is reported for another challenge', async () => {
      const clientDataHashes = challengeClientDataHashes(randomBytes(32).toString('base64'));
      expectRefused(await verify(await attestation(), { clientDataHashes }), 'nonce_mismatch');
    });

    it('is reported when no clientDataHash is accepted', async () => {
      expectRefused(await verify(await attestation(), { clientDataHashes: [] }), 'nonce_mismatch');
    });

    it('is reported when the certificate nonce is not over this authData', async () => {
      const bytes = await attestation({ overrides: { nonce: randomBytes(32) } });
      expectRefused(await verify(bytes), 'nonce_mismatch');
    });

    it('is reported when the certificate has no nonce extension', async () => {
      expectRefused(await verify(await attestation({ overrides: { nonce: null } })), 'nonce_mismatch');
    });
  });

  describe('key_id_mismatch', () => {
    it('is reported when the certificate certifies another key', async () => {
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      expectRefused(await verify(await attestation({ overrides: { certificateKey: publicKey } })), 'key_id_mismatch');
    });

    it('is reported when the certificate key is not P-256', async () => {
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' });
      expectRefused(await verify(await attestation({ overrides: { certificateKey: publicKey } })), 'key_id_mismatch');
    });

    it('is reported for keyId in another spelling than standard base64', async () => {
      const keyId = Buffer.from(device.keyId, 'base64').toString('base64url');
      expectRefused(await verify(await attestation(), { keyId }), 'key_id_mismatch');
    });
  });

  it('refuses an attestation for another app as rp_id_mismatch', async () => {
    expectRefused(await verify(await attestation(), { teamId: 'ZYXWV98765' }), 'rp_id_mismatch');
    const rpIdHash = sha256(`${teamId}.${bundleId}.evil`);
    expectRefused(await verify(await attestation({ overrides: { rpIdHash } })), 'rp_id_mismatch');
  });

  it('refuses a non-zero counter as counter_not_zero', async () => {
    expectRefused(await verify(await attestation({ overrides: { counter: 1 } })), 'counter_not_zero');
  });

  it.each([
    ['appattest with other padding', Buffer.from('appattest\0\0\0\0\0\0\x01')],
    ['all zeros', Buffer.alloc(16)],
    ['appattestdevelop in upper case', Buffer.from('APPATTESTDEVELOP')],
  ])('refuses an aaguid of %s as aaguid_invalid', async (_name, aaguid) => {
    expectRefused(await verify(await attestation({ overrides: { aaguid } })), 'aaguid_invalid');
  });

  it.each<[string, (keyId: Buffer) => Buffer]>([
    ['another id', () => randomBytes(32)],
    ['a prefix of the keyId', (keyId) => keyId.subarray(0, 16)],
  ])('refuses a credentialId that is %s as credential_id_mismatch', async (_name, credentialIdOf) => {
    const credentialId = credentialIdOf(Buffer.from(device.keyId, 'base64'));
    expectRefused(await verify(await attestation({ overrides: { credentialId } })), 'credential_id_mismatch');
  });

  describe('assertions', () => {
    function verifyAsserted(assertion: string, input: Partial<AssertionInput> = {}) {
      return verifyAssertion({
        assertion: Buffer.from(assertion, 'base64'),
        publicKeyPem: device.publicKeyPem,
        clientDataHashes: challengeClientDataHashes(challenge),
        teamId,
        bundleId,
        previousCounter: 0,
        ...input,
      });
    }

    it('verify with the attested key and report the new counter', async () => {
      const { publicKeyPem } = expectVerified(await verify(await attestation()));
      const assertion = device.assert({ challenge, counter: 7, teamId, bundleId });
      expect(await verifyAsserted(assertion, { publicKeyPem, previousCounter: 6 })).toEqual({ ok: true, counter: 7 });
    });

    it('verify over clientData that embeds the challenge', async () => {
      const clientData = Buffer.from(JSON.stringify({ challenge, action: 'refresh' }));
      const assertion = device.assert({ clientData, counter: 1, teamId, bundleId });
      expectVerified(await verifyAsserted(assertion, { clientDataHashes: [sha256(clientData)] }));
    });

    it('verify when the app hashed the decoded challenge bytes', async () => {
      const clientDataHash = sha256(Buffer.from(challenge, 'base64'));
      expectVerified(await verifyAsserted(device.assert({ clientDataHash, counter: 1, teamId, bundleId })));
    });

    it.each([
      ['bytes that are not CBOR', Buffer.from([0xa2, 0x69])],
      ['a map without signature', cbor.encode({ authenticatorData: randomBytes(37) })],
      ['a text signature', cbor.encode({ signature: 'MEUC', authenticatorData: randomBytes(37) })],
      ['short authenticatorData', cbor.encode({ signature: randomBytes(70), authenticatorData: randomBytes(36) })],
    ])('refuse %s as invalid_assertion', async (_name, bytes) => {
      expectRefused(await verifyAsserted(bytes.toString('base64')), 'invalid_assertion');
    });

    it('refuse an assertion for another app as rp_id_mismatch', async () => {
      const assertion = device.assert({ challenge, counter: 1, teamId: 'ZYXWV98765', bundleId });
      expectRefused(await verifyAsserted(assertion), 'rp_id_mismatch');
    });

    it.each([
      ['equal to', 5],
      ['below', 9],
    ])('refuse a counter %s the stored one as counter_not_increasing', async (_name, previousCounter) => {
      const assertion = device.assert({ challenge, counter: 5, teamId, bundleId });
      expectRefused(await verifyAsserted(assertion, { previousCounter }), 'counter_not_increasing');
    });

    it('refuse a signature over another challenge as signature_invalid', async () => {
      const assertion = device.assert({ challenge: randomBytes(32).toString('base64'), counter: 1, teamId, bundleId });
      expectRefused(await verifyAsserted(assertion), 'signature_invalid');
    });

    it('refuse a signature by another key as signature_invalid', async () => {
      const assertion = authority.createDevice().assert({ challenge, counter: 1, teamId, bundleId });
      expectRefused(await verifyAsserted(assertion), 'signature_invalid');
    });

    it('refuse a signature that is not DER as signature_invalid', async () => {
      const assertion = device.assert({ challenge, counter: 1, teamId, bundleId });
      const { authenticatorData } = decode(Buffer.from(assertion, 'base64')) as { authenticatorData: Buffer };
      const garbled = cbor.encode({ authenticatorData, signature: randomBytes(64) }).toString('base64');
      expectRefused(await verifyAsserted(garbled), 'signature_invalid');
    });
  });
});

describe('App Attest refuses mutated certificates of real attestations with a step code, never an exception', () => {
  const encoder = new Encoder({ useRecords: false, mapsAsObjects: false, variableMapSize: true });
  const codes = new Set<string>(APP_ATTEST_ERROR_CODES);

  /** The vector's attestation object with one byte of one certificate replaced. */
  function mutated(vector: AttestationVector, certificate: number, offset: number, xor: number): Buffer {
    const object = decode(Buffer.from(vector.attestationObject, 'base64')) as {
      fmt: string;
      attStmt: { x5c: Uint8Array[]; receipt: Uint8Array };
      authData: Uint8Array;
    };
    const x5c = object.attStmt.x5c.map((der) => Buffer.from(der));
    x5c[certificate][offset] ^= xor;
    return encoder.encode(
      new Map<string, unknown>([
        ['fmt', object.fmt],
        [
          'attStmt',
          new Map<string, unknown>([
            ['x5c', x5c],
            ['receipt', Buffer.from(object.attStmt.receipt)],
          ]),
        ],
        ['authData', Buffer.from(object.authData)],
      ]),
    );
  }

  /** Where each certificate's SubjectPublicKeyInfo starts: from there on lie its key and its extensions. */
  function keyAndExtensions(vector: AttestationVector): { start: number; end: number }[] {
    const object = decode(Buffer.from(vector.attestationObject, 'base64')) as { attStmt: { x5c: Uint8Array[] } };
    return object.attStmt.x5c.map((der) => {
      const raw = Buffer.from(der);
      const spki = new X509Certificate(raw).publicKey.export({ type: 'spki', format: 'der' });
      return { start: raw.indexOf(spki), end: raw.length };
    });
  }

  const attestations = [...vectors.attestations.values()];

  it.each(attestations.map((vector) => [vector.id, vector] as const))(
    '%s: every mutation of a key or extension byte of each certificate is a refusal with a step code',
    async (_id, vector) => {
      const regions = keyAndExtensions(vector);
      for (const region of regions) expect(region.start).toBeGreaterThan(0);
      // The intermediate's EC point prefix (04 → 05), the case that once escaped as a 500.
      const intermediate = regions[1];
      const pointPrefix = intermediate.start + 26;
      const escaped = await verifyAttestation({
        ...vectorInput(vector),
        attestationObject: mutated(vector, 1, pointPrefix, 1),
      });
      expect(escaped.ok).toBe(false);
      await fc.assert(
        fc.asyncProperty(
          fc
            .integer({ min: 0, max: regions.length - 1 })
            .chain((certificate) =>
              fc.tuple(
                fc.constant(certificate),
                fc.integer({ min: regions[certificate].start, max: regions[certificate].end - 1 }),
                fc.integer({ min: 1, max: 255 }),
              ),
            ),
          async ([certificate, offset, xor]) => {
            const result = await verifyAttestation({
              ...vectorInput(vector),
              attestationObject: mutated(vector, certificate, offset, xor),
            });
            // A flipped byte in a signature-covered region can never verify; whatever step refuses
            // it must say so with its own code.
            return result.ok === false && codes.has(result.code);
          },
        ),
        { numRuns: 300, seed: 20_261_124 },
      );
    },
  );
});
