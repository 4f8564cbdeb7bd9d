import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { testConfig } from '../../test/fakes/config.js';
import { FakeSigningKeys, holdClock, tokenSubject } from '../../test/fakes/device-tokens.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';
import { DEFAULT_JWT_CONFIGURATION } from '../apps/app.entity.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { SigningKeysService } from './signing-keys.service.js';
import {
  ContributesTokenClaims,
  TokenService,
  type MintOptions,
  type TokenClaimsContributor,
  type TokenSubject,
} from './token.service.js';

const ORG = '00000000-0000-4000-8000-0000000000a1';
const APP = '00000000-0000-4000-8000-000000000001';

/** The service's signing key (JWT_PRIVATE_KEY), generated here so the test checks signatures with its public half. */
const SIGNING_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const PUBLIC_KEY = createPublicKey(SIGNING_KEY);
const config = { ...testConfig, jwtPrivateKey: SIGNING_KEY.export({ type: 'pkcs8', format: 'pem' }).toString() };

/** The claims feature as it contributes to tokens: fixed custom claims and subscription, whatever the subject. */
@ContributesTokenClaims()
class Contributor implements TokenClaimsContributor {
  readonly subjects: TokenSubject[] = [];
  constructor(
    private readonly custom: Record<string, unknown>,
    private readonly subscription: Record<string, unknown> = { status: 'active', plan: 'gold' },
  ) {}
  customClaims(subject: TokenSubject) {
    this.subjects.push(subject);
    return Promise.resolve(this.custom);
  }
  subscriptionClaim() {
    return Promise.resolve(this.subscription);
  }
}

