import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { AndroidIdentityRepository } from '../apps/android-identity.repository.js';
import type { PutAndroidIdentityDto } from '../apps/android-identity.dto.js';
import type { AppsRepository } from '../apps/apps.repository.js';
import { TenantResolver } from '../apps/tenant-resolver.js';
import { FakeAndroidIdentities } from '../../test/fakes/android-identities.js';
import { FakeAppsService } from '../../test/fakes/apps.js';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { AndroidIdentityService } from './android-identity.service.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';

const ORG = trustOrganizationId('00000000-0000-4000-8000-00000000000a');
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';

/** What a developer pastes from Play Console: fresh keys and a certificate digest (as base64url). */
function playConsole(packageName = 'com.example.notes') {
  const digest = randomBytes(32);
  return {
    packageName,
    certificateSha256Digests: [digest.toString('base64url')],
    decryptionKey: randomBytes(32).toString('base64'),
    verificationKey: generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .publicKey.export({ format: 'der', type: 'spki' })
      .toString('base64'),
  } satisfies PutAndroidIdentityDto;
}

/** Play Console's form of a digest: upper-case hex pairs joined by colons. */
const colonHex = (base64url: string) =>
  Buffer.from(base64url, 'base64url').toString('hex').toUpperCase().match(/../g)!.join(':');

/** The service over fakes, with an iOS app and an Android-only app in ORG and an app in OTHER_ORG; the SDK's lookup by package name is the real resolver's. */
function world() {
  const uow = new FakeUnitOfWork();
  const apps = new FakeAppsService();
  const identities = new FakeAndroidIdentities(apps);
  const audit = new RecordedAudit();
  // No iOS lookups here: only `X-Package-Name`.
  const noIosApps = { tenantOf: () => Promise.resolve(null) } as unknown as AppsRepository;
  const tenants = new TenantResolver(noIosApps, identities as unknown as AndroidIdentityRepository);
  const service = new AndroidIdentityService(
    identities as unknown as AndroidIdentityRepository,
    apps.asAppsService(),
    audit.asAuditService(),
    tenants,
    uow.asUnitOfWork(),
  );
  return {
    service,
    apps,
    identities,
    audit,
    tenants,
    uow,
    auth: memberAuth(ORG, 'admin-1'),
    stranger: memberAuth(OTHER_ORG, 'admin-2'),
    iosApp: apps.add(ORG),
    otherOrgApp: apps.add(OTHER_ORG),
  };
}

