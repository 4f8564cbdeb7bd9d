import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { testConfig } from '../../test/fakes/config.js';
import { FakeSigningKeys } from '../../test/fakes/device-tokens.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { SigningKeysService } from './signing-keys.service.js';

async function signingKeys(): Promise<SigningKeysService> {
  const keys = new SigningKeysService(
    new FakeUnitOfWork().asUnitOfWork(),
    new FakeSigningKeys().asRepository(),
    testConfig,
  );
  await keys.onModuleInit();
  return keys;
}

describe("readiness's token-signing cycle (SigningKeysService.selfCheck)", () => {
  it('signs and verifies with the key tokens are minted with, and reads that key through the signing keys', async () => {
    const keys = await signingKeys();
    let asked = 0;
    const signingKey = keys.signingKey.bind(keys);
    keys.signingKey = () => (asked++, signingKey());
    await expect(keys.selfCheck()).resolves.toBeUndefined();
    expect(asked).toBe(1);
  });

  it('fails when the signing key cannot sign: a key that is not an RSA private key, or no key at all', async () => {
    const keys = await signingKeys();
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    keys.signingKey = () => Promise.resolve({ kid: 'k', privateKey: ec });
    await expect(keys.selfCheck()).rejects.toThrow('RS256 needs an RSA private key');
    keys.signingKey = () => Promise.reject(new Error('no key'));
    await expect(keys.selfCheck()).rejects.toThrow('no key');
  });
});
