import { describe, expect, it } from '@jest/globals';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { flagsWorld } from '../../test/fakes/flags-world.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import type { ChangedFlag } from './flags.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';

const on = { enabled: true, value: 'true', rules: [] };

/** An Enterprise organization with a boolean flag whose production environment requires approval. */
async function protectedFlag() {
  const world = flagsWorld();
  world.plans.set(ORG, 'enterprise').set(OTHER_ORG, 'enterprise');
  world.apps.add(ORG, APP);
  const author = memberAuth(ORG, 'author', 'member');
  const admin = memberAuth(ORG, 'admin', 'admin');
  const created = await world.changeRequests.submit(admin, {
    kind: 'creation',
    appId: APP,
    input: { key: 'checkout', name: 'Checkout', valueType: 'boolean', defaultValue: 'false' },
  });
  const flag = (created as { applied: ChangedFlag }).applied;
  await world.flagsService.setApproval(admin, flag.id, 'production', true);
  world.audit.entries.length = 0;
  world.webhooks.events.length = 0;
  world.invalidated.length = 0;
  return { ...world, flag, author, admin };
}

async function propose(world: Awaited<ReturnType<typeof protectedFlag>>, auth: OrgAuthContext) {
  const outcome = await world.changeRequests.putEnvironment(auth, world.flag.id, 'production', on);
  if (!('proposed' in outcome)) throw new Error('expected a change request');
  return outcome.proposed;
}

describe('ChangeRequestsService: the gate of protected environments', () => {
  it('turns a write into a protected environment into a pending change request and leaves the flag as it was', async () => {
    const world = await protectedFlag();
    const request = await propose(world, world.author);
    expect(request).toMatchObject({ kind: 'environment', environment: 'production', state: 'pending', baseVersion: 2 });
    const flag = await world.flagsService.get(world.admin, world.flag.id);
    expect(flag.version).toBe(2);
    expect(flag.environments.production.enabled).toBe(false);
    // The write was checked and undone: only the request's own entry remains, no event, no cache drop.
    expect(world.audit.actions()).toEqual(['flag_change_request.created']);
    expect(world.webhooks.events).toEqual([]);
    expect(world.invalidated).toEqual([]);
  });

  it('refuses the proposal at once when the write itself is invalid', async () => {
    const world = await protectedFlag();
    await expect(
      world.changeRequests.putEnvironment(world.author, world.flag.id, 'production', { ...on, value: 'maybe' }),
    ).rejects.toMatchObject({ status: 422 });
    expect(world.requests.rows).toEqual([]);
  });

  it('applies a write to an environment that is not protected at once', async () => {
    const world = await protectedFlag();
    const outcome = await world.changeRequests.putEnvironment(world.author, world.flag.id, 'staging', on);
    expect(outcome).toMatchObject({ applied: { version: 3 } });
    expect(world.audit.actions()).toEqual(['flag.updated']);
    expect(world.webhooks.events.map((event) => event.kind)).toEqual(['updated']);
    expect(world.invalidated).toEqual([APP]);
  });

  it('applies at once when the plan no longer has approval workflows', async () => {
    const world = await protectedFlag();
    world.plans.set(ORG, 'professional');
    const outcome = await world.changeRequests.putEnvironment(world.author, world.flag.id, 'production', on);
    expect(outcome).toMatchObject({ applied: { version: 3 } });
  });

  it('sends a due schedule into a protected environment to a change request and fails the schedule', async () => {
    const world = await protectedFlag();
    world.plans.set(ORG, 'enterprise');
    const schedule = await world.schedules.insert(world.admin.organizationId, {
      appId: APP,
      flagId: world.flag.id,
      environment: 'production',
      runAt: new Date(Date.now() - 1_000),
      change: { enabled: true },
      createdBy: 'author@example.com',
      changeRequestId: null,
    });
    expect(await world.changeRequests.applyDueSchedule(new Date())).toBe(true);
    const [row] = world.schedules.rows;
    expect(row).toMatchObject({ id: schedule.id, status: 'failed' });
    expect(row.failure_reason).toMatch(/^approval_required: production requires approval/);
    expect(world.requests.rows).toHaveLength(1);
    expect((await world.flagsService.get(world.admin, world.flag.id)).environments.production.enabled).toBe(false);
  });
  it('holds a device override back too (overrides beat every environment) until approved and applied', async () => {
    const world = await protectedFlag();
    const outcome = await world.changeRequests.submit(world.author, {
      kind: 'override',
      flagId: world.flag.id,
      input: { deviceKeyId: 'device-1', forcedValue: 'true' },
    });
    expect(outcome).toMatchObject({ proposed: { kind: 'override', state: 'pending' } });
    expect(world.flags.overrideRows.size).toBe(0);
    const request = (outcome as { proposed: { id: string } }).proposed;
    await world.changeRequests.approve(world.admin, request.id);
    await world.changeRequests.apply(world.admin, request.id);
    expect([...world.flags.overrideRows.values()].map((row) => row.deviceKeyId)).toEqual(['device-1']);
    expect(world.invalidated).toEqual([APP]);
  });

  it('lets a schedule an approved request made apply when due, though its environment is protected', async () => {
    const world = await protectedFlag();
    const runAt = new Date(Date.now() + 60_000);
    const outcome = await world.changeRequests.submit(world.author, {
      kind: 'schedule',
      flagId: world.flag.id,
      input: { environment: 'production', runAt, change: { enabled: true } },
    });
    const request = (outcome as { proposed: { id: string } }).proposed;
    expect(world.schedules.rows).toEqual([]);
    await world.changeRequests.approve(world.admin, request.id);
    await world.changeRequests.apply(world.author, request.id);
    expect(world.schedules.rows).toEqual([
      expect.objectContaining({ status: 'pending', change_request_id: request.id }),
    ]);
    expect(await world.changeRequests.applyDueSchedule(new Date(runAt.getTime() + 1_000))).toBe(true);
    expect(world.schedules.rows[0]).toMatchObject({ status: 'applied', applied_version: 3 });
    expect((await world.flagsService.get(world.admin, world.flag.id)).environments.production.enabled).toBe(true);
  });
});

