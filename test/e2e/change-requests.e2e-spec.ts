import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createUser, signIn } from '../factories/identity.js';
import { createWebhookEndpoint } from '../factories/webhooks.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { attestDevice, fabricatedRootEnv, registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

interface Team {
  app: RegisteredApp;
  /** An Admin who authors changes. */
  author: HttpClient;
  /** A Member who neither authored nor may decide. */
  member: HttpClient;
  flagId: string;
}

describe('change approvals', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  const env = (flagId: string, environment = 'production') =>
    `/api/v1/dashboard/flags/${flagId}/environments/${environment}`;
  const requests = '/api/v1/dashboard/change-requests';
  const version = async (flagId: string) =>
    (await t.sql<{ version: number }>(`SELECT version FROM feature_flags WHERE id = $1`, [flagId]))[0].version;

  async function team(): Promise<Team> {
    const app = await registerApp(t, 'enterprise');
    const author = await signIn(t, (await createUser(t, { org: app.org, role: 'admin' })).email);
    const member = await signIn(t, (await createUser(t, { org: app.org, role: 'member' })).email);
    const flag = await app.owner
      .post(`/api/v1/dashboard/apps/${app.id}/flags`)
      .send({ key: 'guarded', name: 'Guarded', valueType: 'boolean', defaultValue: 'false' })
      .expect(201);
    const flagId = flag.body.id as string;
    await member
      .put(`${env(flagId)}/approval`)
      .send({ requireApproval: true })
      .expect(403);
    const marked = await author
      .put(`${env(flagId)}/approval`)
      .send({ requireApproval: true })
      .expect(200);
    expect(marked.body.environments.production.requireApproval).toBe(true);
    return { app, author, member, flagId };
  }

  it('turns a change of a protected environment into a request that an Admin other than the author approves, and applying it does what the change does', async () => {
    const { app, author, member, flagId } = await team();
    await createWebhookEndpoint(app.owner, 'http://127.0.0.1:9/hooks', ['flag.updated']);
    const before = await version(flagId);
    const proposed = await author.put(env(flagId)).send({ enabled: true, value: 'true', rules: [] }).expect(202);
    expect(proposed.body).toMatchObject({
      flagId,
      flagKey: 'guarded',
      kind: 'environment',
      environment: 'production',
      state: 'pending',
      baseVersion: before,
      change: { enabled: true, value: 'true', rules: [] },
    });
    expect(await version(flagId)).toBe(before);
    const id = proposed.body.id as string;

    const listed = await member.get(`${requests}?state=pending&flagId=${flagId}`).expect(200);
    expect(listed.body.map((r: { id: string }) => r.id)).toEqual([id]);
    const detail = await member.get(`${requests}/${id}`).expect(200);
    expect(detail.body.diff).toEqual({
      before: { enabled: false, value: 'false', rules: [], requireApproval: true },
      after: { enabled: true, value: 'true', rules: [] },
    });

    // Never the author; a Member may not decide at all.
    const self = await author.post(`${requests}/${id}/approve`).expect(403);
    expect(self.body.code).toBe('self_approval');
    expect((await author.post(`${requests}/${id}/reject`).expect(403)).body.code).toBe('self_approval');
    await member.post(`${requests}/${id}/approve`).expect(403);
    await author.post(`${requests}/${id}/apply`).expect(409);

    const approved = await app.owner.post(`${requests}/${id}/approve`).expect(200);
    expect(approved.body).toMatchObject({ state: 'approved', decidedBy: expect.any(String) });
    await app.owner.post(`${requests}/${id}/approve`).expect(409);
    // Only the author or an Admin applies.
    await member.post(`${requests}/${id}/apply`).expect(403);
    const applied = await author.post(`${requests}/${id}/apply`).expect(200);
    expect(applied.body).toMatchObject({ state: 'applied', appliedVersion: before + 1 });
    await author.post(`${requests}/${id}/apply`).expect(409);

    const flag = (await app.owner.get(`/api/v1/dashboard/flags/${flagId}`).expect(200)).body;
    expect(flag.environments.production).toMatchObject({ enabled: true, value: 'true', requireApproval: true });
    const { token } = await attestDevice(t, app);
    const served = await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${token}`).expect(200);
    expect(served.body.flags.guarded).toBe(true);
    const events = await t.sql<{ data: { version: number } }>(
      `SELECT data FROM webhook_events WHERE organization_id = $1 AND event_type = 'flag.updated' ORDER BY occurred_at`,
      [app.org.id],
    );
    expect(events.at(-1)!.data.version).toBe(before + 1);
    const audit = await t.sql<{ action: string }>(
      `SELECT action FROM audit_logs WHERE organization_id = $1 AND metadata->>'changeRequestId' = $2 ORDER BY created_at`,
      [app.org.id, id],
    );
    // The flag's change and the request's `applied` share one transaction (and one timestamp).
    expect(audit.map((a) => a.action).sort()).toEqual([
      'flag.updated',
      'flag_change_request.applied',
      'flag_change_request.approved',
      'flag_change_request.created',
    ]);
  });

  it('marks a request stale once the flag changed, and refuses to approve or apply it (409)', async () => {
    const { app, author, flagId } = await team();
    const first = (await author.put(env(flagId)).send({ enabled: true, value: 'true', rules: [] }).expect(202)).body;
    const second = (await author.put(env(flagId)).send({ enabled: false, value: 'false', rules: [] }).expect(202)).body;
    await app.owner.post(`${requests}/${first.id}/approve`).expect(200);
    // A direct change of the unprotected staging environment moves the flag on.
    await author.put(env(flagId, 'staging')).send({ enabled: true, value: 'true', rules: [] }).expect(200);
    expect((await app.owner.get(`${requests}/${first.id}`).expect(200)).body.state).toBe('stale');
    const stale = await author.post(`${requests}/${first.id}/apply`).expect(409);
    expect(stale.body.code).toBe('change_request_stale');
    expect((await app.owner.post(`${requests}/${second.id}/approve`).expect(409)).body.code).toBe(
      'change_request_stale',
    );
    const staleList = await app.owner.get(`${requests}?state=stale`).expect(200);
    expect(staleList.body.map((r: { id: string }) => r.id).sort()).toEqual([first.id, second.id].sort());
    expect((await app.owner.get(`/api/v1/dashboard/flags/${flagId}`)).body.environments.production.enabled).toBe(false);
  });

  it('rejects, and routes rollbacks and schedule creation on a protected environment through requests too', async () => {
    const { app, author, flagId } = await team();
    const rejected = (await author.put(env(flagId)).send({ enabled: true, value: 'true', rules: [] }).expect(202)).body;
    expect((await app.owner.post(`${requests}/${rejected.id}/reject`).expect(200)).body.state).toBe('rejected');
    await author.post(`${requests}/${rejected.id}/apply`).expect(409);

    const rollback = await author.post(`/api/v1/dashboard/flags/${flagId}/rollback`).send({ version: 1 }).expect(202);
    expect(rollback.body).toMatchObject({ kind: 'rollback', change: { version: 1 } });
    await author.post(`/api/v1/dashboard/flags/${flagId}/rollback`).send({ version: 99 }).expect(404);
    const detail = (await app.owner.get(`${requests}/${rollback.body.id}`).expect(200)).body;
    expect(detail.diff.after.production).toMatchObject({ enabled: false });

    const schedule = await author
      .post(`/api/v1/dashboard/apps/${app.id}/flags/guarded/schedules`)
      .send({
        environment: 'production',
        runAt: new Date(Date.now() + 3_600_000).toISOString(),
        change: { enabled: true },
      })
      .expect(202);
    expect(schedule.body.kind).toBe('schedule');
    expect((await app.owner.get(`/api/v1/dashboard/flags/${flagId}/schedules`).expect(200)).body).toEqual([]);
    await app.owner.post(`${requests}/${schedule.body.id}/approve`).expect(200);
    await author.post(`${requests}/${schedule.body.id}/apply`).expect(200);
    const schedules = (await app.owner.get(`/api/v1/dashboard/flags/${flagId}/schedules`).expect(200)).body;
    expect(schedules).toEqual([expect.objectContaining({ status: 'pending', change: { enabled: true } })]);

    // Clearing the protection (an Admin) lets changes through again.
    await app.owner
      .put(`${env(flagId)}/approval`)
      .send({ requireApproval: false })
      .expect(200);
    await author.put(env(flagId)).send({ enabled: true, value: 'true', rules: [] }).expect(200);
  });

  it('hides other organizations and refuses below Enterprise (403 feature_unavailable)', async () => {
    const { author, flagId } = await team();
    const id = (await author.put(env(flagId)).send({ enabled: true, value: 'true', rules: [] }).expect(202)).body.id;
    const stranger = await registerApp(t, 'enterprise');
    await stranger.owner.get(`${requests}/${id}`).expect(404);
    await stranger.owner.post(`${requests}/${id}/approve`).expect(404);
    expect((await stranger.owner.get(requests).expect(200)).body).toEqual([]);
    await author.get(`${requests}?state=unknown`).expect(422);

    const business = await registerApp(t, 'professional');
    const flag = await business.owner
      .post(`/api/v1/dashboard/apps/${business.id}/flags`)
      .send({ key: 'plain', name: 'Plain', valueType: 'boolean', defaultValue: 'false' })
      .expect(201);
    const refused = await business.owner
      .put(`${env(flag.body.id)}/approval`)
      .send({ requireApproval: true })
      .expect(403);
    expect(refused.body.code).toBe('feature_unavailable');
    expect((await business.owner.get(requests).expect(403)).body.code).toBe('feature_unavailable');
  });
});