async function world(contributors: object[] = []) {
  const keys = new SigningKeysService(
    new FakeUnitOfWork().asUnitOfWork(),
    new FakeSigningKeys().asRepository(),
    config,
  );
  await keys.onModuleInit();
  const service = new TokenService(
    keys,
    config,
    fakeDiscovery(() => contributors),
  );
  service.onModuleInit();
  /** A token minted about a device of the app, its claims verified with the generated key's public half. */
  const mint = async (
    overrides: { tenant?: Partial<Tenant>; subject?: Partial<Omit<TokenSubject, 'tenant'>> } = {},
    options: MintOptions = {},
  ) => {
    const minted = await service.mint(tokenSubject(ORG, APP, overrides), options);
    const { payload, protectedHeader } = await jwtVerify(minted.token, PUBLIC_KEY, {
      algorithms: ['RS256'],
      currentDate: new Date(Date.now()),
    });
    return { minted, claims: payload, header: protectedHeader };
  };
  return { keys, service, mint };
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('minting device tokens (TokenService, on fakes)', () => {
  it('signs with the current key in RS256, its kid in the header, and gives every token its own jti', async () => {
    const { keys, mint } = await world();
    const { minted, header, claims } = await mint();
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: (await keys.signingKey()).kid });
    expect(minted.tokenType).toBe('Bearer');
    const other = await mint();
    expect(claims.jti).toEqual(expect.any(String));
    expect(other.claims.jti).not.toBe(claims.jti);
    const foreign = createPublicKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    await expect(jwtVerify(minted.token, foreign)).rejects.toThrow('signature verification failed');
  });

  it('carries the device’s app, organization, environment and risk, the base URL as issuer, the Bundle ID as audience and the key as subject', async () => {
    const { mint } = await world();
    const { claims, minted } = await mint({
      subject: { keyId: 'device-key', riskScore: 35, environment: 'development' },
    });
    expect(claims).toMatchObject({
      org_id: ORG,
      app_id: APP,
      env: 'development',
      risk_score: 35,
      iss: testConfig.baseUrl,
      aud: 'com.example.notes',
      sub: 'device-key',
      bundle_id: 'com.example.notes',
      team_id: 'ABCDE12345',
      app_name: 'Notes',
    });
    expect(minted.riskScore).toBe(35);
    expect(claims).not.toHaveProperty('debug');
    expect(claims).not.toHaveProperty('limited_use');
  });

  it('carries the contributor’s custom claims and subscription, computed for the device minted about', async () => {
    const contributor = new Contributor({ plan_tier: 'pro', beta: true });
    const { mint } = await world([contributor]);
    const { claims } = await mint({ subject: { keyId: 'device-key' } });
    expect(claims).toMatchObject({ plan_tier: 'pro', beta: true, subscription: { status: 'active', plan: 'gold' } });
    expect(contributor.subjects.map((subject) => subject.keyId)).toEqual(['device-key']);
  });

  it('never lets a custom claim take a name the service sets', async () => {
    const { mint } = await world([
      new Contributor({
        org_id: 'someone-else',
        app_id: 'another-app',
        sub: 'forged',
        exp: 9_999_999_999,
        risk_score: 0,
        env: 'production',
        debug: false,
        limited_use: false,
        subscription: { status: 'active' },
        kept: 'yes',
      }),
    ]);
    const { claims } = await mint({ subject: { keyId: 'device-key', riskScore: 70 } }, { debug: true });
    expect(claims).toMatchObject({
      org_id: ORG,
      app_id: APP,
      sub: 'device-key',
      risk_score: 70,
      env: 'debug',
      debug: true,
      subscription: { status: 'active', plan: 'gold' },
      kept: 'yes',
    });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims).not.toHaveProperty('limited_use');
  });

  it('without a contributor mints the base claims with subscription none; two contributors fail the start', async () => {
    const { claims } = await (await world()).mint();
    expect(claims.subscription).toEqual({ status: 'none' });
    expect(Object.keys(claims).sort()).toEqual(
      ['org_id', 'app_id', 'env', 'risk_score', 'subscription', 'bundle_id', 'team_id', 'app_name']
        .concat(['iat', 'exp', 'aud', 'iss', 'sub', 'jti'])
        .sort(),
    );
    await expect(world([new Contributor({}), new Contributor({})])).rejects.toThrow(
      'More than one provider contributes token claims',
    );
  });

  it('lives an hour, or the app’s override, and a limited-use token five minutes with limited_use true; expiresAt tells when', async () => {
    holdClock(Date.parse('2026-03-01T12:00:00.400Z'));
    const { mint } = await world();
    const issuedAt = Date.parse('2026-03-01T12:00:00Z') / 1000;
    const usual = await mint();
    expect(usual.claims).toMatchObject({ iat: issuedAt, exp: issuedAt + 3600 });
    expect(usual.minted.expiresAt).toBe('2026-03-01T13:00:00.000Z');
    const overridden = await mint({
      tenant: { jwtConfiguration: { ...DEFAULT_JWT_CONFIGURATION, overrideExpirationTime: 86_400 } },
    });
    expect(overridden.claims.exp).toBe(issuedAt + 86_400);
    const limited = await mint(
      { tenant: { jwtConfiguration: { ...DEFAULT_JWT_CONFIGURATION, overrideExpirationTime: 86_400 } } },
      { limitedUse: true },
    );
    expect(limited.claims).toMatchObject({ exp: issuedAt + 300, limited_use: true });
    expect(limited.minted.expiresAt).toBe('2026-03-01T12:05:00.000Z');
  });

  it('marks a token minted from a debug token env debug and debug true, and never lets it outlive its debug token', async () => {
    const clock = holdClock(Date.parse('2026-03-01T12:00:00Z'));
    const { mint } = await world();
    const issuedAt = Date.now() / 1000;
    const debug = await mint({}, { debug: true, notAfter: new Date(Date.now() + 600_000) });
    expect(debug.claims).toMatchObject({ env: 'debug', debug: true, exp: issuedAt + 600 });
    const later = await mint({}, { debug: true, notAfter: new Date(Date.now() + 7 * 86_400_000) });
    expect(later.claims.exp).toBe(issuedAt + 3600);
    clock.advance(1_000);
    const limited = await mint({}, { debug: true, limitedUse: true, notAfter: new Date(Date.now() + 60_000) });
    expect(limited.claims).toMatchObject({ limited_use: true, exp: issuedAt + 1 + 60 });
  });

  it('follows the app’s token settings: custom audience and issuer, app metadata left out, and an Android app’s package name as audience', async () => {
    const { mint } = await world();
    const custom = await mint({
      tenant: {
        jwtConfiguration: {
          ...DEFAULT_JWT_CONFIGURATION,
          customAudience: 'https://api.acme.example',
          customIssuer: 'https://attest.acme.example',
          includeAppMetadata: false,
        },
      },
    });
    expect(custom.claims).toMatchObject({ aud: 'https://api.acme.example', iss: 'https://attest.acme.example' });
    for (const name of ['bundle_id', 'team_id', 'app_name']) expect(custom.claims).not.toHaveProperty(name);
    const android = await mint({ tenant: { bundleId: null, teamId: null, packageName: 'com.acme.android' } });
    expect(android.claims).toMatchObject({ aud: 'com.acme.android', app_name: 'Notes' });
    expect(android.claims).not.toHaveProperty('bundle_id');
    expect(android.claims).not.toHaveProperty('team_id');
    expect(decodeJwt(android.minted.token).aud).toBe('com.acme.android');
    expect(decodeProtectedHeader(android.minted.token).alg).toBe('RS256');
  });
});
