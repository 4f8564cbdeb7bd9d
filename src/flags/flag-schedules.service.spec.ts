import { describe, expect, it } from '@jest/globals';
import { flagsWorld } from '../../test/fakes/flags-world.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { MAX_PENDING_SCHEDULES } from './flag-schedules.service.js';
import { actorFromAuth } from './flags.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';

async function world(plan = 'professional') {
  const fakes = flagsWorld();
  fakes.plans.set(ORG, plan).set(OTHER_ORG, plan);
  fakes.apps.add(ORG, APP);
  const auth = memberAuth(ORG, 'user-1', 'admin');
  fakes.plans.set(ORG, 'professional');
  const flag = await fakes.uow.run(() =>
    fakes.flagsService.createAs(actorFromAuth(auth), APP, {
      key: 'checkout',
      name: 'Checkout',
      valueType: 'boolean',
      defaultValue: 'false',
    }),
  );
  fakes.plans.set(ORG, plan);
  return { ...fakes, auth, flag };
}

const soon = () => new Date(Date.now() + 60_000);

describe('FlagSchedulesService', () => {
  it('schedules from the Professional plan on', async () => {
    const basic = await world('basic');
    await expect(
      basic.schedulesService.create(basic.auth, basic.flag.id, {
        environment: 'production',
        runAt: soon(),
        change: { enabled: true },
      }),
    ).rejects.toMatchObject({ status: 403, code: 'feature_unavailable' });
    await expect(basic.schedulesService.list(basic.auth, basic.flag.id)).rejects.toMatchObject({ status: 403 });
  });

  it('refuses a change that sets nothing, or one the flag would refuse now', async () => {
    const { schedulesService, auth, flag } = await world();
    await expect(
      schedulesService.create(auth, flag.id, { environment: 'production', runAt: soon(), change: {} }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      schedulesService.create(auth, flag.id, { environment: 'production', runAt: soon(), change: { value: 'maybe' } }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it(`holds at most ${MAX_PENDING_SCHEDULES} pending schedules per flag`, async () => {
    const { schedulesService, auth, flag } = await world();
    const input = { environment: 'production' as const, runAt: soon(), change: { enabled: true } };
    for (let i = 0; i < MAX_PENDING_SCHEDULES; i++) await schedulesService.create(auth, flag.id, input);
    await expect(schedulesService.create(auth, flag.id, input)).rejects.toMatchObject({
      status: 409,
      code: 'schedule_limit_reached',
    });
  });

  it('cancels a pending schedule once; a settled one answers 409, another organization 404', async () => {
    const { schedulesService, auth, flag, audit } = await world();
    const row = await schedulesService.create(auth, flag.id, {
      environment: 'staging',
      runAt: soon(),
      change: { enabled: true },
    });
    await expect(schedulesService.cancel(memberAuth(OTHER_ORG, 'stranger'), flag.id, row.id)).rejects.toMatchObject({
      status: 404,
    });
    await schedulesService.cancel(auth, flag.id, row.id);
    await expect(schedulesService.cancel(auth, flag.id, row.id)).rejects.toMatchObject({ status: 409 });
    expect(audit.actions().slice(-2)).toEqual(['flag_schedule.created', 'flag_schedule.cancelled']);
  });

  it('applies a due schedule as a new version, marked applied, and the app’s flags are dropped after commit', async () => {
    const { schedulesService, changeRequests, auth, flag, schedules, invalidated, flagsService } = await world();
    await schedulesService.create(auth, flag.id, { environment: 'staging', runAt: soon(), change: { enabled: true } });
    expect(await changeRequests.applyDueSchedule(new Date())).toBe(false);
    expect(await changeRequests.applyDueSchedule(new Date(Date.now() + 120_000))).toBe(true);
    expect(schedules.rows[0]).toMatchObject({ status: 'applied', applied_version: 2 });
    const changed = await flagsService.get(auth, flag.id);
    expect(changed.environments.staging.enabled).toBe(true);
    expect(invalidated).toEqual([APP]);
  });

  it('fails a due schedule the plan no longer allows, leaving the flag as it was', async () => {
    const fakes = await world();
    await fakes.schedulesService.create(fakes.auth, fakes.flag.id, {
      environment: 'staging',
      runAt: soon(),
      change: { enabled: true },
    });
    fakes.plans.set(ORG, 'basic');
    expect(await fakes.changeRequests.applyDueSchedule(new Date(Date.now() + 120_000))).toBe(true);
    expect(fakes.schedules.rows[0].status).toBe('failed');
    expect(fakes.schedules.rows[0].failure_reason).toMatch(/^feature_unavailable: /);
    expect((await fakes.flagsService.get(fakes.auth, fakes.flag.id)).version).toBe(1);
    expect(fakes.audit.actions().at(-1)).toBe('flag_schedule.failed');
  });
});
