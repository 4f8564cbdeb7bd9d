import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { siblingApp } from '../factories/apps.js';
import { submitFeatureRequest, type SdkFeature } from '../factories/feedback.js';
import { createApiKey, signedInMember } from '../factories/identity.js';
import { sentMails, startTestApp, type TestApp } from '../harness/test-app.js';
import { registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

const FEATURES = '/api/v1/feedback/features';
const NOTIFICATIONS = '/api/v1/feedback/notifications';
const CONSOLE = '/api/v1/org/feedback';
const PREFERENCES = '/api/v1/org/notification-preferences';
const STATUSES = ['pending', 'open', 'planned', 'in_progress', 'shipped', 'declined', 'duplicate'];

describe('feedback', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const submit = (app: RegisteredApp, body: Record<string, unknown> = {}) => submitFeatureRequest(t, app, body);

  function vote(app: RegisteredApp, featureId: string, body: Record<string, unknown>) {
    return sdk(t, app).post(`${FEATURES}/${featureId}/vote`).send(body);
  }

  async function votes(app: RegisteredApp, featureId: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) await vote(app, featureId, { voterId: `voter-${randomUUID()}` }).expect(201);
  }

  async function setStatus(app: RegisteredApp, featureId: string, status: string): Promise<void> {
    await app.owner.post(`${CONSOLE}/${featureId}/status`).send({ status }).expect(200);
  }

  describe('SDK: feature requests', () => {
    it('files a request as pending under the app of the identity headers', async () => {
      const app = await registerApp(t);
      const response = await sdk(t, app)
        .post(FEATURES)
        .send({
          title: '  Offline mode  ',
          description: 'Work without network',
          submitterId: 'user-1',
          deviceHash: 'device-1',
        })
        .expect(201);
      expect(response.body).toEqual({
        id: expect.any(String),
        appId: app.id,
        title: 'Offline mode',
        description: 'Work without network',
        status: 'pending',
        voteCount: 0,
        commentCount: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const [row] = await t.sql(
        `SELECT organization_id, submitter_id, device_hash FROM feature_requests WHERE id = $1`,
        [response.body.id],
      );
      expect(row).toEqual({ organization_id: app.org.id, submitter_id: 'user-1', device_hash: 'device-1' });
    });

    it('validates the submission and names the field', async () => {
      const app = await registerApp(t);
      const short = await sdk(t, app).post(FEATURES).send({ title: 'ab', submitterId: 'u' }).expect(422);
      expect(short.body.fields[0].field).toBe('title');
      await sdk(t, app)
        .post(FEATURES)
        .send({ title: 'x'.repeat(201), submitterId: 'u' })
        .expect(422);
      await sdk(t, app)
        .post(FEATURES)
        .send({ title: 'x'.repeat(200), submitterId: 'u' })
        .expect(201);
      const noSubmitter = await sdk(t, app).post(FEATURES).send({ title: 'A title' }).expect(422);
      expect(noSubmitter.body.fields[0].field).toBe('submitterId');
      await sdk(t, app)
        .post(FEATURES)
        .send({ title: 'A title', submitterId: 'u', description: 'd'.repeat(5001) })
        .expect(422);
      await sdk(t, app)
        .post(FEATURES)
        .send({ title: 'A title', submitterId: 'u', description: 'd'.repeat(5000) })
        .expect(201);
      await sdk(t, app).post(FEATURES).send({ title: 'A title', submitterId: 'u', isAdmin: true }).expect(422);
    });

    it('needs the identity headers of a registered app (404 with a hint)', async () => {
      await t.http().post(FEATURES).send({ title: 'Dark mode', submitterId: 'u' }).expect(400);
      const unknown = await sdk(t, { bundleId: 'com.example.nobody' }).get(FEATURES).expect(404);
      expect(unknown.body).toMatchObject({ code: 'app_not_found', hint: expect.any(String) });
    });

    it("lists the app's triaged requests with metadata, hiding pending ones except the submitter's own", async () => {
      const app = await registerApp(t);
      const pending = await submit(app, { submitterId: 'alice' });
      const open = await submit(app, { title: 'Widgets' });
      await setStatus(app, open.id, 'open');
      const other = await siblingApp(app);
      await setStatus(app, (await submit(other)).id, 'open');

      const listed = await sdk(t, app).get(FEATURES).expect(200);
      expect(listed.body).toEqual({
        items: [expect.objectContaining({ id: open.id, status: 'open' })],
        metadata: { page: 1, per: 20, total: 1 },
      });
      const own = await sdk(t, app).get(`${FEATURES}?submitter_id=alice`).expect(200);
      expect(own.body.items.map((f: SdkFeature) => f.id).sort()).toEqual([pending.id, open.id].sort());
      const byStatus = await sdk(t, app).get(`${FEATURES}?submitter_id=alice&status=pending`).expect(200);
      expect(byStatus.body.items.map((f: SdkFeature) => f.id)).toEqual([pending.id]);
    });

    it('sorts by votes (default) or newest and pages', async () => {
      const app = await registerApp(t);
      const first = await submit(app, { title: 'First' });
      const second = await submit(app, { title: 'Second' });
      const third = await submit(app, { title: 'Third' });
      for (const feature of [first, second, third]) await setStatus(app, feature.id, 'open');
      await votes(app, first.id, 2);
      await votes(app, second.id, 3);

      const byVotes = await sdk(t, app).get(FEATURES).expect(200);
      expect(byVotes.body.items.map((f: SdkFeature) => [f.title, f.voteCount])).toEqual([
        ['Second', 3],
        ['First', 2],
        ['Third', 0],
      ]);
      const newest = await sdk(t, app).get(`${FEATURES}?sort=newest`).expect(200);
      expect(newest.body.items.map((f: SdkFeature) => f.title)).toEqual(['Third', 'Second', 'First']);
      const paged = await sdk(t, app).get(`${FEATURES}?sort=newest&page=2&per=2`).expect(200);
      expect(paged.body).toEqual({
        items: [expect.objectContaining({ title: 'First' })],
        metadata: { page: 2, per: 2, total: 3 },
      });
      await sdk(t, app).get(`${FEATURES}?sort=oldest`).expect(422);
      await sdk(t, app).get(`${FEATURES}?per=101`).expect(422);
      await sdk(t, app).get(`${FEATURES}?page=0`).expect(422);
    });

    it('shows one request with its comments, oldest first, only to its own app', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      await app.owner.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'Looking into it' }).expect(201);
      await app.owner.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'Planned for 2.0' }).expect(201);
      const response = await sdk(t, app).get(`${FEATURES}/${feature.id}`).expect(200);
      expect(response.body).toMatchObject({ id: feature.id, commentCount: 2 });
      expect(response.body.comments).toEqual([
        { id: expect.any(String), authorType: 'admin', body: 'Looking into it', createdAt: expect.any(String) },
        { id: expect.any(String), authorType: 'admin', body: 'Planned for 2.0', createdAt: expect.any(String) },
      ]);
      await sdk(t, await siblingApp(app))
        .get(`${FEATURES}/${feature.id}`)
        .expect(404);
      await sdk(t, await registerApp(t))
        .get(`${FEATURES}/${feature.id}`)
        .expect(404);
      await sdk(t, app).get(`${FEATURES}/${randomUUID()}`).expect(404);
      await sdk(t, app).get(`${FEATURES}/not-a-uuid`).expect(400);
    });
  });

  describe('SDK: votes', () => {
    it('counts one vote per user and per device (409 for a duplicate by either)', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      const voted = await vote(app, feature.id, { voterId: 'alice', deviceHash: 'phone-a' }).expect(201);
      expect(voted.body).toEqual({
        id: expect.any(String),
        featureRequestId: feature.id,
        createdAt: expect.any(String),
      });
      const sameVoter = await vote(app, feature.id, { voterId: 'alice', deviceHash: 'phone-b' }).expect(409);
      expect(sameVoter.body.code).toBe('duplicate_vote');
      await vote(app, feature.id, { voterId: 'bob', deviceHash: 'phone-a' }).expect(409);
      await vote(app, feature.id, { voterId: 'bob' }).expect(201);
      await vote(app, feature.id, { voterId: 'carol' }).expect(201);
      const shown = await sdk(t, app).get(`${FEATURES}/${feature.id}`).expect(200);
      expect(shown.body.voteCount).toBe(3);
    });

    it('settles concurrent duplicate votes with one 201 and one 409', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      const sameVoter = await Promise.all([
        vote(app, feature.id, { voterId: 'racer' }),
        vote(app, feature.id, { voterId: 'racer' }),
      ]);
      expect(sameVoter.map((r) => r.status).sort()).toEqual([201, 409]);
      const sameDevice = await Promise.all([
        vote(app, feature.id, { voterId: 'dave', deviceHash: 'shared-device' }),
        vote(app, feature.id, { voterId: 'erin', deviceHash: 'shared-device' }),
      ]);
      expect(sameDevice.map((r) => r.status).sort()).toEqual([201, 409]);
      const [row] = await t.sql<{ vote_count: number; votes: string }>(
        `SELECT vote_count, (SELECT count(*) FROM feature_request_votes WHERE feature_request_id = $1) AS votes
           FROM feature_requests WHERE id = $1`,
        [feature.id],
      );
      expect(row).toEqual({ vote_count: 2, votes: '2' });
    });

    it('removes a vote by voter_id (204, also when there is none) so the user can vote again', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      await vote(app, feature.id, { voterId: 'alice', deviceHash: 'phone-a' }).expect(201);
      await sdk(t, app).delete(`${FEATURES}/${feature.id}/vote?voter_id=alice`).expect(204);
      expect((await sdk(t, app).get(`${FEATURES}/${feature.id}`)).body.voteCount).toBe(0);
      await sdk(t, app).delete(`${FEATURES}/${feature.id}/vote?voter_id=alice`).expect(204);
      expect((await sdk(t, app).get(`${FEATURES}/${feature.id}`)).body.voteCount).toBe(0);
      await vote(app, feature.id, { voterId: 'alice', deviceHash: 'phone-a' }).expect(201);
      expect((await sdk(t, app).get(`${FEATURES}/${feature.id}`)).body.voteCount).toBe(1);
      const missing = await sdk(t, app).delete(`${FEATURES}/${feature.id}/vote`).expect(422);
      expect(missing.body.fields[0].field).toBe('voter_id');
    });

    it('refuses votes without a voter, and on requests of other apps (404)', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      expect((await vote(app, feature.id, {}).expect(422)).body.fields[0].field).toBe('voterId');
      const other = await registerApp(t);
      await vote(other, feature.id, { voterId: 'alice' }).expect(404);
      await sdk(t, other).delete(`${FEATURES}/${feature.id}/vote?voter_id=alice`).expect(404);
      await vote(app, randomUUID(), { voterId: 'alice' }).expect(404);
      await vote(app, 'not-a-uuid', { voterId: 'alice' }).expect(400);
    });
  });

  describe('SDK: push channel', () => {
    it('gives the submitter and each voter one record per staff comment', async () => {
      const app = await registerApp(t);
      const feature = await submit(app, { title: 'Export to CSV', submitterId: 'author' });
      await vote(app, feature.id, { voterId: 'author' }).expect(201);
      await vote(app, feature.id, { voterId: 'fan' }).expect(201);
      const comment = await app.owner
        .post(`${CONSOLE}/${feature.id}/comments`)
        .send({ body: 'Shipping next week' })
        .expect(201);

      for (const subscriber of ['author', 'fan']) {
        const listed = await sdk(t, app).get(`${NOTIFICATIONS}?subscriber_id=${subscriber}`).expect(200);
        expect(listed.body).toEqual({
          items: [
            {
              id: expect.any(String),
              type: 'staff_comment',
              featureRequestId: feature.id,
              featureTitle: 'Export to CSV',
              commentId: comment.body.id,
              body: 'Shipping next week',
              createdAt: expect.any(String),
            },
          ],
          metadata: { page: 1, per: 20, total: 1 },
        });
      }
      expect((await sdk(t, app).get(`${NOTIFICATIONS}?subscriber_id=stranger`).expect(200)).body.items).toEqual([]);
      await sdk(t, await registerApp(t))
        .get(`${NOTIFICATIONS}?subscriber_id=fan`)
        .expect(200)
        .expect((r) => {
          expect(r.body.metadata.total).toBe(0);
        });

      await app.owner.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'Shipped!' }).expect(201);
      const latest = await sdk(t, app).get(`${NOTIFICATIONS}?subscriber_id=fan&per=1`).expect(200);
      expect(latest.body.items.map((n: { body: string }) => n.body)).toEqual(['Shipped!']);
      expect(latest.body.metadata).toEqual({ page: 1, per: 1, total: 2 });
      await sdk(t, app).get(NOTIFICATIONS).expect(422);
    });
  });

  describe('console', () => {
    it('lists with the flat envelope, votes first by default, newest and oldest on request', async () => {
      const app = await registerApp(t);
      const a = await submit(app, { title: 'Alpha' });
      const b = await submit(app, { title: 'Bravo' });
      const c = await submit(app, { title: 'Charlie' });
      await votes(app, b.id, 2);
      await votes(app, a.id, 1);

      const byVotes = await app.owner.get(CONSOLE).expect(200);
      expect(byVotes.body).toEqual({
        items: [
          expect.objectContaining({ id: b.id, vote_count: 2 }),
          expect.objectContaining({ id: a.id, vote_count: 1 }),
          expect.objectContaining({ id: c.id, vote_count: 0 }),
        ],
        page: 1,
        per: 20,
        total: 3,
      });
      expect(byVotes.body.items[0]).toEqual({
        id: b.id,
        app_id: app.id,
        title: 'Bravo',
        description: 'Please add a dark theme',
        status: 'pending',
        submitter_id: expect.any(String),
        vote_count: 2,
        comment_count: 0,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const titles = async (query: string) =>
        (await app.owner.get(`${CONSOLE}?${query}`).expect(200)).body.items.map(
          (f: { title: string }) => f.title,
        ) as string[];
      expect(await titles('sort=votes')).toEqual(['Bravo', 'Alpha', 'Charlie']);
      expect(await titles('sort=newest')).toEqual(['Charlie', 'Bravo', 'Alpha']);
      expect(await titles('sort=oldest')).toEqual(['Alpha', 'Bravo', 'Charlie']);
      const paged = await app.owner.get(`${CONSOLE}?sort=oldest&page=2&per=2`).expect(200);
      expect(paged.body).toMatchObject({
        page: 2,
        per: 2,
        total: 3,
        items: [expect.objectContaining({ title: 'Charlie' })],
      });
      const beyond = await app.owner.get(`${CONSOLE}?page=5&per=2`).expect(200);
      expect(beyond.body).toMatchObject({ items: [], total: 3 });
    });

    it('pages 20 by default and up to 100', async () => {
      const app = await registerApp(t);
      for (let i = 0; i < 21; i++) await submit(app, { title: `Request ${i}` });
      const first = await app.owner.get(CONSOLE).expect(200);
      expect(first.body).toMatchObject({ page: 1, per: 20, total: 21 });
      expect(first.body.items).toHaveLength(20);
      expect((await app.owner.get(`${CONSOLE}?per=100`).expect(200)).body.items).toHaveLength(21);
      expect((await app.owner.get(`${CONSOLE}?per=1`).expect(200)).body.items).toHaveLength(1);
    });

    it('filters by status and app', async () => {
      const app = await registerApp(t);
      const other = await siblingApp(app);
      const mine = await submit(app, { title: 'Mine' });
      const theirs = await submit(other, { title: 'Theirs' });
      await setStatus(app, theirs.id, 'planned');
      const ids = async (query: string) =>
        (await app.owner.get(`${CONSOLE}?${query}`).expect(200)).body.items.map(
          (f: { id: string }) => f.id,
        ) as string[];
      expect(await ids('status=pending')).toEqual([mine.id]);
      expect(await ids('status=planned')).toEqual([theirs.id]);
      expect(await ids('status=shipped')).toEqual([]);
      expect(await ids(`app_id=${other.id}`)).toEqual([theirs.id]);
      expect(await ids(`app_id=${app.id}&status=pending`)).toEqual([mine.id]);
      expect(await ids(`app_id=${randomUUID()}`)).toEqual([]);
    });

    it('searches title and description case-insensitively, taking wildcards literally', async () => {
      const app = await registerApp(t);
      const dark = await submit(app, { title: 'Dark MODE', description: 'Easier on the eyes' });
      const sync = await submit(app, { title: 'Sync', description: 'iCloud sync for dark-mode settings' });
      const percent = await submit(app, { title: 'Show 100% zoom', description: 'Zoom level' });
      const underscore = await submit(app, { title: 'snake_case keys', description: 'For exports' });
      await submit(app, { title: 'Other', description: 'snakeXcase and 1000 zoom' });
      const ids = async (search: string) =>
        (await app.owner.get(`${CONSOLE}?search=${encodeURIComponent(search)}&sort=oldest`).expect(200)).body.items.map(
          (f: { id: string }) => f.id,
        ) as string[];
      expect(await ids('dark')).toEqual([dark.id, sync.id]);
      expect(await ids('ICLOUD')).toEqual([sync.id]);
      expect(await ids('100%')).toEqual([percent.id]);
      expect(await ids('e_c')).toEqual([underscore.id]);
      expect(await ids('nothing like this')).toEqual([]);
    });

    it('answers invalid filters, pagination and ids with 400', async () => {
      const app = await registerApp(t);
      for (const query of [
        'status=new',
        'sort=popular',
        'page=0',
        'page=x',
        'per=0',
        'per=101',
        'app_id=nope',
        'color=red',
      ]) {
        const response = await app.owner.get(`${CONSOLE}?${query}`);
        expect([query, response.status]).toEqual([query, 400]);
      }
      const status = await app.owner.get(`${CONSOLE}?status=new`).expect(400);
      expect(status.body.error).toContain(STATUSES.join(', '));
      await app.owner.get(`${CONSOLE}/not-a-uuid`).expect(400);
      await app.owner.post(`${CONSOLE}/not-a-uuid/status`).send({ status: 'open' }).expect(400);
    });

    it('shows one request with its comments oldest first', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      const first = await app.owner.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'First' }).expect(201);
      await app.owner.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'Second' }).expect(201);
      const response = await app.owner.get(`${CONSOLE}/${feature.id}`).expect(200);
      expect(response.body.feature).toMatchObject({ id: feature.id, comment_count: 2 });
      expect(response.body.comments.map((c: { body: string }) => c.body)).toEqual(['First', 'Second']);
      expect(response.body.comments[0]).toEqual(first.body);
    });

    it('moves a request to any state and refuses unknown ones with the accepted values (400)', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      for (const status of [...STATUSES.slice(1), 'pending', 'shipped']) {
        const response = await app.owner.post(`${CONSOLE}/${feature.id}/status`).send({ status }).expect(200);
        expect(response.body).toMatchObject({ id: feature.id, status });
      }
      const bad = await app.owner.post(`${CONSOLE}/${feature.id}/status`).send({ status: 'done' }).expect(400);
      expect(bad.body).toMatchObject({ code: 'bad_request' });
      expect(bad.body.error).toContain(STATUSES.join(', '));
      await app.owner.post(`${CONSOLE}/${feature.id}/status`).send({}).expect(400);
      const audit = await t.sql(
        `SELECT metadata FROM audit_logs WHERE resource_id = $1 AND action = 'feature_request.status_changed'`,
        [feature.id],
      );
      expect(audit).toHaveLength(STATUSES.length + 1);
    });

    it('adds staff comments of 1 to 5,000 characters as admin (201)', async () => {
      const app = await registerApp(t);
      const { user, agent } = await signedInMember(t, app.org, 'member');
      const feature = await submit(app);
      const created = await agent.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'x' }).expect(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        author_id: user.id,
        author_type: 'admin',
        body: 'x',
        created_at: expect.any(String),
      });
      await agent
        .post(`${CONSOLE}/${feature.id}/comments`)
        .send({ body: 'y'.repeat(5000) })
        .expect(201);
      for (const body of [{ body: '' }, { body: '   ' }, {}, { body: 'z'.repeat(5001) }, { body: 42 }]) {
        const response = await agent.post(`${CONSOLE}/${feature.id}/comments`).send(body);
        expect(response.status).toBe(400);
      }
      expect((await agent.get(`${CONSOLE}/${feature.id}`).expect(200)).body.feature.comment_count).toBe(2);
    });

    it("hides other organizations' requests (404)", async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      const stranger = await registerApp(t);
      await stranger.owner.get(`${CONSOLE}/${feature.id}`).expect(404);
      await stranger.owner.post(`${CONSOLE}/${feature.id}/status`).send({ status: 'open' }).expect(404);
      await stranger.owner.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'hi' }).expect(404);
      expect((await stranger.owner.get(CONSOLE).expect(200)).body.total).toBe(0);
      expect((await stranger.owner.get(`${CONSOLE}?app_id=${app.id}`).expect(200)).body.total).toBe(0);
    });

    it('lets viewers read and members manage', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      const viewer = (await signedInMember(t, app.org, 'viewer')).agent;
      await viewer.get(CONSOLE).expect(200);
      await viewer.get(`${CONSOLE}/${feature.id}`).expect(200);
      await viewer.post(`${CONSOLE}/${feature.id}/status`).send({ status: 'open' }).expect(403);
      await viewer.post(`${CONSOLE}/${feature.id}/comments`).send({ body: 'hi' }).expect(403);
      const member = (await signedInMember(t, app.org, 'member')).agent;
      await member.post(`${CONSOLE}/${feature.id}/status`).send({ status: 'open' }).expect(200);
      await t.http().get(CONSOLE).expect(401);
    });

    it('takes feedback:read keys for reads and feedback:manage keys for triage', async () => {
      const app = await registerApp(t);
      const feature = await submit(app);
      const bearer = (key: string) => `Bearer ${key}`;
      const read = await createApiKey(t, app.org, ['feedback:read']);
      const manage = await createApiKey(t, app.org, ['feedback:manage']);
      const write = await createApiKey(t, app.org, ['feedback:write']);
      await t.http().get(CONSOLE).set('Authorization', bearer(read)).expect(200);
      await t.http().get(`${CONSOLE}/${feature.id}`).set('Authorization', bearer(read)).expect(200);
      await t
        .http()
        .post(`${CONSOLE}/${feature.id}/status`)
        .set('Authorization', bearer(read))
        .send({ status: 'open' })
        .expect(403);
      await t
        .http()
        .post(`${CONSOLE}/${feature.id}/status`)
        .set('Authorization', bearer(manage))
        .send({ status: 'open' })
        .expect(200);
      const comment = await t
        .http()
        .post(`${CONSOLE}/${feature.id}/comments`)
        .set('Authorization', bearer(manage))
        .send({ body: 'From the triage bot' })
        .expect(201);
      expect(comment.body.author_type).toBe('admin');
      await t.http().get(CONSOLE).set('Authorization', bearer(write)).expect(403);
      const foreign = await createApiKey(t, (await registerApp(t)).org, ['feedback:read']);
      await t.http().get(`${CONSOLE}/${feature.id}`).set('Authorization', bearer(foreign)).expect(404);
    });
  });

  describe('notifications', () => {
    async function staff(app: RegisteredApp) {
      const admin = (await signedInMember(t, app.org, 'admin')).user;
      const member = (await signedInMember(t, app.org, 'member')).user;
      return { admin, member };
    }

    it('mails Admins and Owners about a new request, only while newFeatureRequest is on', async () => {
      const app = await registerApp(t);
      const { admin, member } = await staff(app);
      await submit(app, { title: 'Calendar sync' });
      await waitFor(() => sentMails(t, admin.email).length === 1);
      const [mail] = sentMails(t, admin.email);
      expect(mail.subject).toContain('Calendar sync');
      expect(mail.links.some((link) => link.includes('/feedback/'))).toBe(true);
      const [owner] = await t.sql<{ email: string }>(
        `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1 AND m.role = 'owner'`,
        [app.org.id],
      );
      await waitFor(() => sentMails(t, owner.email).length === 1);
      expect(sentMails(t, member.email)).toHaveLength(0);

      await app.owner.patch(PREFERENCES).send({ newFeatureRequest: false }).expect(200);
      await submit(app, { title: 'Muted request' });
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(1);
    });

    it('mails once when a request reaches the vote threshold, only while featureVoteThreshold is on', async () => {
      const app = await registerApp(t);
      const { admin } = await staff(app);
      await app.owner.patch(PREFERENCES).send({ newFeatureRequest: false, featureVoteThresholdCount: 3 }).expect(200);
      const feature = await submit(app, { title: 'Popular idea' });
      await votes(app, feature.id, 2);
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(0);
      await vote(app, feature.id, { voterId: 'third' }).expect(201);
      await waitFor(() => sentMails(t, admin.email).length === 1);
      expect(sentMails(t, admin.email)[0].subject).toContain('Popular idea');
      await sdk(t, app).delete(`${FEATURES}/${feature.id}/vote?voter_id=third`).expect(204);
      await vote(app, feature.id, { voterId: 'third' }).expect(201);
      await votes(app, feature.id, 2);
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(1);

      await app.owner.patch(PREFERENCES).send({ featureVoteThreshold: false }).expect(200);
      const quiet = await submit(app, { title: 'Quiet idea' });
      await votes(app, quiet.id, 4);
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(1);
    });

    it('mails a status change, only while featureStatusChange is on and the status really changes', async () => {
      const app = await registerApp(t);
      const { admin } = await staff(app);
      await app.owner.patch(PREFERENCES).send({ newFeatureRequest: false }).expect(200);
      const feature = await submit(app, { title: 'Apple Watch app' });
      await setStatus(app, feature.id, 'planned');
      await waitFor(() => sentMails(t, admin.email).length === 1);
      expect(sentMails(t, admin.email)[0].subject).toContain('planned');
      await setStatus(app, feature.id, 'planned');
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(1);
      await app.owner.patch(PREFERENCES).send({ featureStatusChange: false }).expect(200);
      await setStatus(app, feature.id, 'shipped');
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(1);
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Gives a notice that should not be sent the time it would take to be written. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 400));
}
