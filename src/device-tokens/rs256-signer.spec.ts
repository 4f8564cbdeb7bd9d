import { describe, expect, it } from '@jest/globals';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import { signRs256Jwt } from './rs256-signer.js';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwt = new JwtService();

describe('signRs256Jwt', () => {
  it('writes the bytes @nestjs/jwt wrote for the same token, and @nestjs/jwt verifies them', async () => {
    const claims = { plan: 'gold', ünïcode: 'café ✓', subscription: { status: 'none' }, org_id: 'o', risk_score: 0 };
    const old = jwt.sign(
      { ...claims, iat: 1_700_000_000, exp: 1_700_003_600 },
      {
        algorithm: 'RS256',
        privateKey,
        keyid: 'kid-1',
        subject: 'key-id',
        issuer: 'https://issuer.example',
        audience: 'com.example.app',
        jwtid: 'jti-1',
      },
    );
    const signed = await signRs256Jwt(
      'kid-1',
      {
        ...claims,
        iat: 1_700_000_000,
        exp: 1_700_003_600,
        aud: 'com.example.app',
        iss: 'https://issuer.example',
        sub: 'key-id',
        jti: 'jti-1',
      },
      privateKey,
    );
    expect(signed).toBe(old);
    const verified = jwt.verify<Record<string, unknown>>(signed, {
      algorithms: ['RS256'],
      publicKey: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString(),
      ignoreExpiration: true,
    });
    expect(verified).toMatchObject({ ...claims, sub: 'key-id', jti: 'jti-1', aud: 'com.example.app' });
    expect(jwt.decode(signed, { complete: true })?.header).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
  });

  it('refuses an RSA key shorter than 2048 bits, as jsonwebtoken did', async () => {
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    await expect(signRs256Jwt('kid', { sub: 'x' }, short)).rejects.toThrow('2048');
  });

  it('refuses what jsonwebtoken refused: a key that is not RSA, an RSA-PSS key, a date that is not a number', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(signRs256Jwt('kid', { sub: 'x' }, ec)).rejects.toThrow('RSA private key');
    const pss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 }).privateKey;
    await expect(signRs256Jwt('kid', { sub: 'x' }, pss)).rejects.toThrow('RSA private key');
    await expect(signRs256Jwt('kid', { sub: 'x', exp: Number.NaN }, privateKey)).rejects.toThrow('"exp"');
    await expect(signRs256Jwt('kid', { sub: 'x', iat: 1.5 }, privateKey)).rejects.toThrow('"iat"');
  });
});
