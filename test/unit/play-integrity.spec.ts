import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { fabricateAndroidApp, type FabricatedAndroidApp } from '../support/play-integrity-fabricator.js';
import {
  DEFAULT_ANDROID_POLICY,
  decryptionKeyFromBase64,
  normalizeCertificateDigest,
  requestHashOf,
  verificationKeyFromBase64,
  verifyIntegrityToken,
  type AndroidIdentity,
  type AndroidPolicy,
} from '../../src/attestation/play-integrity/play-integrity.js';

const challenge = randomBytes(32).toString('base64');
const now = Date.now();

function identityOf(app: FabricatedAndroidApp): AndroidIdentity {
  return {
    packageName: app.packageName,
    certificateSha256Digests: [app.certificateSha256Digest],
    decryptionKey: decryptionKeyFromBase64(app.decryptionKeyBase64),
    verificationKey: verificationKeyFromBase64(app.verificationKeyBase64),
  };
}

const app = fabricateAndroidApp('com.acme.android');
const verifyFor = (token: string, policy: AndroidPolicy = DEFAULT_ANDROID_POLICY, at = now) =>
  verifyIntegrityToken(token, { identity: identityOf(app), policy, challenge, now: at });
const codeOf = async (token: string, policy?: AndroidPolicy, at?: number) => {
  const outcome = await verifyFor(token, policy, at);
  return outcome.ok ? 'ok' : outcome.code;
};

