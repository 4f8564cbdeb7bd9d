import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ErrorCode as ServerErrorCode, OpenFeature as ServerOpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature as WebOpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { decodeJwt } from 'jose';
import { rolloutBucket } from '../../src/flags/evaluation/rollout.js';
import { createApiKey, randomClientIp } from '../factories/identity.js';
import type { HttpClient, TestApp } from '../harness/test-app.js';
import { addAndroidIdentity, androidSdk, registerAndroidApp, validateAndroid } from '../support/android-client.js';
import { startListeningApp } from '../support/listening-app.js';
import type { FabricatedAndroidApp } from '../support/play-integrity-fabricator.js';
import {
  attestDevice,
  fabricatedRootEnv,
  registerApp,
  sdk,
  TEAM_ID,
  type RegisteredApp,
} from '../support/sdk-client.js';
import { eventually } from '../support/webhook-receiver.js';

/**
 * OpenFeature's own clients against the running service: the server SDK with the OFREP provider
 * (an organization key, the device id as targetingKey) and the web SDK with the OFREP web
 * provider (a device token), both unchanged community packages speaking OFREP over HTTP.
 */

async function createFlag(owner: HttpClient, appId: string, key: string, valueType: string, defaultValue: string) {
  const response = await owner
    .post(`/api/v1/dashboard/apps/${appId}/flags`)
    .send({ name: key, key, valueType, defaultValue })
    .expect(201);
  return response.body.id as string;
}

function setProduction(owner: HttpClient, flagId: string, body: Record<string, unknown>) {
  return owner
    .put(`/api/v1/dashboard/flags/${flagId}/environments/production`)
    .send({ enabled: true, rules: [], ...body })
    .expect(200);
}

/** Device ids on either side of a 50 % rollout of `flagKey`. */
function devicesAround(flagKey: string): { inside: string; outside: string } {
  let inside: string | undefined;
  let outside: string | undefined;
  for (let i = 0; !inside || !outside; i++) {
    const id = `device-${i}`;
    if (rolloutBucket(flagKey, id) < 50) inside ??= id;
    else outside ??= id;
  }
  return { inside, outside };
}

const ROLLOUT_RULE = { name: 'half', conditions: [], rolloutPercentage: 50, value: 'true' };

