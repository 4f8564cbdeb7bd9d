import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FlagScheduleJob } from '../../src/flags/flag-schedule.job.js';
import { createUser, signIn } from '../factories/identity.js';
import { createWebhookEndpoint } from '../factories/webhooks.js';
import { createFlag } from '../factories/flags.js';
import { sentMails, startTestApp, type TestApp } from '../harness/test-app.js';
import { attestDevice, fabricatedRootEnv, registerApp, sdk } from '../support/sdk-client.js';
import { eventually } from '../support/webhook-receiver.js';

const MINUTE = 60_000;
const inMinutes = (minutes: number) => new Date(Date.now() + minutes * MINUTE).toISOString();

describe('scheduled flag changes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  const schedules = (flagId: string) => `/api/v1/dashboard/flags/${flagId}/schedules`;
  const version = async (flagId: string) =>
    (await t.sql<{ version: number }>(`SELECT version FROM feature_flags WHERE id = $1`, [flagId]))[0]?.version;
  const statusOf = async (scheduleId: string) =>
    (
      await t.sql<{ status: string; failure_reason: string | null }>(
        `SELECT status, failure_reason FROM feature_flag_schedules WHERE id = $1`,
        [scheduleId],
      )
    )[0];

  it('applies a due change exactly once while two instances run the job, with everything a dashboard change brings', async () => {
    const app = await registerApp(t);
    const ownerEmail = (
      await t.sql<{ email: string }>(
        `SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.organization_id = $1`,
        [app.org.id],
      )
    )[0].email;
    await createWebhookEndpoint(app.owner, 'http://127.0.0.1:9/hooks', ['flag.updated']);
    const flags = [];
    for (let i = 0; i < 6; i++) flags.push(await createFlag(app.owner, app.id, `launch_${i}`));
    const created = [];
    for (const flag of flags) {
      const response = await app.owner
        .post(schedules(flag.id))
        .send({ environment: 'production', runAt: inMinutes(30), change: { enabled: true, value: 'true' } })
        .expect(201);
      created.push(response.body);
    }
    expect(created[0]).toEqual({
      id: expect.any(String),
      flagId: flags[0].id,
      environment: 'production',
      runAt: expect.any(String),
      change: { enabled: true, value: 'true' },
      status: 'pending',
      failureReason: null,
      appliedVersion: null,
      createdBy: ownerEmail,
      createdAt: expect.any(String),
      appliedAt: null,
    });
    const { token } = await attestDevice(t, app);
    const peer = await t.startPeer();
    const read = (on: TestApp) => sdk(on, app).get('/api/v1/flags').set('Authorization', `Bearer ${token}`);
    expect((await read(peer).expect(200)).body.flags.launch_0).toBe(false);

    // Not yet due: nothing happens.
    await t.app.get(FlagScheduleJob).run();
    expect(await version(flags[0].id)).toBe(1);

    // Both instances sweep at the same moment, past the schedules' time.
    const later = new Date(Date.now() + 31 * MINUTE);
    const [here, there] = await Promise.all([
      t.app.get(FlagScheduleJob).run(later),
      peer.app.get(FlagScheduleJob).run(later),
    ]);
    expect(here + there).toBe(flags.length);
    await Promise.all([t.app.get(FlagScheduleJob).run(later), peer.app.get(FlagScheduleJob).run(later)]);

    for (const [index, flag] of flags.entries()) {
      expect(await version(flag.id)).toBe(2);
      const history = (await app.owner.get(`/api/v1/dashboard/flags/${flag.id}/history`).expect(200)).body;
      expect(history.map((h: { version: number; change: string }) => [h.version, h.change])).toEqual([
        [2, 'scheduled: production enabled, 0 rules'],
        [1, 'created'],
      ]);
      const listed = (await app.owner.get(schedules(flag.id)).expect(200)).body;
      expect(listed).toEqual([
        { ...created[index], status: 'applied', appliedVersion: 2, appliedAt: expect.any(String) },
      ]);
    }
    const audits = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_logs
        WHERE organization_id = $1 AND action = 'flag.updated' AND metadata ? 'scheduleId'`,
      [app.org.id],
    );
    expect(audits[0].n).toBe(flags.length);
    const events = await t.sql<{ data: { flag_key: string; version: number } }>(
      `SELECT data FROM webhook_events WHERE organization_id = $1 AND event_type = 'flag.updated'`,
      [app.org.id],
    );
    expect(events.map((e) => e.data.flag_key).sort()).toEqual(flags.map((f) => f.key).sort());
    // Every instance's flag cache hears of it: the peer serves the new value.
    await eventually(async () => (await read(peer)).body.flags?.launch_0 === true, { timeoutMs: 5_000 });
    await eventually(
      () =>
        sentMails(t, ownerEmail).filter((mail) => mail.subject === 'Flag launch_0 switched on in production').length ===
        1,
      { timeoutMs: 5_000 },
    );
  });

  it('never applies a cancelled schedule, and refuses to cancel one twice or one already applied', async () => {
    const app = await registerApp(t);
    const flag = await createFlag(app.owner, app.id, 'cancelled_launch');
    const schedule = (
      await app.owner
        .post(schedules(flag.id))
        .send({ environment: 'staging', runAt: inMinutes(10), change: { enabled: true } })
        .expect(201)
    ).body;
    await app.owner.delete(`${schedules(flag.id)}/${schedule.id}`).expect(204);
    const again = await app.owner.delete(`${schedules(flag.id)}/${schedule.id}`).expect(409);
    expect(again.body.error).toBe('The schedule is cancelled and can no longer be cancelled');
    await t.app.get(FlagScheduleJob).run(new Date(Date.now() + 20 * MINUTE));
    expect(await statusOf(schedule.id)).toEqual({ status: 'cancelled', failure_reason: null });
    expect(await version(flag.id)).toBe(1);

    const applied = (
      await app.owner
        .post(schedules(flag.id))
        .send({ environment: 'staging', runAt: inMinutes(10), change: { enabled: true } })
        .expect(201)
    ).body;
    await t.app.get(FlagScheduleJob).run(new Date(Date.now() + 20 * MINUTE));
    expect((await statusOf(applied.id)).status).toBe('applied');
    await app.owner.delete(`${schedules(flag.id)}/${applied.id}`).expect(409);
    const audit = await t.sql<{ action: string }>(
      `SELECT action FROM audit_logs WHERE organization_id = $1 AND action LIKE 'flag_schedule.%' ORDER BY created_at`,
      [app.org.id],
    );
    expect(audit.map((a) => a.action)).toEqual([
      'flag_schedule.created',
      'flag_schedule.cancelled',
      'flag_schedule.created',
    ]);
  });

  it('marks a change that can no longer apply as failed, with the reason, and leaves the flag as it was', async () => {
    const app = await registerApp(t, 'enterprise');
    const deleted = await createFlag(app.owner, app.id, 'deleted_later');
    const gone = (
      await app.owner
        .post(schedules(deleted.id))
        .send({ environment: 'production', runAt: inMinutes(5), change: { enabled: true } })
        .expect(201)
    ).body;
    await app.owner.delete(`/api/v1/dashboard/flags/${deleted.id}`).expect(204);
    expect(await statusOf(gone.id)).toEqual({ status: 'failed', failure_reason: 'The flag was deleted' });

    // 25 rules are fine on Enterprise; by the time the change runs the plan is Business (20 rules).
    const ruled = await createFlag(app.owner, app.id, 'many_rules');
    const rules = Array.from({ length: 25 }, (_, i) => ({
      name: `rule ${i}`,
      conditions: [{ attribute: 'country', operator: 'equals', value: `C${i}` }],
      value: 'true',
    }));
    const limited = (
      await app.owner
        .post(schedules(ruled.id))
        .send({ environment: 'production', runAt: inMinutes(5), change: { enabled: true, rules } })
        .expect(201)
    ).body;
    // And one whose plan no longer schedules at all.
    const other = await registerApp(t);
    const otherFlag = await createFlag(other.owner, other.id, 'downgraded');
    const unplanned = (
      await other.owner
        .post(schedules(otherFlag.id))
        .send({ environment: 'production', runAt: inMinutes(5), change: { enabled: true } })
        .expect(201)
    ).body;
    await t.sql(`UPDATE organizations SET service_tier = 'professional' WHERE id = $1`, [app.org.id]);
    await t.sql(`UPDATE organizations SET service_tier = 'basic' WHERE id = $1`, [other.org.id]);

    await t.app.get(FlagScheduleJob).run(new Date(Date.now() + 10 * MINUTE));
    expect(await statusOf(limited.id)).toEqual({
      status: 'failed',
      failure_reason: 'rule_limit_reached: Your plan allows 20 rules per flag',
    });
    expect(await statusOf(unplanned.id)).toEqual({
      status: 'failed',
      failure_reason: 'feature_unavailable: Scheduled flag changes are available from the Business plan',
    });
    expect(await version(ruled.id)).toBe(1);
    expect(await version(otherFlag.id)).toBe(1);
    const listed = (await app.owner.get(schedules(ruled.id)).expect(200)).body;
    expect(listed[0]).toMatchObject({ status: 'failed', failureReason: expect.stringMatching(/^rule_limit_reached/) });
    const failures = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_logs WHERE organization_id = $1 AND action = 'flag_schedule.failed'`,
      [app.org.id],
    );
    expect(failures[0].n).toBe(1);
  });

  it('applies the schedules of one flag in time order, and keeps rules the change leaves out', async () => {
    const app = await registerApp(t);
    const flag = await createFlag(app.owner, app.id, 'ordered', 'string', 'a');
    await app.owner
      .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
      .send({
        enabled: true,
        value: 'a',
        rules: [{ name: 'de', conditions: [{ attribute: 'country', operator: 'equals', value: 'DE' }], value: 'de' }],
      })
      .expect(200);
    const ruleId = (await app.owner.get(`/api/v1/dashboard/flags/${flag.id}`)).body.environments.production.rules[0].id;
    const base = `/api/v1/dashboard/apps/${app.id}/flags/ordered/schedules`;
    await app.owner
      .post(base)
      .send({ environment: 'production', runAt: inMinutes(20), change: { value: 'c' } })
      .expect(201);
    await app.owner
      .post(base)
      .send({ environment: 'production', runAt: inMinutes(10), change: { value: 'b' } })
      .expect(201);
    expect(
      (await app.owner.get(base).expect(200)).body.map((s: { change: { value: string } }) => s.change.value),
    ).toEqual(['b', 'c']);
    await t.app.get(FlagScheduleJob).run(new Date(Date.now() + 30 * MINUTE));
    const after = (await app.owner.get(`/api/v1/dashboard/flags/${flag.id}`)).body;
    expect(after.version).toBe(4);
    expect(after.environments.production).toMatchObject({ enabled: true, value: 'c', rules: [{ id: ruleId }] });
  });

  it('refuses bad schedules with the field named, and hides other organizations', async () => {
    const app = await registerApp(t);
    const flag = await createFlag(app.owner, app.id, 'validated', 'integer', '1');
    const refused = async (body: Record<string, unknown>, status = 422) =>
      (await app.owner.post(schedules(flag.id)).send(body).expect(status)).body as {
        fields: { field: string; message: string }[];
      };
    expect(
      (await refused({ environment: 'production', runAt: inMinutes(-1), change: { enabled: true } })).fields,
    ).toEqual([{ field: 'runAt', message: 'must be in the future' }]);
    expect(
      (await refused({ environment: 'production', runAt: 'tomorrow', change: { enabled: true } })).fields[0].field,
    ).toBe('runAt');
    expect(
      (await refused({ environment: 'production', runAt: inMinutes(60 * 24 * 400), change: { enabled: true } }))
        .fields[0].field,
    ).toBe('runAt');
    expect((await refused({ environment: 'qa', runAt: inMinutes(5), change: { enabled: true } })).fields[0].field).toBe(
      'environment',
    );
    expect((await refused({ environment: 'production', runAt: inMinutes(5), change: {} })).fields[0].field).toBe(
      'change',
    );
    expect(
      (await refused({ environment: 'production', runAt: inMinutes(5), change: { value: 'twelve' } })).fields[0].field,
    ).toBe('value');
    const stranger = await registerApp(t);
    await stranger.owner.get(schedules(flag.id)).expect(404);
    await stranger.owner
      .post(schedules(flag.id))
      .send({ environment: 'production', runAt: inMinutes(5), change: { enabled: true } })
      .expect(404);
    const viewer = await createUser(t, { org: app.org, role: 'viewer' });
    const viewerAgent = await signIn(t, viewer.email);
    await viewerAgent.get(schedules(flag.id)).expect(403);
    await app.owner.delete(`${schedules(flag.id)}/00000000-0000-4000-8000-000000000000`).expect(404);
  });

  it('is refused below the Business plan (403 feature_unavailable)', async () => {
    const app = await registerApp(t, 'basic');
    const flag = await createFlag(app.owner, app.id, 'pro_flag');
    const created = await app.owner
      .post(schedules(flag.id))
      .send({ environment: 'production', runAt: inMinutes(5), change: { enabled: true } })
      .expect(403);
    expect(created.body.code).toBe('feature_unavailable');
    expect((await app.owner.get(schedules(flag.id)).expect(403)).body.code).toBe('feature_unavailable');
  });
});