describe('AndroidIdentityService', () => {
  it("sets an app's identity and reads it back with its digests normalized and its keys only said to be set", async () => {
    const { service, auth, iosApp } = world();
    const pasted = playConsole();
    await expect(service.get(auth, iosApp)).rejects.toMatchObject({ status: 404 });
    const put = await service.put(auth, iosApp, {
      ...pasted,
      certificateSha256Digests: [colonHex(pasted.certificateSha256Digests[0])],
      policy: { refuseUnlicensed: true },
    });
    expect(put).toMatchObject({
      appId: iosApp,
      packageName: 'com.example.notes',
      certificateSha256Digests: pasted.certificateSha256Digests,
      hasDecryptionKey: true,
      hasVerificationKey: true,
      policy: {
        acceptedDeviceVerdicts: ['MEETS_STRONG_INTEGRITY', 'MEETS_DEVICE_INTEGRITY'],
        refuseUnrecognizedVersion: true,
        refuseUnlicensed: true,
        basicIntegrityAsRooted: true,
        notFromPlayAsDevelopment: true,
      },
    });
    const read = await service.get(auth, iosApp);
    expect(read).toEqual(put);
    for (const answer of [put, read]) {
      expect(JSON.stringify(answer)).not.toContain(pasted.decryptionKey);
      expect(JSON.stringify(answer)).not.toContain(pasted.verificationKey.slice(0, 40));
    }
  });

  it('stores the Play Integrity keys sealed to their app: attestation opens them, under another app they open not', async () => {
    const { service, identities, auth, iosApp, apps } = world();
    const pasted = playConsole();
    await service.put(auth, iosApp, pasted);
    const stored = identities.rows.get(iosApp)!;
    expect(stored.decryption_key_sealed).not.toContain(pasted.decryptionKey);
    expect(stored.verification_key_sealed).not.toContain(pasted.verificationKey.slice(0, 40));

    const opened = await service.forAttestation(ORG, iosApp);
    expect(Buffer.from(opened!.identity.decryptionKey).toString('base64')).toBe(pasted.decryptionKey);
    expect(opened!.identity.verificationKey.export({ format: 'der', type: 'spki' }).toString('base64')).toBe(
      pasted.verificationKey,
    );

    // The sealed keys copied to another app's row do not open there.
    const second = apps.add(ORG);
    await service.put(auth, second, playConsole('com.example.second'));
    Object.assign(identities.rows.get(second)!, {
      decryption_key_sealed: stored.decryption_key_sealed,
      verification_key_sealed: stored.verification_key_sealed,
    });
    await expect(service.forAttestation(ORG, second)).rejects.toThrow('do not open');
    expect(await service.forAttestation(ORG, apps.add(ORG))).toBeNull();
  });

  it('requires both keys the first time, and keeps the stored ones when a later change leaves them out', async () => {
    const { service, auth, iosApp, identities } = world();
    const pasted = playConsole();
    const { verificationKey: _left, ...withoutVerification } = pasted;
    await expect(service.put(auth, iosApp, withoutVerification)).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('decryptionKey and verificationKey are required'),
    });
    expect(identities.rows.size).toBe(0);

    await service.put(auth, iosApp, pasted);
    const kept = await service.put(auth, iosApp, {
      packageName: pasted.packageName,
      certificateSha256Digests: pasted.certificateSha256Digests,
    });
    expect(kept).toMatchObject({ hasDecryptionKey: true, hasVerificationKey: true });
    const opened = await service.forAttestation(ORG, iosApp);
    expect(Buffer.from(opened!.identity.decryptionKey).toString('base64')).toBe(pasted.decryptionKey);
  });

  it('merges a policy change into the stored policy', async () => {
    const { service, auth, iosApp } = world();
    const pasted = playConsole();
    await service.put(auth, iosApp, { ...pasted, policy: { refuseUnlicensed: true, basicIntegrityAsRooted: false } });
    const changed = await service.put(auth, iosApp, {
      packageName: pasted.packageName,
      certificateSha256Digests: pasted.certificateSha256Digests,
      policy: { acceptedDeviceVerdicts: ['MEETS_BASIC_INTEGRITY'] },
    });
    expect(changed.policy).toEqual({
      acceptedDeviceVerdicts: ['MEETS_BASIC_INTEGRITY'],
      refuseUnrecognizedVersion: true,
      refuseUnlicensed: true,
      basicIntegrityAsRooted: false,
      notFromPlayAsDevelopment: true,
    });
    expect((await service.forAttestation(ORG, iosApp))!.policy).toEqual(changed.policy);
  });

  it('refuses a malformed digest or key with a 400 naming the field, and stores nothing', async () => {
    const { service, auth, iosApp, identities, audit } = world();
    const pasted = playConsole();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
      .publicKey.export({ format: 'der', type: 'spki' })
      .toString('base64');
    const cases: [PutAndroidIdentityDto, string][] = [
      [{ ...pasted, certificateSha256Digests: ['abcd'] }, 'certificateSha256Digests[0]'],
      [
        { ...pasted, certificateSha256Digests: [...pasted.certificateSha256Digests, 'AB:CD'] },
        'certificateSha256Digests[1]',
      ],
      [{ ...pasted, decryptionKey: randomBytes(16).toString('base64') }, 'decryptionKey'],
      [{ ...pasted, verificationKey: p384 }, 'verificationKey'],
      [{ ...pasted, verificationKey: 'bm90IGEga2V5' }, 'verificationKey'],
    ];
    for (const [input, field] of cases) {
      await expect(service.put(auth, iosApp, input)).rejects.toMatchObject({
        status: 400,
        code: 'bad_request',
        message: expect.stringMatching(new RegExp(`^${field.replace(/[[\]]/g, '\\$&')}: `)),
      });
    }
    expect(identities.rows.size).toBe(0);
    expect(audit.entries).toEqual([]);
  });

  it('refuses a package name another app has, in any organization, with 409', async () => {
    const { service, auth, stranger, iosApp, otherOrgApp, apps } = world();
    const pasted = playConsole();
    await service.put(auth, iosApp, pasted);
    await expect(service.put(stranger, otherOrgApp, playConsole(pasted.packageName))).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('package name'),
    });
    await expect(service.put(auth, apps.add(ORG), playConsole(pasted.packageName))).rejects.toMatchObject({
      status: 409,
    });
    // The app that has it may change the rest.
    await expect(service.put(auth, iosApp, playConsole(pasted.packageName))).resolves.toMatchObject({
      packageName: pasted.packageName,
    });
  });

  it("answers another organization's app as not found, to read, change or delete, and leaves its identity as it was", async () => {
    const { service, auth, stranger, otherOrgApp, identities } = world();
    const pasted = playConsole();
    await service.put(stranger, otherOrgApp, pasted);
    await expect(service.get(auth, otherOrgApp)).rejects.toMatchObject({ status: 404 });
    await expect(service.put(auth, otherOrgApp, playConsole('com.example.taken'))).rejects.toMatchObject({
      status: 404,
    });
    await expect(service.remove(auth, otherOrgApp)).rejects.toMatchObject({ status: 404 });
    expect(identities.rows.get(otherOrgApp)?.package_name).toBe(pasted.packageName);
  });

  it('answers 404 to deleting an identity never set, and to setting one for an app deleted meanwhile', async () => {
    const { service, auth, iosApp, apps, identities } = world();
    await expect(service.remove(auth, iosApp)).rejects.toMatchObject({ status: 404 });
    apps.delete(iosApp);
    await expect(service.put(auth, iosApp, playConsole())).rejects.toMatchObject({ status: 404 });
    expect(identities.rows.size).toBe(0);
  });

  it("refuses to delete an Android-only app's only identity (409), and deletes it once the app has an iOS one", async () => {
    const { service, auth, apps, identities } = world();
    const androidOnly = apps.add(ORG, { bundleId: null });
    await service.put(auth, androidOnly, playConsole());
    await expect(service.remove(auth, androidOnly)).rejects.toMatchObject({
      status: 409,
      message: expect.stringContaining('only identity'),
    });
    expect(identities.rows.has(androidOnly)).toBe(true);

    Object.assign(apps.apps.get(androidOnly)!, { bundleId: 'com.example.later', teamId: 'ABCDE12345' });
    await service.remove(auth, androidOnly);
    await expect(service.get(auth, androidOnly)).rejects.toMatchObject({ status: 404 });
    await expect(service.remove(auth, androidOnly)).rejects.toMatchObject({ status: 404 });
  });

  it('makes the SDK see a change at once: a new package is found though its miss was cached, an old or deleted one names no app', async () => {
    const { service, tenants, auth, iosApp } = world();
    expect(await tenants.resolveAndroid('com.example.first')).toBeNull();
    await service.put(auth, iosApp, playConsole('com.example.first'));
    expect((await tenants.resolveAndroid('com.example.first'))?.appId).toBe(iosApp);

    await service.put(auth, iosApp, playConsole('com.example.renamed'));
    expect(await tenants.resolveAndroid('com.example.first')).toBeNull();
    expect((await tenants.resolveAndroid('com.example.renamed'))?.appId).toBe(iosApp);

    await service.remove(auth, iosApp);
    expect(await tenants.resolveAndroid('com.example.renamed')).toBeNull();
  });

  it('records creation, change and deletion in the audit log by the Admin, never with the keys', async () => {
    const { service, audit, auth, iosApp } = world();
    const pasted = playConsole();
    await service.put(auth, iosApp, pasted);
    await service.put(auth, iosApp, {
      packageName: pasted.packageName,
      certificateSha256Digests: pasted.certificateSha256Digests,
    });
    await service.remove(auth, iosApp);
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'app.android_created',
        organizationId: ORG,
        resourceId: iosApp,
        actorUserId: 'admin-1',
        metadata: { packageName: pasted.packageName, keysReplaced: true },
      }),
      expect.objectContaining({
        action: 'app.android_updated',
        metadata: { packageName: pasted.packageName, keysReplaced: false },
      }),
      expect.objectContaining({ action: 'app.android_deleted', resourceId: iosApp }),
    ]);
    expect(JSON.stringify(audit.entries)).not.toContain(pasted.decryptionKey);
  });

  describe("a new app's identity (POST /api/v1/apps with `android`)", () => {
    it('is checked before the app exists, naming the field under android.', async () => {
      const { service, auth } = world();
      await expect(
        service.prepareNewAppIdentity(auth, { ...playConsole(), certificateSha256Digests: ['abcd'] }),
      ).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(/^android\.certificateSha256Digests\[0\]: /),
      });
      const { decryptionKey: _left, ...withoutDecryption } = playConsole();
      const write = await service.prepareNewAppIdentity(auth, withoutDecryption);
      await expect(write('an-app-id')).rejects.toMatchObject({
        status: 400,
        message: expect.stringMatching(/^android\.decryptionKey: /),
      });
    });

    it('is stored with the new app, found by the SDK though its miss was cached, and 409 for a taken package', async () => {
      const { service, apps, auth, uow, tenants, iosApp } = world();
      const pasted = playConsole('com.example.fresh');
      expect(await tenants.resolveAndroid(pasted.packageName)).toBeNull();
      const write = await service.prepareNewAppIdentity(auth, pasted);
      const created = apps.add(ORG, { bundleId: null });
      await uow.run(() => write(created));
      expect(await service.get(auth, created)).toMatchObject({
        packageName: pasted.packageName,
        hasDecryptionKey: true,
      });
      expect((await tenants.resolveAndroid(pasted.packageName))?.appId).toBe(created);

      const copycat = await service.prepareNewAppIdentity(auth, playConsole(pasted.packageName));
      await expect(uow.run(() => copycat(iosApp))).rejects.toMatchObject({ status: 409 });
    });
  });
});