describe('OpenFeature (OFREP)', () => {
  let t: TestApp;
  let baseUrl: string;
  let app: RegisteredApp;
  let bannerId: string;

  beforeAll(async () => {
    ({ t, baseUrl } = await startListeningApp(await fabricatedRootEnv()));
    app = await registerApp(t);
    const checkout = await createFlag(app.owner, app.id, 'new-checkout', 'boolean', 'false');
    await setProduction(app.owner, checkout, {
      value: 'false',
      rules: [
        {
          name: 'pro plan',
          conditions: [{ attribute: 'custom.plan', operator: 'equals', value: 'pro' }],
          value: 'true',
        },
      ],
    });
    bannerId = await createFlag(app.owner, app.id, 'banner-text', 'string', 'off');
    await setProduction(app.owner, bannerId, { value: 'hello' });
    const items = await createFlag(app.owner, app.id, 'max-items', 'integer', '0');
    await setProduction(app.owner, items, {
      value: '10',
      rules: [
        {
          name: 'new app',
          conditions: [{ attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.0' }],
          value: '20',
        },
      ],
    });
    const theme = await createFlag(app.owner, app.id, 'theme', 'json', '{}');
    await setProduction(app.owner, theme, { value: '{"color":"blue","sizes":[1,2]}' });
    const beta = await createFlag(app.owner, app.id, 'beta', 'boolean', 'false');
    await setProduction(app.owner, beta, { value: 'false', rules: [ROLLOUT_RULE] });
    // Created and never switched on: disabled in every environment.
    await createFlag(app.owner, app.id, 'sunset', 'string', 'legacy');
  });

  afterAll(async () => {
    await ServerOpenFeature.close();
    await WebOpenFeature.close();
    await t.close();
  });

  describe('the server SDK with @openfeature/ofrep-provider and an API key', () => {
    let client: ReturnType<typeof ServerOpenFeature.getClient>;

    beforeAll(async () => {
      const key = await createApiKey(t, app.org, ['flags:read']);
      await ServerOpenFeature.setProviderAndWait(
        new OFREPProvider({
          baseUrl,
          headers: [
            ['Authorization', `Bearer ${key}`],
            ['X-Bundle-ID', app.bundleId],
            ['X-Team-ID', TEAM_ID],
            ['X-Forwarded-For', randomClientIp()],
          ],
        }),
      );
      client = ServerOpenFeature.getClient();
    });

    it('evaluates boolean, string, number and object flags, with targeting from the dynamic context', async () => {
      const targeted = await client.getBooleanDetails('new-checkout', false, { targetingKey: 'device-a', plan: 'pro' });
      expect(targeted).toMatchObject({ value: true, reason: 'TARGETING_MATCH', variant: 'pro plan' });
      expect(targeted.flagMetadata).toMatchObject({ environment: 'production', valueType: 'boolean' });
      const untargeted = await client.getBooleanDetails('new-checkout', true, {
        targetingKey: 'device-a',
        plan: 'free',
      });
      expect(untargeted).toMatchObject({ value: false, reason: 'DEFAULT', variant: 'value' });

      expect(await client.getStringDetails('banner-text', 'x', { targetingKey: 'device-a' })).toMatchObject({
        value: 'hello',
        reason: 'STATIC',
      });
      expect(await client.getNumberValue('max-items', 0, { targetingKey: 'device-a', appVersion: '2.1' })).toBe(20);
      expect(await client.getNumberValue('max-items', 0, { targetingKey: 'device-a', appVersion: '1.9' })).toBe(10);
      expect(await client.getObjectValue('theme', {}, { targetingKey: 'device-a' })).toEqual({
        color: 'blue',
        sizes: [1, 2],
      });
      expect(await client.getStringDetails('sunset', 'x', { targetingKey: 'device-a' })).toMatchObject({
        value: 'legacy',
        reason: 'DISABLED',
        variant: 'off',
      });
    });

    it('buckets the rollout on targetingKey exactly as GET /api/v1/flags buckets the device id', async () => {
      const { inside, outside } = devicesAround('beta');
      const split = await client.getBooleanDetails('beta', false, { targetingKey: inside });
      expect(split).toMatchObject({ value: true, reason: 'SPLIT', variant: 'half' });
      expect(split.flagMetadata).toMatchObject({ rolloutPercentage: 50 });
      expect(await client.getBooleanDetails('beta', true, { targetingKey: outside })).toMatchObject({
        value: false,
        reason: 'DEFAULT',
      });
    });

    it("gives the code's default with FLAG_NOT_FOUND, TYPE_MISMATCH and TARGETING_KEY_MISSING", async () => {
      expect(await client.getBooleanDetails('no-such-flag', true, { targetingKey: 'device-a' })).toMatchObject({
        value: true,
        reason: 'ERROR',
        errorCode: ServerErrorCode.FLAG_NOT_FOUND,
      });
      // OFREP requests name no type: the provider compares the served value with the default's type.
      expect(await client.getNumberDetails('banner-text', 7, { targetingKey: 'device-a' })).toMatchObject({
        value: 7,
        errorCode: ServerErrorCode.TYPE_MISMATCH,
      });
      expect(await client.getStringDetails('banner-text', 'fallback', {})).toMatchObject({
        value: 'fallback',
        errorCode: ServerErrorCode.TARGETING_KEY_MISSING,
      });
    });
  });

  describe('the web SDK with @openfeature/ofrep-web-provider and a device token', () => {
    let token: string;
    let subject: string;
    const statuses: number[] = [];

    beforeAll(async () => {
      ({ token } = await attestDevice(t, app));
      subject = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub as string;
      await WebOpenFeature.setContext({ plan: 'pro', appVersion: '2.4' });
      await WebOpenFeature.setProviderAndWait(
        new OFREPWebProvider({
          baseUrl,
          headers: [
            ['Authorization', `Bearer ${token}`],
            ['X-Bundle-ID', app.bundleId],
            ['X-Team-ID', TEAM_ID],
            ['X-Forwarded-For', randomClientIp()],
          ],
          pollInterval: 100,
          changeDetection: 'polling',
          cacheMode: 'disabled',
          fetchImplementation: async (input: Request | string | URL, init?: RequestInit) => {
            const response = await fetch(input, init);
            statuses.push(response.status);
            return response;
          },
        }),
      );
    });

    afterEach(() => {
      statuses.length = 0;
    });

    it('evaluates every flag once for the device and the static context', () => {
      const client = WebOpenFeature.getClient();
      expect(client.getBooleanDetails('new-checkout', false)).toMatchObject({ value: true, reason: 'TARGETING_MATCH' });
      expect(client.getStringValue('banner-text', 'x')).toBe('hello');
      expect(client.getNumberValue('max-items', 0)).toBe(20);
      expect(client.getObjectValue('theme', {})).toEqual({ color: 'blue', sizes: [1, 2] });
      // The rollout buckets the token's device, as GET /api/v1/flags does.
      const inRollout = rolloutBucket('beta', subject) < 50;
      expect(client.getBooleanDetails('beta', !inRollout)).toMatchObject({
        value: inRollout,
        reason: inRollout ? 'SPLIT' : 'DEFAULT',
      });
      expect(client.getBooleanDetails('no-such-flag', true)).toMatchObject({
        value: true,
        errorCode: 'FLAG_NOT_FOUND',
      });
    });

    it('polls with If-None-Match: 304 while nothing changed, new values once a flag changes', async () => {
      await eventually(() => statuses.includes(304));
      expect(statuses.every((status) => status === 304)).toBe(true);

      const client = WebOpenFeature.getClient();
      let changed = false;
      client.addHandler(ProviderEvents.ConfigurationChanged, () => {
        changed = true;
      });
      await setProduction(app.owner, bannerId, { value: 'bonjour' });
      await eventually(() => changed && client.getStringValue('banner-text', 'x') === 'bonjour');
      expect(statuses).toContain(200);
      // And quiet again afterwards.
      statuses.length = 0;
      await eventually(() => statuses.includes(304));
    });
  });

  describe('the protocol over HTTP', () => {
    let token: string;
    let key: string;
    const post = (path: string, credential: string, body: unknown, on: { bundleId: string } = app) =>
      sdk(t, on)
        .post(path)
        .set('Authorization', `Bearer ${credential}`)
        .send(body as object);

    beforeAll(async () => {
      ({ token } = await attestDevice(t, app));
      key = await createApiKey(t, app.org, ['flags:read']);
    });

    it('answers the bulk evaluation with a strong ETag and 304 to a matching If-None-Match', async () => {
      const first = await post('/ofrep/v1/evaluate/flags', token, { context: { plan: 'pro' } }).expect(200);
      expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      const keys = (first.body.flags as { key: string }[]).map((flag) => flag.key).sort();
      expect(keys).toEqual(['banner-text', 'beta', 'max-items', 'new-checkout', 'sunset', 'theme']);
      // A device learns that a rule served it, not the rule: GET /flags shows it no targeting either.
      const checkout = (first.body.flags as { key: string }[]).find((flag) => flag.key === 'new-checkout');
      expect(checkout).toEqual({
        key: 'new-checkout',
        value: true,
        reason: 'TARGETING_MATCH',
        variant: 'rule',
        metadata: { environment: 'production', valueType: 'boolean' },
      });
      const byKey = await post('/ofrep/v1/evaluate/flags', key, { context: { targetingKey: 'd', plan: 'pro' } }).expect(
        200,
      );
      expect((byKey.body.flags as { key: string }[]).find((flag) => flag.key === 'new-checkout')).toMatchObject({
        variant: 'pro plan',
        metadata: { ruleId: expect.any(String) },
      });
      await post('/ofrep/v1/evaluate/flags', token, { context: { plan: 'pro' } })
        .set('If-None-Match', first.headers.etag)
        .expect(304);
      // Another context is another answer.
      await post('/ofrep/v1/evaluate/flags', token, { context: { plan: 'free' } })
        .set('If-None-Match', first.headers.etag)
        .expect(200);
    });

    it("never shows another organization's flags: FLAG_NOT_FOUND", async () => {
      const other = await registerApp(t);
      const otherKey = await createApiKey(t, other.org, ['flags:read']);
      const answer = await post(
        '/ofrep/v1/evaluate/flags/banner-text',
        otherKey,
        { context: { targetingKey: 'd' } },
        other,
      ).expect(404);
      // OFREP's error body, with the service's envelope beside it (the same refusal, nothing of the other app).
      expect(answer.body).toEqual({
        key: 'banner-text',
        errorCode: 'FLAG_NOT_FOUND',
        errorDetails: expect.any(String),
        error: expect.any(String),
        code: 'flag_not_found',
        requestId: answer.headers['x-request-id'],
      });
      const bulk = await post('/ofrep/v1/evaluate/flags', otherKey, { context: { targetingKey: 'd' } }, other).expect(
        200,
      );
      expect(bulk.body).toEqual({ flags: [] });
      // This organization's key with the other app's identity headers: refused before any flag.
      await post('/ofrep/v1/evaluate/flags/banner-text', key, { context: { targetingKey: 'd' } }, other).expect(401);
    });

    it('refuses bad requests with OFREP errors and bounded inputs, never a 500', async () => {
      const one = (body: unknown, credential = token) => post('/ofrep/v1/evaluate/flags/banner-text', credential, body);
      expect((await one([1, 2]).expect(400)).body).toMatchObject({ key: 'banner-text', errorCode: 'PARSE_ERROR' });
      expect((await one({ context: 'x' }).expect(400)).body).toMatchObject({ errorCode: 'PARSE_ERROR' });
      expect((await one({ context: { nested: { a: 1 } } }).expect(400)).body).toMatchObject({
        errorCode: 'INVALID_CONTEXT',
        errorDetails: expect.stringContaining('nested'),
      });
      const wide = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`a${i}`, i]));
      expect((await one({ context: wide }).expect(400)).body).toMatchObject({ errorCode: 'INVALID_CONTEXT' });
      expect((await one({ context: { note: 'x'.repeat(1001) } }).expect(400)).body).toMatchObject({
        errorCode: 'INVALID_CONTEXT',
      });
      expect((await one({ context: { environment: 'qa' } }).expect(400)).body).toMatchObject({
        errorCode: 'INVALID_CONTEXT',
      });
      expect((await one({ context: { targetingKey: 'someone-else' } }).expect(400)).body).toMatchObject({
        errorCode: 'INVALID_CONTEXT',
        errorDetails: expect.stringContaining('targetingKey'),
      });
      expect((await one({ context: { riskScore: 5 } }).expect(400)).body).toMatchObject({
        errorCode: 'INVALID_CONTEXT',
      });
      expect((await one({ context: {} }, key).expect(400)).body).toMatchObject({ errorCode: 'TARGETING_KEY_MISSING' });
      const bulk = await post('/ofrep/v1/evaluate/flags', key, { context: {} }).expect(400);
      expect(bulk.body).toEqual({
        errorCode: 'TARGETING_KEY_MISSING',
        errorDetails: expect.any(String),
        error: expect.any(String),
        code: 'targeting_key_missing',
        requestId: bulk.headers['x-request-id'],
      });
      const long = 'k'.repeat(5000);
      const missing = await post(`/ofrep/v1/evaluate/flags/${long}`, token, { context: {} }).expect(404);
      expect(missing.body).toMatchObject({ errorCode: 'FLAG_NOT_FOUND', key: 'k'.repeat(100) });
      // Malformed JSON never reaches OFREP: the service's envelope.
      const malformed = await sdk(t, app)
        .post('/ofrep/v1/evaluate/flags')
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', 'application/json')
        .send('{"context":')
        .expect(400);
      expect(malformed.body).toMatchObject({ code: 'bad_request' });
    });

    it("serves a device token its own device's overrides only, whatever targetingKey or X-Device-ID it names; a key names any device", async () => {
      const victim = await attestDevice(t, app);
      const override = await app.owner
        .post(`/api/v1/dashboard/flags/${bannerId}/overrides`)
        .send({ deviceKeyId: victim.device.keyId, forcedValue: 'victim-only' })
        .expect(201);
      const banner = async (credential: string, context: Record<string, unknown>, deviceHeader?: string) => {
        const request = post('/ofrep/v1/evaluate/flags/banner-text', credential, { context });
        if (deviceHeader) request.set('X-Device-ID', deviceHeader);
        return request;
      };
      try {
        const named = await banner(token, { targetingKey: victim.device.keyId });
        expect([named.status, named.body.errorCode]).toEqual([400, 'INVALID_CONTEXT']);
        expect(JSON.stringify(named.body)).not.toContain('victim-only');
        // OFREP takes the device from the token: an X-Device-ID header changes nothing.
        const own = (await banner(token, {})).body.value as string;
        expect(own).not.toBe('victim-only');
        const headed = await banner(token, {}, victim.device.keyId);
        expect([headed.status, headed.body.value]).toEqual([200, own]);
        const bulk = await post('/ofrep/v1/evaluate/flags', token, { context: {} })
          .set('X-Device-ID', victim.device.keyId)
          .expect(200);
        expect(JSON.stringify(bulk.body)).not.toContain('victim-only');
        expect((await banner(victim.token, {})).body).toMatchObject({
          value: 'victim-only',
          reason: 'TARGETING_MATCH',
        });
        expect((await banner(key, { targetingKey: victim.device.keyId })).body.value).toBe('victim-only');
      } finally {
        await app.owner.delete(`/api/v1/dashboard/flags/${bannerId}/overrides/${override.body.id}`).expect(204);
      }
    });

    it('takes the callers of GET /api/v1/flags only', async () => {
      const body = { context: { targetingKey: 'd' } };
      const unauthenticated = await sdk(t, app).post('/ofrep/v1/evaluate/flags').send(body).expect(401);
      expect(unauthenticated.body).toMatchObject({ code: 'unauthorized' });
      const wrongScope = await createApiKey(t, app.org, ['claims:read']);
      await post('/ofrep/v1/evaluate/flags', wrongScope, body).expect(403);
      await t.http().post('/ofrep/v1/evaluate/flags').set('Authorization', `Bearer ${key}`).send(body).expect(400);
    });

    it('serves the OFREP 0.1 configuration, conditionally', async () => {
      const answer = await sdk(t, app)
        .get('/ofrep/v1/configuration')
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
      expect(answer.body).toMatchObject({
        capabilities: { cacheInvalidation: { polling: { enabled: true } } },
      });
      await sdk(t, app)
        .get('/ofrep/v1/configuration')
        .set('Authorization', `Bearer ${token}`)
        .set('If-None-Match', answer.headers.etag)
        .expect(304);
    });
  });

  describe('an Android device token over HTTP', () => {
    let fabricated: FabricatedAndroidApp;
    let token: string;
    let subject: string;
    const post = (path: string, body: unknown, on: { packageName: string } = fabricated) =>
      androidSdk(t, on)
        .post(path)
        .set('Authorization', `Bearer ${token}`)
        .send(body as object);
    const flagsOf = (body: { flags: { key: string; value: unknown }[] }) =>
      new Map(body.flags.map((flag) => [flag.key, flag]));

    beforeAll(async () => {
      // The app's Android build: its own package name, the same flags as its iOS build.
      fabricated = await addAndroidIdentity(app);
      const { response } = await validateAndroid(t, fabricated);
      expect(response.status).toBe(200);
      token = response.body.token as string;
      subject = decodeJwt(token).sub!;
    });

    it("evaluates the app's flags for the Android device as GET /api/v1/flags does, with targeting from the context", async () => {
      const served = await androidSdk(t, fabricated)
        .get('/api/v1/flags')
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
      const bulk = await post('/ofrep/v1/evaluate/flags', { context: {} }).expect(200);
      const flags = flagsOf(bulk.body);
      expect([...flags.keys()].sort()).toEqual(['banner-text', 'beta', 'max-items', 'new-checkout', 'sunset', 'theme']);
      for (const [key, value] of Object.entries(served.body.flags as Record<string, unknown>)) {
        expect([key, flags.get(key)]).toEqual([key, expect.objectContaining({ value })]);
      }
      expect(flags.get('theme')).toMatchObject({ value: { color: 'blue', sizes: [1, 2] }, reason: 'STATIC' });
      expect(flags.get('sunset')).toMatchObject({ value: 'legacy', reason: 'DISABLED' });
      // The rollout buckets the Android device's id, the token's subject.
      const inRollout = rolloutBucket('beta', subject) < 50;
      expect(flags.get('beta')).toMatchObject({ value: inRollout, reason: inRollout ? 'SPLIT' : 'DEFAULT' });

      // What the request adds targets it, in bulk and one flag at a time; the device sees no rule names.
      const targeted = flagsOf((await post('/ofrep/v1/evaluate/flags', { context: { plan: 'pro' } }).expect(200)).body);
      expect(targeted.get('new-checkout')).toEqual({
        key: 'new-checkout',
        value: true,
        reason: 'TARGETING_MATCH',
        variant: 'rule',
        metadata: { environment: 'production', valueType: 'boolean' },
      });
      expect(flags.get('new-checkout')).toMatchObject({ value: false, reason: 'DEFAULT' });
      const one = (key: string, context: Record<string, unknown>) =>
        post(`/ofrep/v1/evaluate/flags/${key}`, { context });
      expect((await one('new-checkout', { plan: 'pro' }).expect(200)).body).toMatchObject({
        key: 'new-checkout',
        value: true,
        reason: 'TARGETING_MATCH',
      });
      expect((await one('new-checkout', { plan: 'free' }).expect(200)).body).toMatchObject({
        value: false,
        reason: 'DEFAULT',
      });
      expect((await one('max-items', { appVersion: '2.1' }).expect(200)).body).toMatchObject({ value: 20 });
      expect((await one('max-items', { appVersion: '1.9' }).expect(200)).body).toMatchObject({ value: 10 });
      expect((await one('beta', {}).expect(200)).body).toMatchObject({ value: inRollout });
      expect((await one('no-such-flag', {}).expect(404)).body).toMatchObject({ errorCode: 'FLAG_NOT_FOUND' });
      // The device is the token's: naming another is refused.
      expect((await one('beta', { targetingKey: 'someone-else' }).expect(400)).body).toMatchObject({
        errorCode: 'INVALID_CONTEXT',
      });
    });

    it('answers its bulk evaluation 304 to a matching If-None-Match until a flag or the context changes', async () => {
      const bulk = (context: Record<string, unknown>, etag?: string) => {
        const request = post('/ofrep/v1/evaluate/flags', { context });
        return etag ? request.set('If-None-Match', etag) : request;
      };
      const first = await bulk({ plan: 'pro' }).expect(200);
      const etag = first.headers.etag;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      const unchanged = await bulk({ plan: 'pro' }, etag).expect(304);
      expect(unchanged.text ?? '').toBe('');
      // Another context is another answer.
      const free = await bulk({ plan: 'free' }, etag).expect(200);
      expect(flagsOf(free.body).get('new-checkout')).toMatchObject({ value: false });

      const before = flagsOf(first.body).get('banner-text')!.value;
      await setProduction(app.owner, bannerId, { value: 'hola' });
      try {
        const changed = await bulk({ plan: 'pro' }, etag).expect(200);
        expect(flagsOf(changed.body).get('banner-text')).toMatchObject({ value: 'hola' });
        expect(changed.headers.etag).not.toBe(etag);
        await bulk({ plan: 'pro' }, changed.headers.etag).expect(304);
      } finally {
        await setProduction(app.owner, bannerId, { value: before });
      }
    });

    it("is refused with another organization's package name: 401, no flag of either app", async () => {
      const other = await registerAndroidApp(t);
      const body = { context: {} };
      for (const path of ['/ofrep/v1/evaluate/flags', '/ofrep/v1/evaluate/flags/banner-text']) {
        const refused = await post(path, body, other.fabricated);
        expect([path, refused.status, refused.body.code]).toEqual([path, 401, 'unauthorized']);
        expect(refused.body).not.toHaveProperty('flags');
        expect(refused.body).not.toHaveProperty('value');
      }
      // The same token under its own package name still evaluates.
      await post('/ofrep/v1/evaluate/flags/banner-text', body).expect(200);
    });
  });
});
