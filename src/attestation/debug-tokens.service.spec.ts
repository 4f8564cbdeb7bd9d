import { describe, expect, it } from '@jest/globals';
import type { Tenant } from '../apps/tenant-resolver.js';
import { sha256Hex } from '../common/crypto.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import type { DenySet, Revocation } from '../devices/deny-set.js';
import type { DevicesRepository } from '../devices/devices.repository.js';
import type { TokenRevocationsRepository } from '../devices/token-revocations.repository.js';
import type { MintOptions, TokenService, TokenSubject } from '../device-tokens/token.service.js';
import { fakeAudit } from '../../test/fakes/audit.js';
import { FakeDebugTokens } from '../../test/fakes/debug-tokens.js';
import { KnownApps } from '../../test/fakes/known-apps.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { refusalCode } from '../../test/fakes/refusal.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { DebugTokensService, MAX_LIVE_DEBUG_TOKENS } from './debug-tokens.service.js';

const ORG = '00000000-0000-4000-8000-0000000000a1';
const OTHER_ORG = '00000000-0000-4000-8000-0000000000b2';
const APP = '00000000-0000-4000-8000-000000000001';
const OTHER_APP = '00000000-0000-4000-8000-000000000002';

function world() {
  const uow = new FakeUnitOfWork();
  const tokens = new FakeDebugTokens();
  const { audit, log } = fakeAudit();
  const announced: Revocation[] = [];
  const noted: string[] = [];
  const minted: { subject: TokenSubject; options: MintOptions }[] = [];
  const exchanges: string[] = [];
  const service = new DebugTokensService(
    uow as unknown as UnitOfWork,
    tokens.asRepository(),
    {
      announce: (revocation: Revocation) => Promise.resolve(void announced.push(revocation)),
    } as unknown as TokenRevocationsRepository,
    audit,
    {
      mint: (subject: TokenSubject, options: MintOptions) => {
        minted.push({ subject, options });
        return Promise.resolve({ token: 'minted', tokenType: 'Bearer', expiresAt: 0, riskScore: 0 });
      },
    } as unknown as TokenService,
    {
      noteRevokedDebugToken: (appId: string, tokenId: string) => void noted.push(`${appId}/${tokenId}`),
    } as unknown as DenySet,
    {
      recordDebugExchange: (_org: string, _app: string, subject: string) =>
        Promise.resolve(void exchanges.push(subject)),
    } as unknown as DevicesRepository,
    new KnownApps().add(ORG, APP).add(ORG, OTHER_APP).asAppsRepository(),
  );
  const admin = memberAuth(ORG, 'user-1');
  const tenant = (appId = APP) => ({ appId, organizationId: ORG }) as unknown as Tenant;
  return { service, tokens, log, announced, noted, minted, exchanges, admin, tenant };
}

