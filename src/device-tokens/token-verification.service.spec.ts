import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import { decodeJwt, SignJWT, type JWTPayload } from 'jose';
import { testConfig } from '../../test/fakes/config.js';
import { FakeDebugTokens } from '../../test/fakes/debug-tokens.js';
import { FakeConsumedTokens, FakeSigningKeys, holdClock, tokenSubject } from '../../test/fakes/device-tokens.js';
import { denySetOver, FakeBlockedDevices } from '../../test/fakes/devices.js';
import { KnownApps } from '../../test/fakes/known-apps.js';
import { apiKeyAuth } from '../../test/fakes/org-auth.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';
import { debugSubject } from '../devices/debug-subject.js';
import { DeviceTokenVerifier } from './device-token-verifier.js';
import { SigningKeysService } from './signing-keys.service.js';
import { TokenService, type MintOptions } from './token.service.js';
import { TokenVerificationService, type VerificationResult } from './token-verification.service.js';

const ORG = '00000000-0000-4000-8000-0000000000a1';
const OTHER_ORG = '00000000-0000-4000-8000-0000000000b2';
const APP = '00000000-0000-4000-8000-000000000001';
const OTHER_APP = '00000000-0000-4000-8000-000000000002';
const INACTIVE_APP = '00000000-0000-4000-8000-000000000003';
const SIBLING_APP = '00000000-0000-4000-8000-000000000004';

/** The reasons README.md documents for POST /api/v1/tokens/verify, and no other. */
const DOCUMENTED_REASONS = [
  'malformed',
  'invalid_signature',
  'expired',
  'not_yet_valid',
  'wrong_organization',
  'app_inactive',
  'device_blocked',
  'debug_token_revoked',
  'already_used',
];

/** The service's signing key, configured (JWT_PRIVATE_KEY) so that no test generates one. */
const SERVICE_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
/** A key the service never held. */
const FOREIGN_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const config = { ...testConfig, jwtPrivateKey: SERVICE_KEY.export({ type: 'pkcs8', format: 'pem' }).toString() };

const refused = (reason: string): VerificationResult => ({ valid: false, claims: null, reason }) as VerificationResult;