describe('ChangeRequestsService: approvals', () => {
  it('refuses the author approving or rejecting their own request', async () => {
    const world = await protectedFlag();
    const request = await propose(world, world.author);
    await expect(world.changeRequests.approve(world.author, request.id)).rejects.toMatchObject({
      status: 403,
      code: 'self_approval',
    });
    await expect(world.changeRequests.reject(world.author, request.id)).rejects.toMatchObject({
      code: 'self_approval',
    });
    expect((await world.changeRequests.get(world.admin, request.id)).state).toBe('pending');
  });

  it('approves once: a decided request takes no other decision', async () => {
    const world = await protectedFlag();
    const request = await propose(world, world.author);
    expect((await world.changeRequests.approve(world.admin, request.id)).state).toBe('approved');
    await expect(world.changeRequests.reject(world.admin, request.id)).rejects.toMatchObject({
      status: 409,
      code: 'change_request_stale',
    });
    expect(world.audit.actions()).toEqual(['flag_change_request.created', 'flag_change_request.approved']);
  });

  it('lets the author apply an approved request: the change, its version and its entries, then the cache', async () => {
    const world = await protectedFlag();
    const request = await propose(world, world.author);
    await world.changeRequests.approve(world.admin, request.id);
    const applied = await world.changeRequests.apply(world.author, request.id);
    expect(applied).toMatchObject({ state: 'applied', appliedVersion: 3, appliedBy: 'author@example.com' });
    const flag = await world.flagsService.get(world.admin, world.flag.id);
    expect(flag.environments.production).toMatchObject({ enabled: true, requireApproval: true });
    expect(world.audit.entries.find((entry) => entry.action === 'flag.updated')?.metadata).toMatchObject({
      changeRequestId: request.id,
    });
    expect(world.audit.actions().slice(-2)).toEqual(['flag.updated', 'flag_change_request.applied']);
    expect(world.invalidated).toEqual([APP]);
  });

  it('refuses applying a request that is not approved, and a member who is not its author', async () => {
    const world = await protectedFlag();
    const request = await propose(world, world.author);
    await expect(world.changeRequests.apply(world.author, request.id)).rejects.toMatchObject({ status: 409 });
    await world.changeRequests.approve(world.admin, request.id);
    const bystander = memberAuth(ORG, 'bystander', 'member');
    await expect(world.changeRequests.apply(bystander, request.id)).rejects.toMatchObject({ status: 403 });
    expect((await world.flagsService.get(world.admin, world.flag.id)).version).toBe(2);
  });

  it('makes a request stale when its flag changed since, and refuses to decide it', async () => {
    const world = await protectedFlag();
    const request = await propose(world, world.author);
    await world.changeRequests.putEnvironment(world.admin, world.flag.id, 'staging', on);
    expect((await world.changeRequests.get(world.admin, request.id)).state).toBe('stale');
    await expect(world.changeRequests.approve(world.admin, request.id)).rejects.toMatchObject({
      code: 'change_request_stale',
    });
  });

  it("answers another organization's request as not found", async () => {
    const world = await protectedFlag();
    const request = await propose(world, world.author);
    const stranger = memberAuth(OTHER_ORG, 'stranger', 'admin');
    await expect(world.changeRequests.get(stranger, request.id)).rejects.toMatchObject({ status: 404 });
    await expect(world.changeRequests.approve(stranger, request.id)).rejects.toMatchObject({ status: 404 });
    await expect(world.changeRequests.apply(stranger, request.id)).rejects.toMatchObject({ status: 404 });
  });

  it('refuses every change request route below the Enterprise plan', async () => {
    const world = await protectedFlag();
    world.plans.set(ORG, 'professional');
    await expect(world.changeRequests.list(world.admin, {})).rejects.toMatchObject({ status: 403 });
  });
});