describe('Play Integrity verdicts, verified locally', () => {
  it('accepts a standard request bound by the request hash, and a classic one by the nonce', async () => {
    const standard = await verifyFor(await app.mint({ challenge, timestampMillis: now - 1000 }));
    expect(standard).toMatchObject({
      ok: true,
      verdict: { packageName: 'com.acme.android', requestKind: 'standard', deviceVerdicts: ['MEETS_DEVICE_INTEGRITY'] },
    });
    const classic = await verifyFor(await app.mint({ challenge, kind: 'classic' }));
    expect(classic).toMatchObject({ ok: true, verdict: { requestKind: 'classic' } });
  });

  it('refuses a token that is not a compact JWE, or too large, before any cryptography', async () => {
    expect(await codeOf('not.a.token')).toBe('integrity_token_malformed');
    expect(await codeOf('a'.repeat(20_000))).toBe('integrity_token_malformed');
    expect(await codeOf('')).toBe('integrity_token_malformed');
  });

  it("refuses another app's token, a tampered ciphertext and a token under another algorithm as integrity_decrypt_failed", async () => {
    const other = fabricateAndroidApp('com.acme.android');
    expect(await codeOf(await other.mint({ challenge }))).toBe('integrity_decrypt_failed');
    const parts = (await app.mint({ challenge })).split('.');
    const flipped = Buffer.from(parts[3], 'base64url');
    flipped[0] ^= 1;
    parts[3] = flipped.toString('base64url');
    expect(await codeOf(parts.join('.'))).toBe('integrity_decrypt_failed');
    const tag = Buffer.from(parts[4], 'base64url');
    tag[0] ^= 1;
    expect(await codeOf([...parts.slice(0, 4), tag.toString('base64url')].join('.'))).toBe('integrity_decrypt_failed');
    // The right key, but direct encryption with another content algorithm: refused by the allow-list.
    const key = decryptionKeyFromBase64(app.decryptionKeyBase64);
    const direct = await new CompactEncrypt(new TextEncoder().encode('x'))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .encrypt(key);
    expect(await codeOf(direct)).toBe('integrity_decrypt_failed');
  });

  it('refuses a compressed token (zip: DEF), which Play never sends, before inflating anything', async () => {
    const key = decryptionKeyFromBase64(app.decryptionKeyBase64);
    const { plaintext } = await compactDecrypt(await app.mint({ challenge }), key);
    const compressed = await new CompactEncrypt(plaintext)
      .setProtectedHeader({ alg: 'A256KW', enc: 'A256GCM', zip: 'DEF' })
      .encrypt(key);
    expect(await codeOf(compressed)).toBe('integrity_decrypt_failed');
  });

  it('refuses a verdict signed by another key or with another algorithm as integrity_signature_invalid', async () => {
    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(await codeOf(await app.mint({ challenge, signingKey: forger }))).toBe('integrity_signature_invalid');
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
    expect(await codeOf(await app.mint({ challenge, signingKey: p384, signingAlgorithm: 'ES384' }))).toBe(
      'integrity_signature_invalid',
    );
    expect(await codeOf(await app.mint({ challenge, rawPayload: 'eyJhbGciOiJub25lIn0.e30.' }))).toBe(
      'integrity_signature_invalid',
    );
  });

  it('refuses a verdict for another package, another challenge or another signing certificate', async () => {
    expect(await codeOf(await app.mint({ challenge, requestPackageName: 'com.evil' }))).toBe('package_mismatch');
    expect(await codeOf(await app.mint({ challenge, packageName: 'com.evil' }))).toBe('package_mismatch');
    expect(await codeOf(await app.mint({ challenge, requestHash: requestHashOf('another challenge') }))).toBe(
      'request_hash_mismatch',
    );
    expect(await codeOf(await app.mint({ challenge, kind: 'classic', nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }))).toBe(
      'request_hash_mismatch',
    );
    expect(
      await codeOf(await app.mint({ challenge, certificateSha256Digest: [Buffer.alloc(32, 7).toString('base64url')] })),
    ).toBe('certificate_mismatch');
  });

  it('refuses verdicts older than 5 minutes or dated more than a minute ahead as verdict_stale', async () => {
    expect(await codeOf(await app.mint({ challenge, timestampMillis: now - 5 * 60_000 - 1 }))).toBe('verdict_stale');
    expect(await codeOf(await app.mint({ challenge, timestampMillis: now + 60_001 }))).toBe('verdict_stale');
    expect(await codeOf(await app.mint({ challenge, timestampMillis: now - 4 * 60_000 }))).toBe('ok');
  });

  it('applies the app policy to recognition, licensing and device labels', async () => {
    expect(await codeOf(await app.mint({ challenge, appRecognitionVerdict: 'UNRECOGNIZED_VERSION' }))).toBe(
      'app_unrecognized',
    );
    const lenient: AndroidPolicy = { ...DEFAULT_ANDROID_POLICY, refuseUnrecognizedVersion: false };
    expect(await codeOf(await app.mint({ challenge, appRecognitionVerdict: 'UNRECOGNIZED_VERSION' }), lenient)).toBe(
      'ok',
    );
    expect(await codeOf(await app.mint({ challenge, appRecognitionVerdict: 'UNEVALUATED' }), lenient)).toBe(
      'app_unrecognized',
    );
    const sideloaded = await app.mint({ challenge, appLicensingVerdict: 'UNLICENSED' });
    expect(await codeOf(sideloaded)).toBe('ok');
    expect(await codeOf(sideloaded, { ...DEFAULT_ANDROID_POLICY, refuseUnlicensed: true })).toBe('app_unlicensed');
    expect(await codeOf(await app.mint({ challenge, deviceVerdicts: [] }))).toBe('device_integrity_failed');
    const basicOnly = await app.mint({ challenge, deviceVerdicts: ['MEETS_BASIC_INTEGRITY'] });
    expect(await codeOf(basicOnly)).toBe('device_integrity_failed');
    expect(
      await codeOf(basicOnly, { ...DEFAULT_ANDROID_POLICY, acceptedDeviceVerdicts: ['MEETS_BASIC_INTEGRITY'] }),
    ).toBe('ok');
  });

  it('refuses a signed payload that is not a verdict as integrity_payload_invalid, never throwing', async () => {
    const { CompactSign } = await import('jose');
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const other = { ...identityOf(app), verificationKey: key.publicKey };
    for (const body of [
      '[]',
      '{"requestDetails":{}}',
      'not json',
      '{"requestDetails":{"requestPackageName":"x","timestampMillis":"soon"}}',
    ]) {
      const jws = await new CompactSign(new TextEncoder().encode(body))
        .setProtectedHeader({ alg: 'ES256' })
        .sign(key.privateKey);
      const outcome = await verifyIntegrityToken(await app.mint({ challenge, rawPayload: jws }), {
        identity: other,
        policy: DEFAULT_ANDROID_POLICY,
        challenge,
        now,
      });
      expect(outcome).toMatchObject({ ok: false, code: 'integrity_payload_invalid' });
    }
  });

  it('reads certificate digests as Play Console shows them (hex with colons) or base64', () => {
    const digest = Buffer.alloc(32, 0xab);
    const hex = [...digest]
      .map((byte) => byte.toString(16).padStart(2, '0'))
      .join(':')
      .toUpperCase();
    expect(normalizeCertificateDigest(hex)).toBe(digest.toString('base64url'));
    expect(normalizeCertificateDigest(digest.toString('base64'))).toBe(digest.toString('base64url'));
    expect(() => normalizeCertificateDigest('abcd')).toThrow('32 bytes');
    expect(() =>
      verificationKeyFromBase64(
        generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
      ),
    ).toThrow('P-256');
    expect(() => decryptionKeyFromBase64(Buffer.alloc(16).toString('base64'))).toThrow('32 bytes');
  });
});