async function world() {
  const signingKeys = new FakeSigningKeys();
  const keys = new SigningKeysService(new FakeUnitOfWork().asUnitOfWork(), signingKeys.asRepository(), config);
  await keys.onModuleInit();
  const minter = new TokenService(
    keys,
    config,
    fakeDiscovery(() => []),
  );
  minter.onModuleInit();
  const consumed = new FakeConsumedTokens();
  const devices = new FakeBlockedDevices();
  const debugTokens = new FakeDebugTokens();
  const apps = new KnownApps()
    .add(ORG, APP)
    .add(ORG, SIBLING_APP)
    .add(ORG, INACTIVE_APP, { isActive: false })
    .add(OTHER_ORG, OTHER_APP);
  /** An instance of the service: each has its own verifier (its key and token caches), the tables are shared. */
  const instance = () =>
    new TokenVerificationService(
      consumed.asRepository(),
      new DeviceTokenVerifier(signingKeys.asRepository(), new JwtService()),
      denySetOver(devices, debugTokens),
      apps.asAppsRepository(),
    );
  const service = instance();
  const { kid } = await keys.signingKey();

  /** A token minted after an attestation of `keyId` in `appId` of `organizationId`. */
  const mint = async (
    options: MintOptions & { organizationId?: string; appId?: string; keyId?: string } = {},
  ): Promise<string> => {
    const { organizationId = ORG, appId = APP, keyId = 'key-1', ...mintOptions } = options;
    return (await minter.mint(tokenSubject(organizationId, appId, { subject: { keyId } }), mintOptions)).token;
  };

  /** A token with exactly these claims and header, signed with `key` (the service's by default). */
  const signed = (claims: JWTPayload, header: { kid?: string } = { kid }, key: KeyObject = SERVICE_KEY) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...header }).sign(key);

  /** The claims of a minted token of the caller's app, with `changes` (undefined removes a claim). */
  const claims = (changes: JWTPayload = {}): JWTPayload => {
    const now = Math.floor(Date.now() / 1000);
    const all: JWTPayload = {
      org_id: ORG,
      app_id: APP,
      env: 'production',
      sub: 'key-1',
      iat: now,
      exp: now + 3600,
      jti: randomUUID(),
      ...changes,
    };
    return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
  };

  const verify = (token: string, options: { consume?: boolean; by?: string; on?: TokenVerificationService } = {}) =>
    (options.on ?? service).verify(apiKeyAuth(options.by ?? ORG), { token, consume: options.consume });

  return { service, instance, kid, consumed, devices, debugTokens, mint, signed, claims, verify };
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe('backend verification of a device token (TokenVerificationService, on fakes)', () => {
  it('accepts a token minted for the caller’s app and answers its claims', async () => {
    const { mint, verify } = await world();
    const token = await mint({ keyId: 'device-key' });
    const answer = await verify(token);
    expect(answer).toEqual({ valid: true, claims: decodeJwt(token) });
    expect(answer.claims).toMatchObject({ sub: 'device-key', app_id: APP, org_id: ORG });
  });

  it('accepts a token minted with the app’s own audience and issuer: iss and aud are the tenant’s, not checked', async () => {
    const { verify, signed, claims } = await world();
    const token = await signed(claims({ aud: 'https://api.acme.example', iss: 'https://attest.acme.example' }));
    expect(await verify(token)).toEqual({ valid: true, claims: decodeJwt(token) });
  });

  it('refuses a token whose claims or signature were changed as invalid_signature, and what is no token as malformed', async () => {
    const { mint, verify, signed, claims } = await world();
    const token = await mint();
    const [header, payload, signature] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...decodeJwt(token), org_id: ORG, app_id: APP, risk_score: 0, sub: 'someone-else' }),
    ).toString('base64url');
    const flipped = `${signature.slice(0, -4)}${signature.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const withoutKid = await signed(claims(), {});
    for (const [tampered, reason] of [
      [`${header}.${forged}.${signature}`, 'invalid_signature'],
      [`${header}.${payload}.${flipped}`, 'invalid_signature'],
      [`${header}.${payload}`, 'malformed'],
      ['not a token', 'malformed'],
      [withoutKid, 'malformed'],
    ]) {
      expect(await verify(tampered)).toEqual(refused(reason));
    }
  });

  it('refuses a token signed with a key the service does not hold as invalid_signature, whether its kid names a key of the service or none', async () => {
    const { verify, signed, claims, kid } = await world();
    expect(await verify(await signed(claims(), { kid }, FOREIGN_KEY))).toEqual(refused('invalid_signature'));
    expect(await verify(await signed(claims(), { kid: 'a-kid-nobody-has' }, FOREIGN_KEY))).toEqual(
      refused('invalid_signature'),
    );
    expect(await verify(await signed(claims(), { kid: 'a-kid-nobody-has' }))).toEqual(refused('invalid_signature'));
  });

  it('refuses an expired token and one whose nbf is still ahead, and accepts it once that time has come', async () => {
    const { verify, signed, claims } = await world();
    const now = Math.floor(Date.now() / 1000);
    expect(await verify(await signed(claims({ iat: now - 3600, exp: now - 1 })))).toEqual(refused('expired'));
    const early = await signed(claims({ nbf: now + 60, exp: now + 3600 }));
    expect(await verify(early)).toEqual(refused('not_yet_valid'));
    holdClock().advance(61_000);
    expect((await verify(early)).valid).toBe(true);
  });

  it('refuses as malformed a signed token lacking a claim every minted token has: jti (of at most 200 characters), exp, sub, app_id, org_id', async () => {
    const { verify, signed, claims } = await world();
    expect((await verify(await signed(claims({ jti: 'j'.repeat(200) })))).valid).toBe(true);
    for (const changes of [
      { jti: undefined },
      { jti: '' },
      { jti: 'j'.repeat(201) },
      { exp: undefined },
      { sub: undefined },
      { app_id: undefined },
      { org_id: undefined },
    ]) {
      expect(await verify(await signed(claims(changes)))).toEqual(refused('malformed'));
    }
  });

  it('refuses as wrong_organization another organization’s token, and one naming the caller’s organization for an app it does not own or that does not exist', async () => {
    const { verify, mint, signed, claims } = await world();
    const theirs = await mint({ organizationId: OTHER_ORG, appId: OTHER_APP });
    expect(await verify(theirs)).toEqual(refused('wrong_organization'));
    expect(await verify(await signed(claims({ app_id: OTHER_APP })))).toEqual(refused('wrong_organization'));
    expect(await verify(await signed(claims({ app_id: randomUUID() })))).toEqual(refused('wrong_organization'));
    // Its own organization's backend accepts it.
    expect((await verify(theirs, { by: OTHER_ORG })).valid).toBe(true);
  });

  it('refuses the token of a deactivated app as app_inactive', async () => {
    const { verify, mint } = await world();
    expect(await verify(await mint({ appId: INACTIVE_APP }))).toEqual(refused('app_inactive'));
  });

  it('refuses the token of a device blocked in the token’s app as device_blocked, and accepts it again once unblocked', async () => {
    const { verify, mint, devices } = await world();
    const token = await mint({ keyId: 'stolen' });
    devices.block(SIBLING_APP, 'stolen');
    expect((await verify(token)).valid).toBe(true);
    devices.block(APP, 'stolen');
    expect(await verify(token)).toEqual(refused('device_blocked'));
    expect((await verify(await mint({ keyId: 'another-device' }))).valid).toBe(true);
    devices.unblock(APP, 'stolen');
    expect((await verify(token)).valid).toBe(true);
  });

  it('refuses a token minted from a debug token once it is revoked as debug_token_revoked, not those of the app’s other debug tokens', async () => {
    const { verify, mint, debugTokens } = await world();
    const insert = (name: string) =>
      debugTokens.insert(ORG, APP, { name, prefix: 'dbg_', hash: name, createdBy: null, expiresAt: null });
    const [ci, simulator] = [await insert('CI'), await insert('Simulator')];
    const fromCi = await mint({ debug: true, keyId: debugSubject(ci.id, 'runner-7') });
    const fromSimulator = await mint({ debug: true, keyId: debugSubject(simulator.id, undefined) });
    expect(await verify(fromCi)).toMatchObject({ valid: true, claims: { env: 'debug', debug: true } });
    await debugTokens.revoke(ORG, APP, ci.id);
    expect(await verify(fromCi)).toEqual(refused('debug_token_revoked'));
    expect((await verify(fromSimulator)).valid).toBe(true);
  });

  it('uses a token up: the consume that records it is valid, every later consume or verification answers already_used', async () => {
    const { verify, mint, consumed } = await world();
    const token = await mint({ limitedUse: true });
    expect(await verify(token, { consume: true })).toEqual({ valid: true, claims: decodeJwt(token) });
    expect(await verify(token, { consume: true })).toEqual(refused('already_used'));
    expect(await verify(token)).toEqual(refused('already_used'));
    // Remembered until the token itself expires (the hourly job forgets it then).
    const { jti, exp } = decodeJwt(token);
    expect(consumed.rows.get(jti!)?.expiresAtS).toBe(exp);
  });

  it('leaves a token usable when the backend only verifies it', async () => {
    const { verify, mint } = await world();
    const token = await mint();
    expect((await verify(token)).valid).toBe(true);
    expect((await verify(token)).valid).toBe(true);
    expect((await verify(token, { consume: true })).valid).toBe(true);
  });

  it('lets exactly one of concurrent consumes of a token win, across instances', async () => {
    const { verify, mint, instance } = await world();
    const token = await mint({ limitedUse: true });
    const [first, peer] = [instance(), instance()];
    const answers = await Promise.all([
      verify(token, { consume: true, on: first }),
      verify(token, { consume: true, on: peer }),
      verify(token, { consume: true, on: first }),
      verify(token, { consume: true, on: peer }),
    ]);
    expect(answers.filter((answer) => answer.valid)).toHaveLength(1);
    expect(answers.filter((answer) => !answer.valid && answer.reason === 'already_used')).toHaveLength(3);
    for (const on of [first, peer]) expect(await verify(token, { on })).toEqual(refused('already_used'));
  });

  it('does not use a token up when its consume is refused: another organization’s backend cannot spend it, nor can a blocked device’s holder', async () => {
    const { verify, mint, devices } = await world();
    const token = await mint({ keyId: 'device-1' });
    expect(await verify(token, { consume: true, by: OTHER_ORG })).toEqual(refused('wrong_organization'));
    devices.block(APP, 'device-1');
    expect(await verify(token, { consume: true })).toEqual(refused('device_blocked'));
    devices.unblock(APP, 'device-1');
    expect((await verify(token, { consume: true })).valid).toBe(true);
  });

  it('tells another organization’s backend nothing of the token’s app or device: deactivated, blocked or used, it answers wrong_organization', async () => {
    const { verify, mint, devices } = await world();
    const used = await mint({ keyId: 'used' });
    await verify(used, { consume: true });
    const blocked = await mint({ keyId: 'blocked' });
    devices.block(APP, 'blocked');
    const inactive = await mint({ appId: INACTIVE_APP });
    for (const token of [used, blocked, inactive]) {
      expect(await verify(token, { by: OTHER_ORG })).toEqual(refused('wrong_organization'));
    }
  });

  it('answers every refusal as valid false, claims null and one of the documented reasons, nothing more', async () => {
    const { verify, mint, signed, claims, devices } = await world();
    const now = Math.floor(Date.now() / 1000);
    const used = await mint();
    await verify(used, { consume: true });
    devices.block(APP, 'blocked');
    const answers = await Promise.all(
      [
        Promise.resolve('x.y'),
        signed(claims(), { kid: 'unknown' }),
        signed(claims({ iat: now - 7200, exp: now - 3600 })),
        signed(claims({ nbf: now + 3600 })),
        mint({ organizationId: OTHER_ORG, appId: OTHER_APP }),
        mint({ appId: INACTIVE_APP }),
        mint({ keyId: 'blocked' }),
        Promise.resolve(used),
      ].map(async (token) => verify(await token)),
    );
    for (const answer of answers) {
      expect(Object.keys(answer).sort()).toEqual(['claims', 'reason', 'valid']);
      expect(answer).toEqual(refused(answer.valid ? 'unexpected valid' : answer.reason));
      expect(DOCUMENTED_REASONS).toContain(answer.valid ? 'valid' : answer.reason);
    }
    expect(new Set(answers.map((answer) => (answer.valid ? 'valid' : answer.reason))).size).toBe(answers.length);
  });
});
