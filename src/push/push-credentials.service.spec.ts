import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { AppConfig } from '../config/app-config.js';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { KnownApps } from '../../test/fakes/known-apps.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { FakePushCredentialsRepository } from '../../test/fakes/push.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import type { PushCredentialsRepository } from './push-credentials.repository.js';
import { PushCredentialsService } from './push-credentials.service.js';
import { PushKey } from './push-key.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';
const SECOND_APP = '00000000-0000-4000-8000-0000000000a2';
const OTHER_APP = '00000000-0000-4000-8000-0000000000b1';

/** The contents of an APNs .p8 file: an EC P-256 private key, PKCS #8 PEM. */
const p8 = () =>
  generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();

const input = (privateKey: string, overrides: { keyId?: string; environment?: 'sandbox' | 'production' } = {}) => ({
  keyId: 'KEY1234567',
  teamId: 'TEAM123456',
  privateKey,
  environment: 'sandbox' as const,
  ...overrides,
});

/** The service over fakes, no PUSH_ENCRYPTION_KEY (the key is generated and stored), two apps of ORG and one of OTHER_ORG. */
function world() {
  const rows = new FakePushCredentialsRepository();
  const audit = new RecordedAudit();
  const key = new PushKey(rows as unknown as PushCredentialsRepository, { pushEncryptionKey: null } as AppConfig);
  const apps = new KnownApps().add(ORG, APP).add(ORG, SECOND_APP).add(OTHER_ORG, OTHER_APP);
  const service = new PushCredentialsService(
    new FakeUnitOfWork().asUnitOfWork(),
    rows as unknown as PushCredentialsRepository,
    audit.asAuditService(),
    key,
    apps.asAppsRepository(),
  );
  return {
    rows,
    audit,
    key,
    service,
    auth: memberAuth(ORG, 'admin-1'),
    stranger: memberAuth(OTHER_ORG, 'admin-2'),
  };
}

describe('PushCredentialsService', () => {
  it('answers the credentials set without the key, and reads back the same answer', async () => {
    const { service, auth } = world();
    const pem = p8();
    const answer = await service.put(auth, APP, input(pem, { environment: 'production' }));
    expect(answer).toEqual({
      keyId: 'KEY1234567',
      teamId: 'TEAM123456',
      environment: 'production',
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    expect(JSON.stringify(answer)).not.toContain('PRIVATE KEY');
    expect(await service.get(auth, APP)).toEqual(answer);
  });

  it('stores the key sealed, opening with the stored push key for its own app only', async () => {
    const { service, rows, key, auth } = world();
    const pem = p8();
    await service.put(auth, APP, input(pem));
    const sealed = rows.rows.get(APP)!.sealedKey;
    expect(sealed).not.toContain('PRIVATE KEY');
    expect(sealed).not.toContain(pem.split('\n')[1].slice(0, 20));
    const box = await key.box();
    expect(box.open(sealed, APP)).toBe(pem.trim());
    expect(box.open(sealed, SECOND_APP)).toBeNull();
  });

  it('takes the .p8 contents with the blank lines and spaces a paste adds', async () => {
    const { service, rows, key, auth } = world();
    const pem = p8();
    await service.put(auth, APP, input(`\n  ${pem}\n\n`));
    expect((await key.box()).open(rows.rows.get(APP)!.sealedKey, APP)).toBe(pem.trim());
  });

  it('refuses with 422 on privateKey anything but an EC P-256 private key, storing nothing', async () => {
    const { service, auth, rows, audit } = world();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    const publicOnly = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    for (const privateKey of [rsa.toString(), p384.toString(), publicOnly.toString(), 'x'.repeat(200)]) {
      await expect(service.put(auth, APP, input(privateKey))).rejects.toMatchObject({
        status: 422,
        fieldErrors: [{ field: 'privateKey', message: expect.stringContaining('.p8') }],
      });
    }
    expect(rows.rows.size).toBe(0);
    expect(audit.entries).toEqual([]);
  });

  it('replaces the credentials on a second PUT, keeping when they were first set', async () => {
    const { service, rows, key, auth } = world();
    const first = await service.put(auth, APP, input(p8()));
    const pem = p8();
    const second = await service.put(auth, APP, input(pem, { keyId: 'NEWKEY1234', environment: 'production' }));
    expect(second).toMatchObject({ keyId: 'NEWKEY1234', environment: 'production', createdAt: first.createdAt });
    expect((await key.box()).open(rows.rows.get(APP)!.sealedKey, APP)).toBe(pem.trim());
  });

  it('deletes the credentials: reading or deleting them again is 404', async () => {
    const { service, auth } = world();
    await service.put(auth, APP, input(p8()));
    await service.remove(auth, APP);
    await expect(service.get(auth, APP)).rejects.toMatchObject({ status: 404 });
    await expect(service.remove(auth, APP)).rejects.toMatchObject({ status: 404 });
  });

  it('records setting and deleting in the audit log by the Admin, with the key id, team and environment but never the key', async () => {
    const { service, audit, auth } = world();
    const pem = p8();
    await service.put(auth, APP, input(pem));
    await service.remove(auth, APP);
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'push_credentials.updated',
        organizationId: ORG,
        resourceType: 'app',
        resourceId: APP,
        actorUserId: 'admin-1',
        metadata: { keyId: 'KEY1234567', teamId: 'TEAM123456', environment: 'sandbox' },
      }),
      expect.objectContaining({ action: 'push_credentials.deleted', resourceType: 'app', resourceId: APP }),
    ]);
    expect(JSON.stringify(audit.entries)).not.toContain('PRIVATE KEY');
  });

  it("answers another organization's app as not found, to read, set or delete, and leaves its credentials", async () => {
    const { service, auth, stranger, audit, rows } = world();
    await service.put(stranger, OTHER_APP, input(p8()));
    await expect(service.get(auth, OTHER_APP)).rejects.toMatchObject({ status: 404 });
    await expect(service.put(auth, OTHER_APP, input(p8(), { keyId: 'MINE123456' }))).rejects.toMatchObject({
      status: 404,
    });
    await expect(service.remove(auth, OTHER_APP)).rejects.toMatchObject({ status: 404 });
    expect(rows.rows.get(OTHER_APP)).toMatchObject({ key_id: 'KEY1234567' });
    expect(audit.entries.map((entry) => entry.organizationId)).toEqual([OTHER_ORG]);
  });

  it('answers credentials never set as not found, saying to PUT them first', async () => {
    const { service, auth } = world();
    await expect(service.get(auth, APP)).rejects.toMatchObject({
      status: 404,
      details: { hint: 'PUT them first' },
    });
    await expect(service.remove(auth, APP)).rejects.toMatchObject({ status: 404 });
  });
});
