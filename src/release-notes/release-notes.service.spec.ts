import { describe, expect, it } from '@jest/globals';
import type { Tenant } from '../apps/tenant-resolver.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { KnownApps } from '../../test/fakes/known-apps.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { FakeReleaseNotesRepository } from '../../test/fakes/release-notes.js';
import { ReleaseNotesService } from './release-notes.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';
const OTHER_APP = '00000000-0000-4000-8000-0000000000b1';

function setup() {
  const uow = new FakeUnitOfWork();
  const notes = new FakeReleaseNotesRepository();
  const audit = new RecordedAudit();
  const apps = new KnownApps().add(ORG, APP).add(OTHER_ORG, OTHER_APP);
  const service = new ReleaseNotesService(
    uow.asUnitOfWork(),
    notes as never,
    audit.asAuditService(),
    apps.asAppsRepository(),
  );
  return { uow, notes, audit, service, auth: memberAuth(ORG, 'user-1'), otherAuth: memberAuth(OTHER_ORG, 'user-2') };
}

const tenant = (organizationId: string, appId: string) => ({ organizationId, appId }) as Tenant;

describe('ReleaseNotesService', () => {
  it('creates a note in one unit of work with its audit entry, published when asked', async () => {
    const { service, audit, uow, auth } = setup();
    const note = await service.create(auth, {
      appId: APP,
      version: '1.2',
      title: 'New',
      body: 'Things',
      isPublished: true,
    });
    expect(note).toMatchObject({ version: '1.2', versionKey: '1.2.0.0', isPublished: true });
    expect(note.publishedAt).toBeInstanceOf(Date);
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'release_note.created',
        resourceId: note.id,
        metadata: { version: '1.2', appId: APP },
      }),
    ]);
    expect(uow.committed).toBe(1);
  });

  it("refuses another organization's app as not found", async () => {
    const { service, audit, auth } = setup();
    await expect(
      service.create(auth, { appId: OTHER_APP, version: '1.0', title: 't', body: 'b' }),
    ).rejects.toMatchObject({
      status: 404,
    });
    expect(audit.entries).toEqual([]);
  });

  it('refuses a second note for the same version however it is spelled', async () => {
    const { service, auth } = setup();
    await service.create(auth, { appId: APP, version: '1.0', title: 't', body: 'b' });
    await expect(service.create(auth, { appId: APP, version: 'v1.0.0', title: 't', body: 'b' })).rejects.toMatchObject({
      status: 409,
    });
  });

  it('refuses an empty update and records the changed fields of a real one', async () => {
    const { service, audit, auth } = setup();
    const note = await service.create(auth, { appId: APP, version: '1.0', title: 't', body: 'b' });
    await expect(service.update(auth, note.id, {})).rejects.toMatchObject({ status: 400 });
    const updated = await service.update(auth, note.id, { title: 'Better', version: '1.1' });
    expect(updated).toMatchObject({ title: 'Better', version: '1.1', versionKey: '1.1.0.0' });
    expect(audit.entries.at(-1)).toMatchObject({
      action: 'release_note.updated',
      metadata: { fields: ['version', 'title'] },
    });
  });

  it("answers another organization's note as not found for every console operation", async () => {
    const { service, audit, auth, otherAuth } = setup();
    const note = await service.create(auth, { appId: APP, version: '1.0', title: 't', body: 'b' });
    for (const attempt of [
      () => service.get(otherAuth, note.id),
      () => service.update(otherAuth, note.id, { title: 'x' }),
      () => service.publish(otherAuth, note.id),
      () => service.remove(otherAuth, note.id),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ status: 404 });
    }
    expect(audit.actions()).toEqual(['release_note.created']);
    expect((await service.get(auth, note.id)).title).toBe('t');
  });

  it('publishes and unpublishes idempotently, auditing only real changes', async () => {
    const { service, audit, auth } = setup();
    const note = await service.create(auth, { appId: APP, version: '1.0', title: 't', body: 'b' });
    const published = await service.publish(auth, note.id);
    expect(published.isPublished).toBe(true);
    const again = await service.publish(auth, note.id);
    expect(again.publishedAt).toEqual(published.publishedAt);
    expect((await service.unpublish(auth, note.id)).isPublished).toBe(false);
    await service.unpublish(auth, note.id);
    expect(audit.actions()).toEqual(['release_note.created', 'release_note.published', 'release_note.unpublished']);
  });

  it('delivers the published notes between the installed and current versions once per device', async () => {
    const { service, auth } = setup();
    for (const version of ['1.0', '1.1', '1.2', '2.0']) {
      await service.create(auth, { appId: APP, version, title: version, body: 'b', isPublished: version !== '1.2' });
    }
    const sdk = tenant(ORG, APP);
    const pending = await service.pending(sdk, 'device-1', '1.0', '2.0');
    expect(pending.map((note) => note.version)).toEqual(['2.0', '1.1']);
    await service.markSeen(sdk, 'device-1', pending[0].id);
    await service.markSeen(sdk, 'device-1', pending[0].id);
    expect((await service.pending(sdk, 'device-1', '1.0', '2.0')).map((note) => note.version)).toEqual(['1.1']);
    expect(await service.pending(sdk, 'device-2', '2.0', '2.0')).toEqual([]);
  });

  it("refuses to mark another app's note as seen", async () => {
    const { service, auth } = setup();
    const note = await service.create(auth, { appId: APP, version: '1.0', title: 't', body: 'b', isPublished: true });
    await expect(service.markSeen(tenant(OTHER_ORG, OTHER_APP), 'device-1', note.id)).rejects.toMatchObject({
      status: 404,
    });
  });
});
