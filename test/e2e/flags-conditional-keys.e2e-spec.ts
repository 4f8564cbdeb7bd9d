import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, signIn } from '../factories/identity.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { attestDevice, fabricatedRootEnv, registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

function createFlag(owner: HttpClient, appId: string, body: Record<string, unknown>) {
  return owner.post(`/api/v1/dashboard/apps/${appId}/flags`).send({ name: 'A flag', ...body });
}

describe('conditional fetches and flag keys', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /api/v1/flags with If-None-Match', () => {
    let app: RegisteredApp;
    let token: string;
    let flagId: string;
    const read = (on: TestApp = t) => sdk(on, app).get('/api/v1/flags').set('Authorization', `Bearer ${token}`);

    beforeAll(async () => {
      app = await registerApp(t);
      token = (await attestDevice(t, app)).token;
      flagId = (await createFlag(app.owner, app.id, { key: 'banner', valueType: 'string', defaultValue: 'off' })).body
        .id;
    });

    it('answers a strong ETag, and 304 without a body to a matching tag', async () => {
      const first = await read().expect(200);
      expect(first.body).toEqual({ flags: { banner: 'off' } });
      const etag = first.headers.etag;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      expect(first.headers['cache-control']).toBe('private, no-cache');
      expect(first.headers['content-type']).toMatch(/^application\/json/);

      const again = await read().set('If-None-Match', etag).expect(304);
      expect(again.text ?? '').toBe('');
      expect(again.headers.etag).toBe(etag);
      // The 304 is still a counted, limited request.
      expect(again.headers['x-ratelimit-limit']).toBe('8000');
      await read().set('If-None-Match', `"stale", W/${etag}`).expect(304);
      await read().set('If-None-Match', '*').expect(304);
      await read().set('If-None-Match', '"something-else"').expect(200);
      // No rule reads the country or the app version: another value of them changes nothing.
      await read().set('X-Country', 'FR').set('X-App-Version', '9.9').set('If-None-Match', etag).expect(304);

      // Another instance serialises the same result to the same bytes, so the tag holds there too.
      const peer = await t.startPeer();
      await read(peer).set('If-None-Match', etag).expect(304);
    });

    it('changes the tag when the evaluated result changes, and per environment and device', async () => {
      const before = (await read().expect(200)).headers.etag;
      await app.owner
        .put(`/api/v1/dashboard/flags/${flagId}/environments/production`)
        .send({
          enabled: true,
          value: 'on',
          rules: [
            {
              name: 'new',
              conditions: [{ attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.0' }],
              value: 'new',
            },
          ],
        })
        .expect(200);
      const after = await read().set('If-None-Match', before).expect(200);
      expect(after.body).toEqual({ flags: { banner: 'on' } });
      expect(after.headers.etag).not.toBe(before);
      const newer = await read().set('X-App-Version', '2.1').set('If-None-Match', after.headers.etag).expect(200);
      expect(newer.body).toEqual({ flags: { banner: 'new' } });
      const staging = await sdk(t, app)
        .get('/api/v1/flags?environment=staging')
        .set('Authorization', `Bearer ${token}`)
        .set('If-None-Match', after.headers.etag)
        .expect(200);
      expect(staging.body).toEqual({ flags: { banner: 'off' } });
    });

    it('answers errors before any conditional logic', async () => {
      await sdk(t, app).get('/api/v1/flags').set('If-None-Match', '*').expect(401);
      await read().query({ environment: 'qa' }).set('If-None-Match', '*').expect(422);
    });
  });

  describe('dashboard routes by flag key', () => {
    it('serves every flag route under /apps/:appId/flags/:flagKey as under /flags/:flagId', async () => {
      const app = await registerApp(t);
      const flag = (
        await createFlag(app.owner, app.id, {
          key: 'dark.mode-v2',
          valueType: 'boolean',
          defaultValue: 'false',
        }).expect(201)
      ).body;
      const base = `/api/v1/dashboard/apps/${app.id}/flags/dark.mode-v2`;
      expect((await app.owner.get(base).expect(200)).body).toEqual(
        (await app.owner.get(`/api/v1/dashboard/flags/${flag.id}`).expect(200)).body,
      );
      // A UUID in the key position is the flag's id.
      expect((await app.owner.get(`/api/v1/dashboard/apps/${app.id}/flags/${flag.id}`).expect(200)).body.key).toBe(
        'dark.mode-v2',
      );
      await app.owner.patch(base).send({ name: 'Dark mode' }).expect(200);
      await app.owner
        .put(`${base}/environments/production`)
        .send({ enabled: true, value: 'true', rules: [] })
        .expect(200);
      const history = await app.owner.get(`${base}/history`).expect(200);
      expect(history.body.map((h: { version: number }) => h.version)).toEqual([3, 2, 1]);
      expect((await app.owner.post(`${base}/rollback`).send({ version: 1 }).expect(200)).body.version).toBe(4);
      const override = await app.owner
        .post(`${base}/overrides`)
        .send({ deviceKeyId: 'tester', forcedValue: 'true' })
        .expect(201);
      expect((await app.owner.get(`${base}/overrides`).expect(200)).body).toHaveLength(1);
      await app.owner.delete(`${base}/overrides/${override.body.id}`).expect(204);
      await app.owner.post(`${base}/overrides`).send({ deviceKeyId: 'x', forcedValue: 'maybe' }).expect(400);
      await app.owner.delete(base).expect(204);
      await app.owner.get(`/api/v1/dashboard/flags/${flag.id}`).expect(404);
      await app.owner.get(base).expect(404);
    });

    it('refuses a malformed key (400), and hides other apps and organizations (404)', async () => {
      const app = await registerApp(t);
      const shared = await createFlag(app.owner, app.id, {
        key: 'shared',
        valueType: 'boolean',
        defaultValue: 'false',
      });
      expect(shared.status).toBe(201);
      await app.owner.get(`/api/v1/dashboard/apps/${app.id}/flags/${encodeURIComponent('bad key!')}`).expect(400);
      await app.owner.get(`/api/v1/dashboard/apps/not-a-uuid/flags/shared`).expect(400);
      await app.owner.get(`/api/v1/dashboard/apps/${app.id}/flags/missing`).expect(404);

      const stranger = await registerApp(t);
      await stranger.owner.get(`/api/v1/dashboard/apps/${app.id}/flags/shared`).expect(404);
      await stranger.owner.delete(`/api/v1/dashboard/apps/${app.id}/flags/shared`).expect(404);
      // Same key in another app of the same organization: each path names its own flag.
      const second = await app.owner
        .post('/api/v1/apps')
        .send({ appName: 'Second', bundleId: `${app.bundleId}.second`, teamId: 'ABCDE12345' })
        .expect(201);
      await app.owner.get(`/api/v1/dashboard/apps/${second.body.id}/flags/shared`).expect(404);
      // A UUID in the key's place is the flag's id only within the app of the path: not another app's
      // flag of the same organization, nor another organization's flag under the caller's own app.
      const byIdElsewhere = `/api/v1/dashboard/apps/${second.body.id}/flags/${shared.body.id}`;
      await app.owner.get(byIdElsewhere).expect(404);
      await app.owner.patch(byIdElsewhere).send({ name: 'moved' }).expect(404);
      await app.owner.delete(byIdElsewhere).expect(404);
      await stranger.owner.get(`/api/v1/dashboard/apps/${stranger.id}/flags/${shared.body.id}`).expect(404);
      await stranger.owner
        .get(`/api/v1/dashboard/apps/${stranger.id}/flags/${String(shared.body.id).toUpperCase()}`)
        .expect(404);
      await app.owner.get(`/api/v1/dashboard/apps/${app.id}/flags/${String(shared.body.id).toUpperCase()}`).expect(200);
      expect((await app.owner.get(`/api/v1/dashboard/flags/${shared.body.id}`).expect(200)).body.name).not.toBe(
        'moved',
      );

      const viewer = await createUser(t, { org: app.org, role: 'viewer' });
      const viewerAgent = await signIn(t, viewer.email);
      await viewerAgent.get(`/api/v1/dashboard/apps/${app.id}/flags/shared`).expect(200);
      await viewerAgent.patch(`/api/v1/dashboard/apps/${app.id}/flags/shared`).send({ name: 'no' }).expect(403);
    });
  });
});
