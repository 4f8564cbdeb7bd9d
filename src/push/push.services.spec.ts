import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { Tenant } from '../apps/tenant-resolver.js';
import type { AppConfig } from '../config/app-config.js';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { KnownApps } from '../../test/fakes/known-apps.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { FakePushCredentialsRepository, FakePushTokensRepository } from '../../test/fakes/push.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { PushCredentialsService } from './push-credentials.service.js';
import { PushKey } from './push-key.js';
import { MAX_PUSH_TOKENS_PER_SUBSCRIBER, PushTokensService } from './push-tokens.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';
const OTHER_APP = '00000000-0000-4000-8000-0000000000b1';

const p256 = () =>
  generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();

function credentials() {
  const uow = new FakeUnitOfWork();
  const rows = new FakePushCredentialsRepository();
  const audit = new RecordedAudit();
  const key = new PushKey(rows as never, { pushEncryptionKey: null } as AppConfig);
  const apps = new KnownApps().add(ORG, APP).add(OTHER_ORG, OTHER_APP);
  const service = new PushCredentialsService(
    uow.asUnitOfWork(),
    rows as never,
    audit.asAuditService(),
    key,
    apps.asAppsRepository(),
  );
  return { rows, audit, key, service, auth: memberAuth(ORG, 'admin-1') };
}

const input = (privateKey: string) => ({
  keyId: 'KEY123',
  teamId: 'TEAM123',
  privateKey,
  environment: 'sandbox' as const,
});

describe('PushCredentialsService', () => {
  it('stores the key sealed with the stored push key, answers without it, and records the change', async () => {
    const { service, rows, key, audit, auth } = credentials();
    const pem = p256();
    const answer = await service.put(auth, APP, input(pem));
    expect(answer).toMatchObject({ keyId: 'KEY123', teamId: 'TEAM123', environment: 'sandbox' });
    expect(JSON.stringify(answer)).not.toContain('PRIVATE KEY');
    expect((await key.box()).open(rows.rows.get(APP)!.sealedKey, APP)).toBe(pem.trim());
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'push_credentials.updated', resourceType: 'app', resourceId: APP }),
    ]);
    expect(await service.get(auth, APP)).toEqual(answer);
  });

  it('refuses a key that is not an EC P-256 private key', async () => {
    const { service, auth, rows } = credentials();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    await expect(service.put(auth, APP, input(rsa.toString()))).rejects.toMatchObject({ status: 422 });
    await expect(service.put(auth, APP, input('not a key'))).rejects.toMatchObject({ status: 422 });
    expect(rows.rows.size).toBe(0);
  });

  it("answers another organization's app as not found, and credentials never set as not found", async () => {
    const { service, auth, audit } = credentials();
    await expect(service.put(auth, OTHER_APP, input(p256()))).rejects.toMatchObject({ status: 404 });
    await expect(service.get(auth, OTHER_APP)).rejects.toMatchObject({ status: 404 });
    await expect(service.get(auth, APP)).rejects.toMatchObject({ status: 404 });
    await expect(service.remove(auth, APP)).rejects.toMatchObject({ status: 404 });
    expect(audit.entries).toEqual([]);
  });
});

describe('PushTokensService', () => {
  const tenant = { organizationId: ORG, appId: APP } as Tenant;

  it(`moves a token to its new subscriber and keeps a subscriber's ${MAX_PUSH_TOKENS_PER_SUBSCRIBER} newest`, async () => {
    const tokens = new FakePushTokensRepository();
    const service = new PushTokensService(new FakeUnitOfWork().asUnitOfWork(), tokens as never);
    await service.register(tenant, 'key-1', { pushToken: 'AA01', subscriberId: 'alice' });
    await service.register(tenant, 'key-2', { pushToken: 'aa01', subscriberId: 'bob' });
    expect(tokens.rows.map((row) => [row.deviceToken, row.subscriberId])).toEqual([['aa01', 'bob']]);
    for (let i = 0; i < MAX_PUSH_TOKENS_PER_SUBSCRIBER + 2; i++) {
      await service.register(tenant, 'key', { pushToken: `bb${i}`, subscriberId: 'carol' });
    }
    const carols = tokens.rows.filter((row) => row.subscriberId === 'carol').map((row) => row.deviceToken);
    expect(carols).toHaveLength(MAX_PUSH_TOKENS_PER_SUBSCRIBER);
    expect(carols).not.toContain('bb0');
    expect(carols).toContain(`bb${MAX_PUSH_TOKENS_PER_SUBSCRIBER + 1}`);
  });
});
