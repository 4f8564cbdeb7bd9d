import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { siblingApp } from '../factories/apps.js';
import { createReleaseNote, type ReleaseNote } from '../factories/release-notes.js';
import { createApiKey, createUser, signIn } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { attestDevice, fabricatedRootEnv, registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

const NOTES = '/api/v1/org/release-notes';
const PENDING = '/api/v1/release-notes/pending';

describe('release notes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  function pending(app: RegisteredApp, device: string, installedVersion: string, currentVersion: string) {
    return sdk(t, app)
      .get(
        `${PENDING}?installedVersion=${encodeURIComponent(installedVersion)}&currentVersion=${encodeURIComponent(currentVersion)}`,
      )
      .set('X-Device-ID', device);
  }

  async function pendingVersions(
    app: RegisteredApp,
    device: string,
    installed: string,
    current: string,
  ): Promise<string[]> {
    const response = await pending(app, device, installed, current).expect(200);
    return (response.body.items as ReleaseNote[]).map((note) => note.version);
  }

  function seen(app: RegisteredApp, device: string, noteId: string) {
    return sdk(t, app).post(`/api/v1/release-notes/${noteId}/seen`).set('X-Device-ID', device);
  }

  describe('console', () => {
    it('creates an unpublished note by default, or a published one with publishedAt', async () => {
      const app = await registerApp(t);
      const draft = await createReleaseNote(app, { version: '2.1.0', title: 'Spring release', body: 'New widgets' });
      expect(draft).toEqual({
        id: expect.any(String),
        appId: app.id,
        version: '2.1.0',
        title: 'Spring release',
        body: 'New widgets',
        isPublished: false,
        publishedAt: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const live = await createReleaseNote(app, { version: '2.2.0', isPublished: true });
      expect(live.isPublished).toBe(true);
      expect(Date.parse(live.publishedAt!)).toBeGreaterThan(Date.now() - 60_000);
      const audit = await t.sql(`SELECT action FROM audit_logs WHERE resource_id = $1`, [draft.id]);
      expect(audit).toEqual([{ action: 'release_note.created' }]);
    });

    it('accepts version numbers such as 2.1.0, 1.0 and 2.1.3-beta', async () => {
      const app = await registerApp(t);
      for (const version of ['2.1.0', '1.0', '2.1.3-beta', '7', '3.0.0-rc.1+build.5', 'v4.2']) {
        expect((await createReleaseNote(app, { version })).version).toBe(version);
      }
    });

    it('answers a missing, too long or unrecognizable field with 400 naming it', async () => {
      const app = await registerApp(t);
      const base = { appId: app.id, version: '1.0.0', title: 'T', body: 'B' };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, version: undefined }, 'version'],
        [{ ...base, version: 'latest' }, 'version'],
        [{ ...base, version: '1..2' }, 'version'],
        [{ ...base, version: `1.0.0-${'a'.repeat(59)}` }, 'version'],
        [{ ...base, title: undefined }, 'title'],
        [{ ...base, title: '' }, 'title'],
        [{ ...base, title: 't'.repeat(201) }, 'title'],
        [{ ...base, body: undefined }, 'body'],
        [{ ...base, body: '' }, 'body'],
        [{ ...base, body: 'b'.repeat(20_001) }, 'body'],
        [{ ...base, appId: undefined }, 'appId'],
        [{ ...base, appId: 'app-1' }, 'appId'],
        [{ ...base, isPublished: 'yes' }, 'isPublished'],
      ];
      for (const [body, field] of cases) {
        const response = await app.owner.post(NOTES).send(body);
        expect([field, response.status]).toEqual([field, 400]);
        expect(response.body.error).toContain(field);
      }
      await createReleaseNote(app, {
        version: `1.0.0-${'a'.repeat(58)}`,
        title: 't'.repeat(200),
        body: 'b'.repeat(20_000),
      });
    });

    it('refuses an app of another organization (404) and a second note per app and version (409)', async () => {
      const app = await registerApp(t);
      const stranger = await registerApp(t);
      await stranger.owner.post(NOTES).send({ appId: app.id, version: '1.0.0', title: 'T', body: 'B' }).expect(404);
      await app.owner.post(NOTES).send({ appId: randomUUID(), version: '1.0.0', title: 'T', body: 'B' }).expect(404);
      await createReleaseNote(app, { version: '1.0.0' });
      const duplicate = await app.owner
        .post(NOTES)
        .send({ appId: app.id, version: '1.0.0', title: 'T', body: 'B' })
        .expect(409);
      expect(duplicate.body.code).toBe('release_note_exists');
      await app.owner.post(NOTES).send({ appId: app.id, version: '1.0', title: 'T', body: 'B' }).expect(409);
      await createReleaseNote(app, { version: '1.0.0-beta' });
      await createReleaseNote(await siblingApp(app), { version: '1.0.0' });
    });

    it('lists newest first with items and metadata, filters by appId and pages up to 100', async () => {
      const app = await registerApp(t);
      const other = await siblingApp(app);
      const first = await createReleaseNote(app, { version: '1.0.0' });
      const second = await createReleaseNote(other, { version: '1.0.0' });
      const third = await createReleaseNote(app, { version: '1.1.0' });
      const listed = await app.owner.get(NOTES).expect(200);
      expect(listed.body).toEqual({
        items: [third, second, first].map((note) => ({ ...note, updatedAt: expect.any(String) })),
        metadata: { page: 1, per: 20, total: 3 },
      });
      const filtered = await app.owner.get(`${NOTES}?appId=${other.id}`).expect(200);
      expect(filtered.body).toMatchObject({ items: [{ id: second.id }], metadata: { total: 1 } });
      const paged = await app.owner.get(`${NOTES}?page=2&per=2`).expect(200);
      expect(paged.body).toMatchObject({ items: [{ id: first.id }], metadata: { page: 2, per: 2, total: 3 } });
      await app.owner.get(`${NOTES}?per=100`).expect(200);
      for (const query of ['per=101', 'per=0', 'page=0', 'appId=nope', 'sort=asc']) {
        expect([query, (await app.owner.get(`${NOTES}?${query}`)).status]).toEqual([query, 400]);
      }
      const stranger = await registerApp(t);
      expect((await stranger.owner.get(NOTES).expect(200)).body.metadata.total).toBe(0);
    });

    it("reads one note, and answers 404 for another organization's", async () => {
      const app = await registerApp(t);
      const note = await createReleaseNote(app);
      expect((await app.owner.get(`${NOTES}/${note.id}`).expect(200)).body).toEqual(note);
      const stranger = await registerApp(t);
      for (const [method, path] of [
        ['get', `${NOTES}/${note.id}`],
        ['patch', `${NOTES}/${note.id}`],
        ['delete', `${NOTES}/${note.id}`],
        ['post', `${NOTES}/${note.id}/publish`],
        ['post', `${NOTES}/${note.id}/unpublish`],
      ] as const) {
        const response = await stranger.owner[method](path).send({ title: 'x' });
        expect([path, response.status]).toEqual([path, 404]);
      }
      await app.owner.get(`${NOTES}/${randomUUID()}`).expect(404);
      await app.owner.get(`${NOTES}/not-a-uuid`).expect(400);
    });

    it('updates version, title and body, but not the publish state', async () => {
      const app = await registerApp(t);
      const note = await createReleaseNote(app, { version: '1.0.0' });
      await createReleaseNote(app, { version: '1.1.0' });
      const updated = await app.owner
        .patch(`${NOTES}/${note.id}`)
        .send({ version: '1.0.1', title: 'Patch', body: 'Fixes' })
        .expect(200);
      expect(updated.body).toMatchObject({
        id: note.id,
        version: '1.0.1',
        title: 'Patch',
        body: 'Fixes',
        isPublished: false,
      });
      expect(
        (await app.owner.patch(`${NOTES}/${note.id}`).send({ title: 'Only title' }).expect(200)).body,
      ).toMatchObject({
        version: '1.0.1',
        title: 'Only title',
      });
      const clash = await app.owner.patch(`${NOTES}/${note.id}`).send({ version: '1.1' }).expect(409);
      expect(clash.body.code).toBe('release_note_exists');
      await app.owner.patch(`${NOTES}/${note.id}`).send({ version: '1.0.1' }).expect(200);
      const publish = await app.owner.patch(`${NOTES}/${note.id}`).send({ isPublished: true }).expect(400);
      expect(publish.body.error).toContain('isPublished');
      await app.owner.patch(`${NOTES}/${note.id}`).send({ version: 'newest' }).expect(400);
      await app.owner
        .patch(`${NOTES}/${note.id}`)
        .send({ title: 't'.repeat(201) })
        .expect(400);
      await app.owner
        .patch(`${NOTES}/${note.id}`)
        .send({ body: 'b'.repeat(20_001) })
        .expect(400);
      await app.owner.patch(`${NOTES}/${note.id}`).send({}).expect(400);
      expect((await app.owner.get(`${NOTES}/${note.id}`)).body.isPublished).toBe(false);
    });

    it('publishes and unpublishes idempotently, keeping or clearing publishedAt', async () => {
      const app = await registerApp(t);
      const note = await createReleaseNote(app);
      const published = await app.owner.post(`${NOTES}/${note.id}/publish`).expect(200);
      expect(published.body).toMatchObject({ isPublished: true, publishedAt: expect.any(String) });
      const again = await app.owner.post(`${NOTES}/${note.id}/publish`).expect(200);
      expect(again.body.publishedAt).toBe(published.body.publishedAt);
      const unpublished = await app.owner.post(`${NOTES}/${note.id}/unpublish`).expect(200);
      expect(unpublished.body).toMatchObject({ isPublished: false, publishedAt: null });
      expect((await app.owner.post(`${NOTES}/${note.id}/unpublish`).expect(200)).body).toMatchObject({
        isPublished: false,
        publishedAt: null,
      });
      const audit = await t.sql(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [note.id]);
      expect(audit.map((a) => a.action)).toEqual([
        'release_note.created',
        'release_note.published',
        'release_note.unpublished',
      ]);
    });

    it('deletes a note with its view records (204)', async () => {
      const app = await registerApp(t);
      const note = await createReleaseNote(app, { version: '2.0.0', isPublished: true });
      await seen(app, 'device-1', note.id).expect(204);
      expect(await t.sql(`SELECT 1 FROM release_note_views WHERE release_note_id = $1`, [note.id])).toHaveLength(1);
      await app.owner.delete(`${NOTES}/${note.id}`).expect(204);
      expect(await t.sql(`SELECT 1 FROM release_note_views WHERE release_note_id = $1`, [note.id])).toHaveLength(0);
      await app.owner.get(`${NOTES}/${note.id}`).expect(404);
      await app.owner.delete(`${NOTES}/${note.id}`).expect(404);
      await createReleaseNote(app, { version: '2.0.0' });
    });

    it('lets any member read and Members and above write; keys need release_notes scopes', async () => {
      const app = await registerApp(t);
      const note = await createReleaseNote(app);
      const viewer = await createUser(t, { org: app.org, role: 'viewer' });
      const viewerAgent = await signIn(t, viewer.email);
      await viewerAgent.get(NOTES).expect(200);
      await viewerAgent.get(`${NOTES}/${note.id}`).expect(200);
      await viewerAgent.post(NOTES).send({ appId: app.id, version: '9.0', title: 'T', body: 'B' }).expect(403);
      await viewerAgent.patch(`${NOTES}/${note.id}`).send({ title: 'x' }).expect(403);
      await viewerAgent.post(`${NOTES}/${note.id}/publish`).expect(403);
      await viewerAgent.delete(`${NOTES}/${note.id}`).expect(403);
      const member = await createUser(t, { org: app.org, role: 'member' });
      await createReleaseNote(app, { version: '9.0' }, await signIn(t, member.email));

      const read = `Bearer ${await createApiKey(t, app.org, ['release_notes:read'])}`;
      const write = `Bearer ${await createApiKey(t, app.org, ['release_notes:write'])}`;
      await t.http().get(NOTES).set('Authorization', read).expect(200);
      await t.http().post(`${NOTES}/${note.id}/publish`).set('Authorization', read).expect(403);
      await t.http().post(`${NOTES}/${note.id}/publish`).set('Authorization', write).expect(200);
      await t
        .http()
        .post(NOTES)
        .set('Authorization', write)
        .send({ appId: app.id, version: '9.1', title: 'T', body: 'B' })
        .expect(201);
      await t.http().get(NOTES).set('Authorization', write).expect(403);
      await t
        .http()
        .get(NOTES)
        .set('Authorization', `Bearer ${await createApiKey(t, app.org, ['feedback:read'])}`)
        .expect(403);
      await t.http().get(NOTES).expect(401);
    });
  });

  describe('SDK delivery', () => {
    let app: RegisteredApp;
    beforeAll(async () => {
      app = await registerApp(t);
      for (const version of ['1.0.0', '1.1.0', '2.0.0-beta.1', '2.0.0', '2.0.1', '10.0']) {
        await createReleaseNote(app, { version, isPublished: true });
      }
      await createReleaseNote(app, { version: '1.5.0' });
      await createReleaseNote(await siblingApp(app), { version: '1.2.0', isPublished: true });
    });

    it.each([
      ['1.0.0', '1.0.0', []],
      ['2.0.0', '2.0.0', []],
      ['1.0.0', '1.1.0', ['1.1.0']],
      ['1.0', '2.0', ['2.0.0', '2.0.0-beta.1', '1.1.0']],
      ['1.1.0', '2.0.0-beta.1', ['2.0.0-beta.1']],
      ['2.0.0-beta.1', '2.0.0', ['2.0.0']],
      ['1.9', '2.0.0-alpha', []],
      ['0.9', '1.0.0', ['1.0.0']],
      ['2.0.1', '1.0.0', []],
      ['2.0.1', '9.9.9', []],
      ['9.0', '10.0.0', ['10.0']],
      ['1.1.0', '1.9.9', []],
    ])('installed %s, current %s shows %j', async (installed, current, expected) => {
      expect(await pendingVersions(app, `table-${randomUUID()}`, installed, current)).toEqual(expected);
    });

    it("answers in the note form and never shows unpublished notes or other apps' notes", async () => {
      const response = await pending(app, 'shape-device', '1.1.0', '1.9').expect(200);
      expect(response.body).toEqual({ items: [] });
      const one = await pending(app, 'shape-device', '1.0.0', '1.1.0').expect(200);
      expect(one.body.items).toEqual([
        {
          id: expect.any(String),
          appId: app.id,
          version: '1.1.0',
          title: 'What is new',
          body: 'Bug fixes',
          isPublished: true,
          publishedAt: expect.any(String),
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      ]);
    });

    it('does not show a seen note again, even after unpublishing and republishing it', async () => {
      const device = `device-${randomUUID()}`;
      const [note] = (await pending(app, device, '1.0.0', '1.1.0').expect(200)).body.items as ReleaseNote[];
      await seen(app, device, note.id).expect(204);
      await seen(app, device, note.id).expect(204);
      expect(await pendingVersions(app, device, '1.0.0', '1.1.0')).toEqual([]);
      expect(await pendingVersions(app, 'another-device', '1.0.0', '1.1.0')).toEqual(['1.1.0']);
      await app.owner.post(`${NOTES}/${note.id}/unpublish`).expect(200);
      expect(await pendingVersions(app, 'another-device', '1.0.0', '1.1.0')).toEqual([]);
      await app.owner.post(`${NOTES}/${note.id}/publish`).expect(200);
      expect(await pendingVersions(app, device, '1.0.0', '1.1.0')).toEqual([]);
      expect(await pendingVersions(app, 'another-device', '1.0.0', '1.1.0')).toEqual(['1.1.0']);
      const views = await t.sql(`SELECT device_id FROM release_note_views WHERE release_note_id = $1`, [note.id]);
      expect(views).toEqual([{ device_id: device }]);
    });

    it("takes the device from its token when one is sent: another device's X-Device-ID is 403 device_id_mismatch, another app's token 401", async () => {
      const { device, token } = await attestDevice(t, app);
      const victim = `victim-${randomUUID()}`;
      const url = `${PENDING}?installedVersion=1.0.0&currentVersion=1.1.0`;
      const withToken = (request: ReturnType<ReturnType<typeof sdk>['get']>) =>
        request.set('Authorization', `Bearer ${token}`);
      const [note] = (await withToken(sdk(t, app).get(url)).expect(200)).body.items as ReleaseNote[];
      expect(note.version).toBe('1.1.0');

      // Naming another device with the token: refused, on reading and on marking seen, and nothing recorded.
      const read = await withToken(sdk(t, app).get(url)).set('X-Device-ID', victim).expect(403);
      expect(read.body).toMatchObject({ code: 'device_id_mismatch', requestId: expect.any(String) });
      const marked = await sdk(t, app)
        .post(`/api/v1/release-notes/${note.id}/seen`)
        .set('Authorization', `Bearer ${token}`)
        .set('X-Device-ID', victim)
        .expect(403);
      expect(marked.body.code).toBe('device_id_mismatch');
      expect(await pendingVersions(app, victim, '1.0.0', '1.1.0')).toEqual(['1.1.0']);

      // The token (with or without its own subject repeated) marks its own device's note seen.
      await sdk(t, app)
        .post(`/api/v1/release-notes/${note.id}/seen`)
        .set('Authorization', `Bearer ${token}`)
        .expect(204);
      expect((await withToken(sdk(t, app).get(url)).set('X-Device-ID', device.keyId).expect(200)).body.items).toEqual(
        [],
      );
      expect(await pendingVersions(app, device.keyId, '1.0.0', '1.1.0')).toEqual([]);

      // A token of another app is refused, not ignored.
      const other = await registerApp(t);
      const foreign = (await attestDevice(t, other)).token;
      await sdk(t, app).get(url).set('Authorization', `Bearer ${foreign}`).set('X-Device-ID', victim).expect(401);
    });

    it('needs X-Device-ID, valid versions and a note of the app', async () => {
      const url = `${PENDING}?installedVersion=1.0.0&currentVersion=2.0.0`;
      expect((await sdk(t, app).get(url).expect(400)).body.error).toContain('X-Device-ID');
      expect((await pending(app, 'd', 'latest', '2.0.0').expect(422)).body.fields[0].field).toBe('installedVersion');
      expect(
        (await sdk(t, app).get(`${PENDING}?installedVersion=1.0.0`).set('X-Device-ID', 'd').expect(422)).body.fields[0]
          .field,
      ).toBe('currentVersion');
      const note = (await pending(app, 'd', '1.0.0', '1.1.0').expect(200)).body.items[0] as ReleaseNote;
      await sdk(t, app).post(`/api/v1/release-notes/${note.id}/seen`).expect(400);
      await seen(await siblingApp(app), 'd', note.id).expect(404);
      await seen(app, 'd', randomUUID()).expect(404);
      await seen(app, 'd', 'not-a-uuid').expect(400);
      await t.http().get(url).set('X-Device-ID', 'd').expect(400);
      expect(
        (await sdk(t, { bundleId: 'com.example.nobody' }).get(url).set('X-Device-ID', 'd').expect(404)).body.code,
      ).toBe('app_not_found');
    });
  });
});