describe('DebugTokensService', () => {
  it('shows the secret once, stores only its hash and prefix, and audits the creation', async () => {
    const { service, tokens, log, admin } = world();
    const created = await service.create(admin, APP, { name: 'GitHub Actions' });
    expect(created.token).toMatch(/^dbg_/);
    expect(created.prefix).toBe(created.token.slice(0, 12));
    expect(tokens.rows[0].hash).toBe(sha256Hex(created.token));
    expect(JSON.stringify(await service.list(admin, APP))).not.toContain(created.token);
    expect(log.actions()).toEqual(['debug_token.created']);
  });

  it(`refuses a token past ${MAX_LIVE_DEBUG_TOKENS} live ones; expired and revoked ones do not count`, async () => {
    const { service, tokens, admin } = world();
    for (let i = 0; i < MAX_LIVE_DEBUG_TOKENS; i++) await service.create(admin, APP, { name: `ci-${i}` });
    expect(await refusalCode(service.create(admin, APP, { name: 'one too many' }))).toBe('debug_token_limit_reached');
    // Another app of the organization has its own allowance.
    await service.create(admin, OTHER_APP, { name: 'other app' });
    await service.revoke(admin, APP, tokens.rows[0].id);
    tokens.rows[1].expires_at = new Date(Date.now() - 1_000);
    await service.create(admin, APP, { name: 'after a revocation' });
    await service.create(admin, APP, { name: 'after an expiry' });
    expect(await refusalCode(service.create(admin, APP, { name: 'full again' }))).toBe('debug_token_limit_reached');
  });

  it("answers another organization's app with 404, to create, list or revoke", async () => {
    const { service, admin } = world();
    const { id } = await service.create(admin, APP, { name: 'ours' });
    const stranger = memberAuth(OTHER_ORG, 'user-2');
    expect(await refusalCode(service.create(stranger, APP, { name: 'theirs' }))).toBe('not_found');
    expect(await refusalCode(service.list(stranger, APP))).toBe('not_found');
    expect(await refusalCode(service.revoke(stranger, APP, id))).toBe('not_found');
    expect(await service.list(admin, APP)).toHaveLength(1);
  });

  it('announces a revocation to every instance only for a token that minted device tokens, and audits it once', async () => {
    const { service, log, announced, noted, admin, tenant } = world();
    const unused = await service.create(admin, APP, { name: 'never used' });
    await service.revoke(admin, APP, unused.id);
    expect([announced, noted]).toEqual([[], []]);

    const used = await service.create(admin, APP, { name: 'used' });
    await service.exchange(tenant(), { debugToken: used.token, deviceId: 'runner-1' });
    await service.revoke(admin, APP, used.id);
    await service.revoke(admin, APP, used.id);
    expect(announced).toEqual([
      { kind: 'debugToken', appId: APP, tokenId: used.id },
      { kind: 'debugToken', appId: APP, tokenId: used.id },
    ]);
    expect(noted).toEqual([`${APP}/${used.id}`, `${APP}/${used.id}`]);
    expect(log.actions()).toEqual([
      'debug_token.created',
      'debug_token.revoked',
      'debug_token.created',
      'debug_token.revoked',
    ]);
    expect(await refusalCode(service.revoke(admin, APP, '00000000-0000-4000-8000-00000000dead'))).toBe('not_found');
  });

  it('names why an exchange is refused: unknown, another app, disabled, revoked, expired', async () => {
    const { service, tokens, admin, tenant, minted } = world();
    const token = async (name: string) => (await service.create(admin, APP, { name })).token;
    expect(await refusalCode(service.exchange(tenant(), { debugToken: 'dbg_unknown' }))).toBe('debug_token_invalid');
    expect(await refusalCode(service.exchange(tenant(OTHER_APP), { debugToken: await token('a') }))).toBe(
      'debug_token_invalid',
    );
    const revoked = await service.create(admin, APP, { name: 'revoked' });
    await service.revoke(admin, APP, revoked.id);
    expect(await refusalCode(service.exchange(tenant(), { debugToken: revoked.token }))).toBe('debug_token_revoked');
    const expired = await token('expired');
    tokens.rows.at(-1)!.expires_at = new Date(Date.now() - 1);
    expect(await refusalCode(service.exchange(tenant(), { debugToken: expired }))).toBe('debug_token_expired');
    tokens.disabledApps.add(APP);
    expect(await refusalCode(service.exchange(tenant(), { debugToken: await token('b') }))).toBe(
      'debug_tokens_disabled',
    );
    expect(minted).toEqual([]);
  });

  it('refuses an exchange a revocation overtook between its read and its use', async () => {
    const { service, tokens, admin, tenant, minted } = world();
    const { token, id } = await service.create(admin, APP, { name: 'racing' });
    const markUsed = tokens.markUsed.bind(tokens);
    tokens.markUsed = async (appId, tokenId) => {
      await service.revoke(admin, APP, id);
      return markUsed(appId, tokenId);
    };
    expect(await refusalCode(service.exchange(tenant(), { debugToken: token }))).toBe('debug_token_revoked');
    expect(minted).toEqual([]);
  });

  it('mints a debug device token named by the debug token and the build, never a device', async () => {
    const { service, tokens, admin, tenant, minted, exchanges } = world();
    const expiresAt = new Date(Date.now() + 86_400_000);
    const { token, id } = await service.create(admin, APP, { name: 'simulator', expiresAt });
    await service.exchange(tenant(), { debugToken: token, deviceId: 'iPhone-15-sim', limitedUse: true });
    await service.exchange(tenant(), { debugToken: token });
    expect(minted.map(({ subject }) => subject.keyId)).toEqual([`debug:${id}:iPhone-15-sim`, `debug:${id}`]);
    expect(minted[0].subject).toMatchObject({ environment: 'development', riskScore: 0, attestationCount: 0 });
    expect(minted.map(({ options }) => options)).toEqual([
      { debug: true, limitedUse: true, notAfter: expiresAt },
      { debug: true, limitedUse: false, notAfter: expiresAt },
    ]);
    // One debug event per exchange in the devices' log, and the token's use recorded.
    expect(exchanges).toEqual([`debug:${id}:iPhone-15-sim`, `debug:${id}`]);
    expect(tokens.rows[0].last_used_at).not.toBeNull();
  });
});
