// What a protected environment serves changes only through an approved change request: every
// write (each side door found in issue 30, then every flag write route of the running application
// as a Member) goes through the one gate, ChangeRequestsService.gate (decision 0064).
import { afterAll, describe, expect, it } from '@jest/globals';
import { FlagScheduleJob } from '../../src/flags/flag-schedule.job.js';
import { createApiKey, createUser, signIn, type TestUser } from '../factories/identity.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { fillPath, routeName, routeTable, type Route } from '../support/route-table.js';
import { attestDevice, fabricatedRootEnv, registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

const t: TestApp = await startTestApp(await fabricatedRootEnv());
const HOUR = 3_600_000;
const later = (ms: number) => new Date(Date.now() + ms).toISOString();
const requests = '/api/v1/dashboard/change-requests';
const flagPath = (flagId: string) => `/api/v1/dashboard/flags/${flagId}`;
const env = (flagId: string, environment = 'production') => `${flagPath(flagId)}/environments/${environment}`;

/**
 * The other device the tests look through, named by X-Device-ID with a key of the organization
 * (a device token names its own device only, decision 0074).
 */
const OTHER_DEVICE = 'device-b';

interface Flag {
  id: string;
  key: string;
}

interface World {
  app: RegisteredApp;
  admin: HttpClient;
  member: HttpClient;
  memberUser: TestUser;
  /** A personal key of the Member with every flag scope (what `attestly login` stores). */
  memberKey: string;
  token: string;
  deviceId: string;
  /** Protected in production; disabled there, so it serves its default (false). Version 2 served true. */
  guarded: Flag;
  /** Protected in production, on, needs `dep` = true: serves false while `dep` does. */
  dependent: Flag;
  /** Not protected itself, but a prerequisite of `dependent` in production. */
  dep: Flag;
  /** Protected in production, deleted through an approved change request: absent. */
  retiredKey: string;
  /** An override of `guarded` for OTHER_DEVICE, made before protection (true). */
  overrideId: string;
  /** A schedule of `guarded` (production on, true) made before protection. */
  scheduleId: string;
  /** A pending change request the Member made. */
  pendingRequestId: string;
}

async function createFlag(owner: HttpClient, appId: string, key: string): Promise<Flag> {
  const created = await owner
    .post(`/api/v1/dashboard/apps/${appId}/flags`)
    .send({ key, name: key, valueType: 'boolean', defaultValue: 'false' })
    .expect(201);
  return { id: created.body.id as string, key };
}

async function protect(admin: HttpClient, flagId: string, environment = 'production') {
  await admin
    .put(`${env(flagId, environment)}/approval`)
    .send({ requireApproval: true })
    .expect(200);
}

/** Approves (the Owner) and applies (the author) a change request. */
async function approveAndApply(world: Pick<World, 'app' | 'admin'>, id: string) {
  await world.app.owner.post(`${requests}/${id}/approve`).expect(200);
  return world.admin.post(`${requests}/${id}/apply`).expect(200);
}

async function buildWorld(): Promise<World> {
  const app = await registerApp(t, 'enterprise');
  const admin = await signIn(t, (await createUser(t, { org: app.org, role: 'admin' })).email);
  const memberUser = await createUser(t, { org: app.org, role: 'member' });
  const member = await signIn(t, memberUser.email);
  const memberKey = await createApiKey(t, app.org, ['flags:read', 'flags:write'], {
    type: 'gpat',
    createdBy: memberUser.id,
  });
  const { owner } = app;

  const guarded = await createFlag(owner, app.id, 'guarded');
  await owner.put(env(guarded.id)).send({ enabled: true, value: 'true', rules: [] }).expect(200);
  await owner.put(env(guarded.id)).send({ enabled: false, value: 'true', rules: [] }).expect(200);
  const dep = await createFlag(owner, app.id, 'dep');
  await owner.put(env(dep.id)).send({ enabled: true, value: 'false', rules: [] }).expect(200);
  const dependent = await createFlag(owner, app.id, 'dependent');
  await owner
    .put(env(dependent.id))
    .send({ enabled: true, value: 'true', rules: [], prerequisites: [{ flagKey: 'dep', value: 'true' }] })
    .expect(200);
  const override = await owner
    .post(`${flagPath(guarded.id)}/overrides`)
    .send({ deviceKeyId: OTHER_DEVICE, forcedValue: 'true' })
    .expect(201);
  const schedule = await owner
    .post(`${flagPath(guarded.id)}/schedules`)
    .send({ environment: 'production', runAt: later(HOUR), change: { enabled: true, value: 'true' } })
    .expect(201);
  const retired = await createFlag(owner, app.id, 'retired');

  await protect(admin, guarded.id);
  await protect(admin, dependent.id);
  await protect(admin, retired.id);
  const deletion = await admin.delete(flagPath(retired.id));
  // (204 where deletion is no change request: the world then shows the side doors rather than fail here.)
  if (deletion.status === 202) await approveAndApply({ app, admin }, deletion.body.id as string);
  else expect(deletion.status).toBe(204);

  const pending = await member.put(env(guarded.id)).send({ enabled: true, value: 'true', rules: [] }).expect(202);
  const { device, token } = await attestDevice(t, app);
  return {
    app,
    admin,
    member,
    memberUser,
    memberKey,
    token,
    deviceId: device.keyId,
    guarded,
    dependent,
    dep,
    retiredKey: 'retired',
    overrideId: override.body.id as string,
    scheduleId: schedule.body.id as string,
    pendingRequestId: pending.body.id as string,
  };
}

/** What devices are served in production: GET /api/v1/flags for two devices, and the evaluate path. */
async function served(world: World) {
  const get = async (deviceId?: string) => {
    const request = sdk(t, world.app)
      .get('/api/v1/flags?environment=production')
      .set('Authorization', `Bearer ${deviceId ? world.memberKey : world.token}`);
    if (deviceId) request.set('X-Device-ID', deviceId);
    return (await request.expect(200)).body.flags as Record<string, unknown>;
  };
  const evaluate = async (flag: Flag) => {
    const response = await sdk(t, world.app)
      .post(`/api/v1/flags/${flag.id}/evaluate`)
      .set('Authorization', `Bearer ${world.token}`)
      .send({ environment: 'production' });
    return response.status === 200 ? (response.body.resolvedValue as string) : `status ${response.status}`;
  };
  return {
    device: await get(),
    otherDevice: await get(OTHER_DEVICE),
    evaluated: {
      guarded: await evaluate(world.guarded),
      dependent: await evaluate(world.dependent),
      dep: await evaluate(world.dep),
    },
  };
}

afterAll(async () => {
  await t.close();
});

describe('protected environments: the side doors of issue 30', () => {
  it('makes a change request of a Member changing the default of a protected flag; devices keep the old default until it is applied', async () => {
    const world = await buildWorld();
    const before = await served(world);
    expect(before.device.guarded).toBe(false);
    const proposed = await world.member.patch(flagPath(world.guarded.id)).send({ defaultValue: 'true' }).expect(202);
    expect(proposed.body).toMatchObject({ kind: 'update', change: { defaultValue: 'true' }, state: 'pending' });
    expect(await served(world)).toEqual(before);
    // A name or a description serves nothing: applied at once.
    await world.member
      .patch(`/api/v1/dashboard/apps/${world.app.id}/flags/guarded`)
      .send({ name: 'Renamed' })
      .expect(200);
    const retry = await world.member.patch(flagPath(world.guarded.id)).send({ defaultValue: 'true' }).expect(202);
    const detail = await world.app.owner.get(`${requests}/${retry.body.id}`).expect(200);
    expect(detail.body.diff).toEqual({
      before: { name: 'Renamed', description: '', defaultValue: 'false' },
      after: { name: 'Renamed', description: '', defaultValue: 'true' },
    });
    await world.app.owner.post(`${requests}/${retry.body.id}/approve`).expect(200);
    await world.member.post(`${requests}/${retry.body.id}/apply`).expect(200);
    expect((await served(world)).device.guarded).toBe(true);
  });

  it('makes a change request of deleting a protected flag, and of creating its key again; the new flag is protected', async () => {
    const world = await buildWorld();
    const deletion = await world.member.delete(flagPath(world.guarded.id)).expect(202);
    expect(deletion.body).toMatchObject({ kind: 'deletion', flagKey: 'guarded', state: 'pending' });
    expect((await served(world)).device.guarded).toBe(false);
    await world.app.owner.post(`${requests}/${deletion.body.id}/approve`).expect(200);
    await world.member.post(`${requests}/${deletion.body.id}/apply`).expect(200);
    expect((await served(world)).device).not.toHaveProperty('guarded');

    // The key keeps its protection: creating it again is a change request too.
    const creation = await world.member
      .post(`/api/v1/dashboard/apps/${world.app.id}/flags`)
      .send({ key: 'guarded', name: 'Again', valueType: 'boolean', defaultValue: 'true' })
      .expect(202);
    expect(creation.body).toMatchObject({ kind: 'creation', flagKey: 'guarded', state: 'pending' });
    expect((await served(world)).device).not.toHaveProperty('guarded');
    await world.app.owner.post(`${requests}/${creation.body.id}/approve`).expect(200);
    await world.member.post(`${requests}/${creation.body.id}/apply`).expect(200);
    const flag = (await world.app.owner.get(`/api/v1/dashboard/apps/${world.app.id}/flags/guarded`).expect(200)).body;
    expect(flag.id).toBe(creation.body.flagId);
    expect(flag.environments.production.requireApproval).toBe(true);
    expect((await served(world)).device.guarded).toBe(true);
    // And the re-created flag's production still needs approval.
    const put = await world.member.put(env(flag.id)).send({ enabled: true, value: 'false', rules: [] }).expect(202);
    expect(put.body.kind).toBe('environment');
  });

  it('does not apply a schedule made before protection: when due it becomes a change request, and one made by an approved change request applies', async () => {
    const world = await buildWorld();
    await t.app.get(FlagScheduleJob).run(new Date(Date.now() + 2 * HOUR));
    const [lapsed] = await t.sql<{ status: string; failure_reason: string }>(
      `SELECT status, failure_reason FROM feature_flag_schedules WHERE id = $1`,
      [world.scheduleId],
    );
    expect(lapsed.status).toBe('failed');
    expect(lapsed.failure_reason).toMatch(/^approval_required: /);
    expect((await served(world)).device.guarded).toBe(false);
    // The request carries the schedule's change, by the schedule's author, for an Admin to decide.
    const carried = await t.sql<{ kind: string; state: string; payload: Record<string, unknown> }>(
      `SELECT kind, state, payload FROM feature_flag_change_requests WHERE flag_id = $1 AND author_user_id IS NULL`,
      [world.guarded.id],
    );
    expect(carried).toEqual([
      { kind: 'environment', state: 'pending', payload: expect.objectContaining({ enabled: true, value: 'true' }) },
    ]);
    // Four eyes hold for it too: the schedule's creator (the Owner) does not decide it, an Admin does.
    const [{ id: carriedId }] = await t.sql<{ id: string }>(
      `SELECT id FROM feature_flag_change_requests WHERE flag_id = $1 AND author_user_id IS NULL`,
      [world.guarded.id],
    );
    const selfDecided = await world.app.owner.post(`${requests}/${carriedId}/approve`);
    expect(selfDecided.status).toBe(403);
    expect(selfDecided.body).toMatchObject({ code: 'self_approval' });
    await world.admin.post(`${requests}/${carriedId}/approve`).expect(200);

    // A schedule the gate let through as an approved change request stays valid.
    const fresh = await buildWorld();
    const proposed = await fresh.member
      .post(`${flagPath(fresh.guarded.id)}/schedules`)
      .send({ environment: 'production', runAt: later(3 * HOUR), change: { enabled: true, value: 'true' } })
      .expect(202);
    await fresh.app.owner.post(`${requests}/${proposed.body.id}/approve`).expect(200);
    await fresh.member.post(`${requests}/${proposed.body.id}/apply`).expect(200);
    await t.app.get(FlagScheduleJob).run(new Date(Date.now() + 4 * HOUR));
    const [approved] = await t.sql<{ status: string }>(
      `SELECT status FROM feature_flag_schedules WHERE flag_id = $1 AND change_request_id = $2`,
      [fresh.guarded.id, proposed.body.id],
    );
    expect(approved.status).toBe('applied');
    expect((await served(fresh)).device.guarded).toBe(true);
  });

  it('makes a change request of a per-device override of a protected flag, and of removing one', async () => {
    const world = await buildWorld();
    const before = await served(world);
    expect(before.otherDevice.guarded).toBe(true);
    const override = await world.member
      .post(`${flagPath(world.guarded.id)}/overrides`)
      .send({ deviceKeyId: world.deviceId, forcedValue: 'true' })
      .expect(202);
    expect(override.body).toMatchObject({ kind: 'override', change: { deviceKeyId: world.deviceId } });
    const removal = await world.member
      .delete(`/api/v1/dashboard/apps/${world.app.id}/flags/guarded/overrides/${world.overrideId}`)
      .expect(202);
    expect(removal.body).toMatchObject({ kind: 'override_removal', change: { overrideId: world.overrideId } });
    expect(await served(world)).toEqual(before);
    await world.app.owner.post(`${requests}/${override.body.id}/approve`).expect(200);
    await world.member.post(`${requests}/${override.body.id}/apply`).expect(200);
    expect((await served(world)).device.guarded).toBe(true);
  });

  it('makes a change request of changing a prerequisite of a protected flag', async () => {
    const world = await buildWorld();
    const before = await served(world);
    expect(before.device.dependent).toBe(false);
    const put = await world.member.put(env(world.dep.id)).send({ enabled: true, value: 'true', rules: [] }).expect(202);
    expect(put.body).toMatchObject({ kind: 'environment', flagKey: 'dep' });
    // The prerequisite's other environments are not protected.
    await world.member.put(env(world.dep.id, 'staging')).send({ enabled: true, value: 'true', rules: [] }).expect(200);
    expect(await served(world)).toEqual(before);
  });

  it('answers 409 change_request_stale to a step on a request in another state than the step takes', async () => {
    const world = await buildWorld();
    const id = world.pendingRequestId;
    const early = await world.member.post(`${requests}/${id}/apply`).expect(409);
    expect(early.body.code).toBe('change_request_stale');
    await world.app.owner.post(`${requests}/${id}/reject`).expect(200);
    for (const step of ['approve', 'reject', 'apply']) {
      const refused = await world.app.owner.post(`${requests}/${id}/${step}`).expect(409);
      expect(refused.body.code).toBe('change_request_stale');
    }
    const next = await world.member.put(env(world.guarded.id)).send({ enabled: true, value: 'true', rules: [] });
    expect(next.status).toBe(202);
    await world.app.owner.post(`${requests}/${next.body.id}/approve`).expect(200);
    await world.member.post(`${requests}/${next.body.id}/apply`).expect(200);
    const again = await world.app.owner.post(`${requests}/${next.body.id}/approve`).expect(409);
    expect(again.body.code).toBe('change_request_stale');
  });
});

/** The flag write routes of the running application (and the change request steps), read from its route table. */
const WRITES = routeTable(t.app).filter(
  (route) =>
    route.method !== 'get' &&
    /^\/api\/v1\/dashboard\/(flags|apps\/:appId\/flags|change-requests)(\/|$)/.test(route.path),
);

interface Attempt {
  readonly path: Record<string, string>;
  readonly body?: unknown;
}

/**
 * What a Member tries on each route: every flag of the world, with the body that would change
 * what production serves. A write route this does not know fails the test until it is added here.
 */
function attemptsFor(route: Route, world: World): Attempt[] | null {
  const targets = [world.guarded, world.dependent, world.dep].map((flag) => ({
    flagId: flag.id,
    flagKey: flag.key,
    appId: world.app.id,
    environment: 'production',
    overrideId: world.overrideId,
    scheduleId: world.scheduleId,
    requestId: world.pendingRequestId,
  }));
  const each = (...bodies: unknown[]) => targets.flatMap((path) => bodies.map((body) => ({ path, body })));
  const tail = route.path.replace(/^\/api\/v1\/dashboard\/(flags\/:flagId|apps\/:appId\/flags\/:flagKey)/, '');
  const on = { enabled: true, value: 'true', rules: [] };
  switch (`${route.method} ${tail}`) {
    case 'post /api/v1/dashboard/apps/:appId/flags':
      return [
        {
          path: { appId: world.app.id },
          body: { key: world.retiredKey, name: 'Back', valueType: 'boolean', defaultValue: 'true' },
        },
      ];
    case 'patch ':
      return each({ defaultValue: 'true' });
    case 'delete ':
      return each(undefined);
    case 'put /environments/:environment':
      return each(on, { ...on, prerequisites: [] });
    case 'put /environments/:environment/approval':
      return each({ requireApproval: false });
    case 'post /rollback':
      return each({ version: 1 }, { version: 2 });
    case 'post /overrides':
      return each({ deviceKeyId: world.deviceId, forcedValue: 'true' });
    case 'delete /overrides/:overrideId':
      return each(undefined);
    case 'post /schedules':
      return each({ environment: 'production', runAt: later(HOUR / 2), change: { enabled: true, value: 'true' } });
    case 'delete /schedules/:scheduleId':
      return each(undefined);
    case 'post /api/v1/dashboard/change-requests/:requestId/approve':
    case 'post /api/v1/dashboard/change-requests/:requestId/reject':
    case 'post /api/v1/dashboard/change-requests/:requestId/apply':
      return [{ path: targets[0] }];
    default:
      return null;
  }
}

describe('protected environments: every flag write route as a Member', () => {
  it('reads the flag write routes from the running application', () => {
    const names = WRITES.map(routeName);
    expect(names).toContain('PATCH /api/v1/dashboard/flags/:flagId');
    expect(names).toContain('POST /api/v1/dashboard/apps/:appId/flags/:flagKey/overrides');
    expect(names).toContain('POST /api/v1/dashboard/change-requests/:requestId/apply');
    expect(WRITES.length).toBeGreaterThanOrEqual(22);
  });

  describe.each(WRITES.map((route) => [routeName(route), route] as const))('%s', (_name, route) => {
    it('changes nothing production serves without approval, from a session or a personal key', async () => {
      const world = await buildWorld();
      const attempts = attemptsFor(route, world);
      expect(attempts).not.toBeNull();
      const before = await served(world);
      const answers: number[] = [];
      for (const attempt of attempts!) {
        const path = fillPath(route, attempt.path, () => 'unknown');
        for (const send of [
          (method: Route['method']) => world.member[method](path),
          (method: Route['method']) =>
            t.http()[method](path).set('Authorization', `Bearer ${world.memberKey}`).set('X-Forwarded-For', '10.9.8.7'),
        ]) {
          const request = send(route.method);
          const response = attempt.body === undefined ? await request : await request.send(attempt.body as object);
          expect(response.status).toBeLessThan(500);
          answers.push(response.status);
        }
      }
      // Whatever was scheduled (before protection, or now) comes due.
      await t.app.get(FlagScheduleJob).run(new Date(Date.now() + 2 * HOUR));
      expect(await served(world)).toEqual(before);
      expect(answers.length).toBeGreaterThan(0);
    }, 60_000);
  });
});
