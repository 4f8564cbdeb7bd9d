import { describe, expect, it } from '@jest/globals';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { flagsWorld } from '../../test/fakes/flags-world.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import type { CreateFlagDto } from './flags.dto.js';
import { actorFromAuth, type ChangedFlag } from './flags.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';
const SECOND_APP = '00000000-0000-4000-8000-0000000000a2';
const OTHER_APP = '00000000-0000-4000-8000-0000000000b1';

const boolean = (key: string): CreateFlagDto => ({ key, name: key, valueType: 'boolean', defaultValue: 'false' });

function world(plan = 'free') {
  const fakes = flagsWorld();
  fakes.plans.set(ORG, plan).set(OTHER_ORG, plan);
  fakes.apps.add(ORG, APP).add(ORG, SECOND_APP).add(OTHER_ORG, OTHER_APP);
  const auth = memberAuth(ORG, 'user-1', 'admin');
  const create = (input: CreateFlagDto, appId = APP, as: OrgAuthContext = auth) =>
    fakes.uow.run(() => fakes.flagsService.createAs(actorFromAuth(as), appId, input));
  return { ...fakes, auth, create };
}

describe('FlagsService', () => {
  it('creates a flag at version 1 with its version, audit entry, webhook event and change notice', async () => {
    const { create, flags, audit, webhooks, storeChanges } = world();
    const flag = await create(boolean('checkout'));
    expect(flag).toMatchObject({ key: 'checkout', version: 1 });
    expect(flag.environments.production).toEqual({ enabled: false, value: 'false', rules: [] });
    expect(flags.versionRows.map((row) => [row.version, row.change])).toEqual([[1, 'created']]);
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'flag.created',
        resourceId: flag.id,
        metadata: { key: 'checkout', version: 1 },
      }),
    ]);
    expect(webhooks.events).toEqual([expect.objectContaining({ kind: 'created' })]);
    expect(storeChanges.notified).toEqual([APP]);
  });

  it('refuses a key the app already has (409), and an app of another organization (404)', async () => {
    const { create } = world();
    await create(boolean('checkout'));
    await expect(create(boolean('checkout'))).rejects.toMatchObject({ status: 409 });
    await expect(create(boolean('other'), OTHER_APP)).rejects.toMatchObject({ status: 404 });
  });

  it('counts the Free limit per organization and paid limits per app', async () => {
    const free = world('free');
    for (let i = 0; i < 10; i++) await free.create(boolean(`flag_${i}`), i % 2 ? APP : SECOND_APP);
    await expect(free.create(boolean('eleventh'), SECOND_APP)).rejects.toMatchObject({
      status: 403,
      code: 'flag_limit_reached',
    });
    const basic = world('basic');
    for (let i = 0; i < 50; i++) await basic.create(boolean(`flag_${i}`));
    await expect(basic.create(boolean('fifty_first'))).rejects.toMatchObject({ code: 'flag_limit_reached' });
    expect((await basic.create(boolean('fifty_first'), SECOND_APP)).key).toBe('fifty_first');
  });

  it('offers boolean flags only on Free', async () => {
    const { create } = world('free');
    await expect(
      create({ key: 'ratio', name: 'Ratio', valueType: 'integer', defaultValue: '1' }),
    ).rejects.toMatchObject({
      code: 'flag_type_unavailable',
    });
  });

  it('finds the id of a flag named by id, by key, or by id in the key position', async () => {
    const { auth, create, flagsService } = world('enterprise');
    const flag = await create(boolean('checkout'));
    await expect(flagsService.idOf(auth, { flagId: flag.id })).resolves.toBe(flag.id);
    await expect(flagsService.idOf(auth, { appId: APP, flagKey: 'checkout' })).resolves.toBe(flag.id);
    await expect(flagsService.idOf(auth, { appId: APP, flagKey: flag.id })).resolves.toBe(flag.id);
    await expect(flagsService.idOf(auth, { appId: APP, flagKey: 'missing' })).rejects.toMatchObject({ status: 404 });
  });

  it("answers another organization's flag as not found for reads and writes", async () => {
    const { create, flagsService } = world('enterprise');
    const flag = await create(boolean('checkout'));
    const stranger = memberAuth(OTHER_ORG, 'stranger', 'owner');
    await expect(flagsService.get(stranger, flag.id)).rejects.toMatchObject({ status: 404 });
    await expect(flagsService.history(stranger, flag.id)).rejects.toMatchObject({ status: 404 });
    await expect(flagsService.setApproval(stranger, flag.id, 'production', true)).rejects.toMatchObject({
      status: 404,
    });
    await expect(flagsService.updateAs(actorFromAuth(stranger), flag.id, { name: 'x' })).rejects.toMatchObject({
      status: 404,
    });
    await expect(flagsService.idOf(stranger, { appId: APP, flagKey: 'checkout' })).rejects.toMatchObject({
      status: 404,
    });
  });

  it('marks approval only on Enterprise, as the key’s protection', async () => {
    const pro = world('professional');
    const flag = await pro.create(boolean('checkout'));
    await expect(pro.flagsService.setApproval(pro.auth, flag.id, 'production', true)).rejects.toMatchObject({
      status: 403,
    });
    const enterprise = world('enterprise');
    const guarded = await enterprise.create(boolean('checkout'));
    const changed = await enterprise.flagsService.setApproval(enterprise.auth, guarded.id, 'production', true);
    expect(changed.environments.production.requireApproval).toBe(true);
    expect(enterprise.flags.protectionRows).toEqual([
      expect.objectContaining({ flagKey: 'checkout', environment: 'production', appId: APP }),
    ]);
    expect(enterprise.invalidated).toEqual([APP]);
  });

  it('mails the toggle notice only once the change has committed', async () => {
    const { create, flagsService, auth, mails, uow } = world('free');
    const flag = await create(boolean('checkout'));
    const toggle = { enabled: true, value: 'true', rules: [] };
    const changed: ChangedFlag = await uow.run(async () => {
      const result = await flagsService.putEnvironmentAs(actorFromAuth(auth), flag.id, 'production', toggle);
      await uow.afterCommit(() => flagsService.committed(result));
      expect(mails).toEqual([]);
      return result;
    });
    expect(changed.toggled).toEqual([{ environment: 'production', enabled: true }]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(mails.map((mail) => mail.subject)).toEqual(['Flag checkout switched on in production']);
  });

  it('refuses to delete a flag another flag depends on, and fails the pending schedules of a deleted one', async () => {
    const { create, flagsService, auth, schedules, uow } = world('professional');
    const base = await create(boolean('base'));
    const dependent = await create(boolean('dependent'));
    await uow.run(() =>
      flagsService.putEnvironmentAs(actorFromAuth(auth), dependent.id, 'production', {
        enabled: true,
        value: 'true',
        rules: [],
        prerequisites: [{ flagKey: 'base', value: 'true' }],
      }),
    );
    await expect(uow.run(() => flagsService.removeAs(actorFromAuth(auth), base.id))).rejects.toMatchObject({
      status: 409,
    });
    await schedules.insert(auth.organizationId, {
      appId: APP,
      flagId: dependent.id,
      environment: 'staging',
      runAt: new Date(),
      change: { enabled: true },
      createdBy: null,
      changeRequestId: null,
    });
    await uow.run(() => flagsService.removeAs(actorFromAuth(auth), dependent.id));
    expect(schedules.rows[0]).toMatchObject({ status: 'failed', failure_reason: 'The flag was deleted' });
  });

  it('rolls back to an earlier version from Basic on, keeping which environments require approval', async () => {
    const free = world('free');
    const flag = await free.create(boolean('checkout'));
    await expect(
      free.uow.run(() => free.flagsService.rollbackAs(actorFromAuth(free.auth), flag.id, 1)),
    ).rejects.toMatchObject({ status: 403 });
    const basic = world('basic');
    const other = await basic.create(boolean('checkout'));
    const actor = actorFromAuth(basic.auth);
    await basic.uow.run(() => basic.flagsService.updateAs(actor, other.id, { name: 'Renamed' }));
    const rolled = await basic.uow.run(() => basic.flagsService.rollbackAs(actor, other.id, 1));
    expect(rolled).toMatchObject({ name: 'checkout', version: 3, change: 'rolled back to version 1' });
    await expect(basic.uow.run(() => basic.flagsService.rollbackAs(actor, other.id, 9))).rejects.toMatchObject({
      status: 404,
    });
  });
});
