import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFlag } from '../factories/flags.js';
import { createApiKey } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { attestDevice, fabricatedRootEnv, registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

describe('flag prerequisites', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  const put = (app: RegisteredApp, key: string, body: Record<string, unknown>, environment = 'production') =>
    app.owner.put(`/api/v1/dashboard/apps/${app.id}/flags/${key}/environments/${environment}`).send(body);

  it('serves the off value while a prerequisite differs, in GET /flags and in the evaluate trace', async () => {
    const app = await registerApp(t);
    const { token, device } = await attestDevice(t, app);
    await createFlag(app.owner, app.id, 'payments');
    const checkout = await createFlag(app.owner, app.id, 'checkout', 'string', 'legacy');
    // A chain: banner needs checkout to serve "express", which needs payments on.
    await createFlag(app.owner, app.id, 'banner', 'string', 'none');
    await put(app, 'checkout', {
      enabled: true,
      value: 'express',
      rules: [],
      prerequisites: [{ flagKey: 'payments', value: 'true' }],
    }).expect(200);
    await put(app, 'banner', {
      enabled: true,
      value: 'shown',
      rules: [],
      prerequisites: [{ flagKey: 'checkout', value: 'express' }],
    }).expect(200);
    const read = async () =>
      (await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${token}`).expect(200)).body.flags as Record<
        string,
        unknown
      >;
    expect(await read()).toEqual({ payments: false, checkout: 'legacy', banner: 'none' });

    const evaluated = await sdk(t, app)
      .post(`/api/v1/flags/${checkout.id}/evaluate`)
      .set('Authorization', `Bearer ${token}`)
      .send({})
      .expect(200);
    expect(evaluated.body).toMatchObject({
      flagKey: 'checkout',
      resolvedValue: 'legacy',
      matchedRule: null,
      isDefault: true,
      trace: [
        {
          ruleName: 'prerequisite payments',
          prerequisite: 'payments',
          matched: false,
          conditions: [{ attribute: 'flag.payments', operator: 'equals', expected: 'true', actual: 'false' }],
        },
      ],
    });

    // A device override of the prerequisite counts for that device only.
    await app.owner
      .post(`/api/v1/dashboard/apps/${app.id}/flags/payments/overrides`)
      .send({ deviceKeyId: device.keyId, forcedValue: 'true' })
      .expect(201);
    expect(await read()).toEqual({ payments: true, checkout: 'express', banner: 'shown' });
    // Another device, named by a server's key (a device token names its own device only).
    const server = await createApiKey(t, app.org, ['flags:read']);
    const other = await sdk(t, app)
      .get('/api/v1/flags')
      .set('Authorization', `Bearer ${server}`)
      .set('X-Device-ID', 'someone-else')
      .expect(200);
    expect(other.body.flags).toEqual({ payments: false, checkout: 'legacy', banner: 'none' });

    await put(app, 'payments', { enabled: true, value: 'true', rules: [] }).expect(200);
    const passing = await sdk(t, app)
      .post(`/api/v1/flags/${checkout.id}/evaluate`)
      .set('Authorization', `Bearer ${token}`)
      .send({})
      .expect(200);
    expect(passing.body).toMatchObject({ resolvedValue: 'express', isDefault: true, trace: [] });
    // Only production has the prerequisites; staging is untouched by them.
    const staging = await sdk(t, app)
      .get('/api/v1/flags?environment=staging')
      .set('Authorization', `Bearer ${server}`)
      .set('X-Device-ID', 'someone-else')
      .expect(200);
    expect(staging.body.flags).toEqual({ payments: false, checkout: 'legacy', banner: 'none' });
    // A PUT that leaves prerequisites out keeps them.
    await put(app, 'checkout', { enabled: true, value: 'express', rules: [] }).expect(200);
    const kept = (await app.owner.get(`/api/v1/dashboard/apps/${app.id}/flags/checkout`).expect(200)).body;
    expect(kept.environments.production.prerequisites).toEqual([{ flagKey: 'payments', value: 'true' }]);
  });

  it('refuses cycles, unknown keys and chains deeper than 5 (400), and values of the wrong type (422)', async () => {
    const app = await registerApp(t);
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) await createFlag(app.owner, app.id, key);
    const needs = (key: string, needed: string, environment = 'production') =>
      put(
        app,
        key,
        { enabled: true, value: 'true', rules: [], prerequisites: [{ flagKey: needed, value: 'true' }] },
        environment,
      );
    await needs('a', 'b').expect(200);
    await needs('b', 'c').expect(200);
    const cycle = await needs('c', 'a').expect(400);
    expect(cycle.body).toMatchObject({
      code: 'invalid_prerequisites',
      error: 'prerequisites would form a cycle: a → b → c → a',
    });
    // Across environments too: evaluation has one order.
    expect((await needs('c', 'a', 'staging').expect(400)).body.code).toBe('invalid_prerequisites');
    expect((await needs('a', 'a').expect(400)).body.error).toMatch(/cycle: a → a/);
    expect((await needs('d', 'ghost').expect(400)).body.error).toBe('d: no flag of this app has the key "ghost"');
    const mistyped = await put(app, 'd', {
      enabled: true,
      value: 'true',
      rules: [],
      prerequisites: [{ flagKey: 'a', value: 'yes' }],
    }).expect(422);
    expect(mistyped.body.fields[0].field).toBe('prerequisites[0].value');
    await put(app, 'd', {
      enabled: true,
      value: 'true',
      rules: [],
      prerequisites: [{ flagKey: 'bad key', value: 'x' }],
    }).expect(422);

    // a → b → c → d → e → f is five deep; g → a would make six.
    await needs('c', 'd').expect(200);
    await needs('d', 'e').expect(200);
    await needs('e', 'f').expect(200);
    expect((await needs('g', 'a').expect(400)).body.error).toBe('g: prerequisite chains are at most 5 flags deep');
    const stored = await t.sql<{ version: number }>(
      `SELECT version FROM feature_flags WHERE app_id = $1 AND key = 'g'`,
      [app.id],
    );
    expect(stored[0].version).toBe(1);
  });

  it('refuses to delete a flag others depend on (409 listing them), and restores prerequisites only if they still hold', async () => {
    const app = await registerApp(t);
    const base = await createFlag(app.owner, app.id, 'base');
    await createFlag(app.owner, app.id, 'first');
    await createFlag(app.owner, app.id, 'second');
    for (const key of ['first', 'second']) {
      await put(app, key, {
        enabled: true,
        value: 'true',
        rules: [],
        prerequisites: [{ flagKey: 'base', value: 'true' }],
      }).expect(200);
    }
    const refused = await app.owner.delete(`/api/v1/dashboard/flags/${base.id}`).expect(409);
    expect(refused.body).toMatchObject({ code: 'flag_has_dependents', dependents: ['first', 'second'] });
    await put(app, 'first', { enabled: true, value: 'true', rules: [], prerequisites: [] }).expect(200);
    await put(app, 'second', { enabled: true, value: 'true', rules: [], prerequisites: [] }).expect(200);
    await app.owner.delete(`/api/v1/dashboard/flags/${base.id}`).expect(204);
    // Version 2 of "first" named "base", which is gone: rolling back to it is refused.
    const rollback = await app.owner.post(`/api/v1/dashboard/apps/${app.id}/flags/first/rollback`).send({ version: 2 });
    expect(rollback.status).toBe(400);
    expect(rollback.body.error).toBe('first: no flag of this app has the key "base"');
  });

  it('is refused below the Business plan (403 feature_unavailable)', async () => {
    const app = await registerApp(t, 'basic');
    await createFlag(app.owner, app.id, 'one');
    await createFlag(app.owner, app.id, 'two');
    const refused = await put(app, 'two', {
      enabled: true,
      value: 'true',
      rules: [],
      prerequisites: [{ flagKey: 'one', value: 'true' }],
    }).expect(403);
    expect(refused.body.code).toBe('feature_unavailable');
    await put(app, 'two', { enabled: true, value: 'true', rules: [], prerequisites: [] }).expect(200);
  });
});
