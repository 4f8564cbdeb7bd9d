import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, exportJWK, jwtVerify } from 'jose';
import { testConfig } from '../../test/fakes/config.js';
import { FakeSigningKeys, holdClock, tokenSubject } from '../../test/fakes/device-tokens.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';
import type { AppConfig } from '../config/app-config.js';
import { DeviceTokenVerifier } from './device-token-verifier.js';
import { RETIRED_KEY_GRACE_MS, SigningKeysService } from './signing-keys.service.js';
import { TokenService } from './token.service.js';

const ORG = '00000000-0000-4000-8000-0000000000a1';
const APP = '00000000-0000-4000-8000-000000000001';
const DAY_MS = 86_400_000;

/** The signing keys of every instance of the service, and how each instance starts over them. */
function world() {
  const store = new FakeSigningKeys();
  /** An instance starting (onModuleInit), with `config` (JWT_PRIVATE_KEY or not). */
  const start = async (config: AppConfig = testConfig) => {
    const keys = new SigningKeysService(new FakeUnitOfWork().asUnitOfWork(), store.asRepository(), config);
    await keys.onModuleInit();
    const tokens = new TokenService(
      keys,
      config,
      fakeDiscovery(() => []),
    );
    tokens.onModuleInit();
    const mint = async () => (await tokens.mint(tokenSubject(ORG, APP))).token;
    return { keys, mint };
  };
  /** A verifier that has read no key yet, as on an instance just started. */
  const verifier = () => new DeviceTokenVerifier(store.asRepository(), new JwtService());
  return { store, start, verifier };
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

afterEach(() => {
  jest.restoreAllMocks();
});

describe('device-token signing keys (SigningKeysService, on fakes)', () => {
  it('generates a key on the first start, and every instance started after it signs with that key', async () => {
    const { store, start } = world();
    const first = await start();
    const second = await start();
    expect(store.rows).toHaveLength(1);
    const kid = (await first.keys.signingKey()).kid;
    expect((await second.keys.signingKey()).kid).toBe(kid);
    expect(kidOf(await second.mint())).toBe(kid);
  });

  it('publishes the current key’s public half only, as an RS256 signing key named by its kid', async () => {
    const { start } = world();
    const { keys, mint } = await start();
    const { keys: published } = await keys.jwks();
    expect(published).toEqual([
      {
        kty: 'RSA',
        n: expect.any(String),
        e: 'AQAB',
        kid: (await keys.signingKey()).kid,
        alg: 'RS256',
        use: 'sig',
      },
    ]);
    const { payload } = await jwtVerify(await mint(), createLocalJWKSet({ keys: published }), {
      algorithms: ['RS256'],
    });
    expect(payload).toMatchObject({ org_id: ORG, app_id: APP });
  });

  it('rotates to a new current key: new tokens carry its kid, the JWKS lists it first and the previous key after it, and tokens of both verify', async () => {
    const { start, verifier } = world();
    const { keys, mint } = await start();
    const before = await mint();
    const previous = kidOf(before);
    const kid = await keys.rotate();
    expect(kid).not.toBe(previous);
    expect((await keys.signingKey()).kid).toBe(kid);
    const after = await mint();
    expect(kidOf(after)).toBe(kid);
    const { keys: published } = await keys.jwks();
    expect(published.map((key) => key.kid)).toEqual([kid, previous]);
    const fresh = verifier();
    for (const token of [before, after]) {
      expect((await fresh.inspect(token)).ok).toBe(true);
      await expect(jwtVerify(token, createLocalJWKSet({ keys: published }))).resolves.toBeDefined();
    }
  });

  it('keeps a retired key in the JWKS for 31 days, longer than any token lives, and drops it after', async () => {
    const { start } = world();
    const clock = holdClock();
    const { keys } = await start();
    const previous = (await keys.signingKey()).kid;
    const kid = await keys.rotate();
    clock.advance(RETIRED_KEY_GRACE_MS - 1_000);
    expect(RETIRED_KEY_GRACE_MS).toBeGreaterThan(30 * DAY_MS);
    expect((await keys.jwks()).keys.map((key) => key.kid)).toEqual([kid, previous]);
    clock.advance(2_000);
    expect((await keys.jwks()).keys.map((key) => key.kid)).toEqual([kid]);
  });

  it('signs with a key rotated on another instance once a minute has passed, with the previous one until then', async () => {
    const { start } = world();
    const clock = holdClock();
    const here = await start();
    const elsewhere = await start();
    const previous = kidOf(await here.mint());
    const kid = await elsewhere.keys.rotate();
    clock.advance(30_000);
    expect(kidOf(await here.mint())).toBe(previous);
    clock.advance(31_000);
    expect(kidOf(await here.mint())).toBe(kid);
  });

  it('makes a configured JWT_PRIVATE_KEY current, named by its RFC 7638 thumbprint, and keeps publishing the key it replaced', async () => {
    const { start, verifier } = world();
    const generated = await start();
    const earlier = await generated.mint();
    const configured = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const pem = configured.export({ type: 'pkcs8', format: 'pem' }).toString();
    const restarted = await start({ ...testConfig, jwtPrivateKey: pem });
    const thumbprint = await calculateJwkThumbprint(await exportJWK(createPublicKey(configured)));
    expect((await restarted.keys.signingKey()).kid).toBe(thumbprint);
    const token = await restarted.mint();
    await expect(jwtVerify(token, createPublicKey(configured), { algorithms: ['RS256'] })).resolves.toBeDefined();
    expect((await restarted.keys.jwks()).keys.map((key) => key.kid)).toEqual([thumbprint, kidOf(earlier)]);
    expect((await verifier().inspect(earlier)).ok).toBe(true);
    // Started again with the same key: nothing changes.
    const again = await start({ ...testConfig, jwtPrivateKey: pem });
    expect((await again.keys.jwks()).keys.map((key) => key.kid)).toEqual([thumbprint, kidOf(earlier)]);
  });
});

describe('the device-token verifier’s keys and memory (DeviceTokenVerifier, on fakes)', () => {
  it('verifies tokens of a key rotated in on another instance, reading the keys again at most every ten seconds', async () => {
    const { store, start, verifier } = world();
    const clock = holdClock();
    const here = verifier();
    const elsewhere = await start();
    expect((await here.inspect(await elsewhere.mint())).ok).toBe(true);
    expect(store.publicKeyReads).toBe(1);
    await elsewhere.keys.rotate();
    const rotated = await elsewhere.mint();
    // Unknown kids within ten seconds of the last read (a rotation, or garbage) read nothing.
    clock.advance(5_000);
    expect(await here.inspect(rotated)).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(store.publicKeyReads).toBe(1);
    clock.advance(6_000);
    expect((await here.inspect(rotated)).ok).toBe(true);
    expect(store.publicKeyReads).toBe(2);
  });

  it('stops verifying a rotated-out key when it leaves the JWKS, also where it was read while current: a leaked key mints nothing after', async () => {
    const { store, start, verifier } = world();
    const clock = holdClock();
    const here = verifier();
    const elsewhere = await start();
    const old = kidOf(await elsewhere.mint());
    expect((await here.inspect(await elsewhere.mint())).ok).toBe(true);
    await elsewhere.keys.rotate();
    // Whoever holds the old private key signs fresh tokens with it.
    const leakedPem = store.rows.find((row) => row.kid === old)!.privateKeyPem;
    const forge = () =>
      new JwtService().sign(
        { sub: 'forged-key', app_id: APP, org_id: ORG },
        { privateKey: leakedPem, algorithm: 'RS256', keyid: old, expiresIn: 3600 },
      );
    // Within the grace the JWKS still lists the key, and it verifies (tokens it signed may live on).
    clock.advance(DAY_MS);
    expect((await here.inspect(forge())).ok).toBe(true);
    clock.advance(RETIRED_KEY_GRACE_MS);
    expect((await elsewhere.keys.jwks()).keys.map((key) => key.kid)).not.toContain(old);
    expect(await here.inspect(forge())).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(await verifier().inspect(forge())).toEqual({ ok: false, reason: 'invalid_signature' });
  });

  it('keeps verifying with the keys it holds while the database cannot be read, and reads them once at a time', async () => {
    const { store, start, verifier } = world();
    const clock = holdClock();
    const elsewhere = await start();
    const here = verifier();
    // Fresh instance, several requests at once: one read, and none of them refused.
    const first = await Promise.all([1, 2, 3].map(async () => here.inspect(await elsewhere.mint())));
    expect(first.every((answer) => answer.ok)).toBe(true);
    expect(store.publicKeyReads).toBe(1);
    store.publicKeys = () => Promise.reject(new Error('connect ECONNREFUSED'));
    for (const wait of [61_000, 11 * 60_000]) {
      clock.advance(wait);
      expect((await here.inspect(await elsewhere.mint())).ok).toBe(true);
    }
  });

  it('remembers a verified token only until its exp: shown again after, it is refused as expired', async () => {
    const { start, verifier } = world();
    const clock = holdClock();
    const { mint } = await start();
    const here = verifier();
    const token = await mint();
    expect((await here.verify(token))?.org_id).toBe(ORG);
    clock.advance(3_599_000);
    expect((await here.verify(token))?.org_id).toBe(ORG);
    clock.advance(2_000);
    expect(await here.inspect(token)).toEqual({ ok: false, reason: 'expired' });
    expect(await here.verify(token)).toBeNull();
  });
});
