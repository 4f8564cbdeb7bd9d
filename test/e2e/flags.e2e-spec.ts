import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, generateKeyPair } from 'jose';
import { SigningKeysService } from '../../src/device-tokens/signing-keys.service.js';
import { createApiKey, signIn, createUser } from '../factories/identity.js';
import { createWebhookEndpoint } from '../factories/webhooks.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { sampleValue } from '../support/prometheus-text.js';
import { eventually } from '../support/webhook-receiver.js';
import {
  TEAM_ID,
  attestDevice,
  fabricatedRootEnv,
  registerApp,
  sdk,
  type RegisteredApp,
} from '../support/sdk-client.js';

function createFlag(owner: HttpClient, appId: string, body: Record<string, unknown>) {
  return owner.post(`/api/v1/dashboard/apps/${appId}/flags`).send({ name: 'A flag', ...body });
}

describe('feature flags', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  describe('definitions', () => {
    it('creates a flag disabled in every environment, with version history', async () => {
      const app = await registerApp(t);
      const created = await createFlag(app.owner, app.id, {
        key: 'new_checkout',
        valueType: 'boolean',
        defaultValue: 'false',
      }).expect(201);
      expect(created.body).toMatchObject({
        appId: app.id,
        key: 'new_checkout',
        valueType: 'boolean',
        defaultValue: 'false',
        version: 1,
        environments: {
          production: { enabled: false, value: 'false', rules: [] },
          staging: { enabled: false, value: 'false', rules: [] },
          development: { enabled: false, value: 'false', rules: [] },
        },
      });
      await createFlag(app.owner, app.id, { key: 'new_checkout', valueType: 'boolean', defaultValue: 'true' }).expect(
        409,
      );
      const listed = await app.owner.get(`/api/v1/dashboard/apps/${app.id}/flags`).expect(200);
      expect(listed.body.map((f: { key: string }) => f.key)).toEqual(['new_checkout']);
      const [audit] = await t.sql(`SELECT action FROM audit_logs WHERE organization_id = $1 AND action LIKE 'flag.%'`, [
        app.org.id,
      ]);
      expect(audit).toEqual({ action: 'flag.created' });
    });

    it('validates values against the type and names the field', async () => {
      const app = await registerApp(t);
      const bad = await createFlag(app.owner, app.id, {
        key: 'limit',
        valueType: 'integer',
        defaultValue: '1.5',
      }).expect(422);
      expect(bad.body.fields[0].field).toBe('defaultValue');
      const flag = (
        await createFlag(app.owner, app.id, { key: 'limit', valueType: 'integer', defaultValue: '10' }).expect(201)
      ).body;
      const rules = await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({
          enabled: true,
          value: '20',
          rules: [{ name: 'r', conditions: [{ attribute: 'shoe_size', operator: 'equals', value: '1' }], value: 'x' }],
        })
        .expect(422);
      const fields = rules.body.fields.map((f: { field: string }) => f.field);
      expect(fields).toEqual(expect.arrayContaining(['rules[0].value', 'rules[0].conditions[0].attribute']));
      await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/qa`)
        .send({ enabled: true, value: '1', rules: [] })
        .expect(400);
      await app.owner.get('/api/v1/dashboard/flags/not-a-uuid').expect(400);
    });

    it('keeps Free to ten on/off flags per organization without rules', async () => {
      const app = await registerApp(t, 'free');
      expect(
        (await createFlag(app.owner, app.id, { key: 'text', valueType: 'string', defaultValue: 'a' }).expect(403)).body
          .code,
      ).toBe('flag_type_unavailable');
      for (let i = 0; i < 10; i++)
        await createFlag(app.owner, app.id, { key: `f${i}`, valueType: 'boolean', defaultValue: 'false' }).expect(201);
      expect(
        (await createFlag(app.owner, app.id, { key: 'f10', valueType: 'boolean', defaultValue: 'false' }).expect(403))
          .body.code,
      ).toBe('flag_limit_reached');
      const flag = (await app.owner.get(`/api/v1/dashboard/apps/${app.id}/flags`)).body[0];
      const ruled = await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({ enabled: true, value: 'true', rules: [{ name: 'beta', conditions: [], value: 'false' }] })
        .expect(403);
      expect(ruled.body.code).toBe('rule_limit_reached');
      expect(
        (await app.owner.post(`/api/v1/dashboard/flags/${flag.id}/rollback`).send({ version: 1 }).expect(403)).body
          .code,
      ).toBe('feature_unavailable');
    });

    it('announces creation, changes and deletion to subscribed webhooks, in the same transaction', async () => {
      const app = await registerApp(t);
      await createWebhookEndpoint(app.owner, 'http://127.0.0.1:9/hooks', [
        'flag.created',
        'flag.updated',
        'flag.deleted',
      ]);
      const flag = (
        await createFlag(app.owner, app.id, { key: 'hooked', valueType: 'boolean', defaultValue: 'false' }).expect(201)
      ).body;
      await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({ enabled: true, value: 'true', rules: [] })
        .expect(200);
      await app.owner.delete(`/api/v1/dashboard/flags/${flag.id}`).expect(204);
      const events = await t.sql<{ event_type: string; data: { flag_key: string; app_id: string } }>(
        `SELECT event_type, data FROM webhook_events WHERE organization_id = $1 ORDER BY occurred_at`,
        [app.org.id],
      );
      expect(events.map((e) => e.event_type)).toEqual(['flag.created', 'flag.updated', 'flag.deleted']);
      expect(events[1].data).toMatchObject({ flag_key: 'hooked', app_id: app.id, version: 2 });
    });

    it('lets viewers read and members change, and hides other organizations (404)', async () => {
      const app = await registerApp(t);
      const flag = (
        await createFlag(app.owner, app.id, { key: 'x', valueType: 'boolean', defaultValue: 'false' }).expect(201)
      ).body;
      const viewer = await createUser(t, { org: app.org, role: 'viewer' });
      const viewerAgent = await signIn(t, viewer.email);
      await viewerAgent.get(`/api/v1/dashboard/flags/${flag.id}`).expect(200);
      await viewerAgent.patch(`/api/v1/dashboard/flags/${flag.id}`).send({ name: 'nope' }).expect(403);
      const stranger = await registerApp(t);
      await stranger.owner.get(`/api/v1/dashboard/flags/${flag.id}`).expect(404);
      await stranger.owner.delete(`/api/v1/dashboard/flags/${flag.id}`).expect(404);
      await stranger.owner.get(`/api/v1/dashboard/apps/${app.id}/flags`).expect(404);
    });

    it('records every change as a version and rolls back to an earlier one', async () => {
      const app = await registerApp(t);
      const flag = (await createFlag(app.owner, app.id, { key: 'banner', valueType: 'string', defaultValue: 'off' }))
        .body;
      await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({ enabled: true, value: 'blue', rules: [] })
        .expect(200);
      await app.owner.patch(`/api/v1/dashboard/flags/${flag.id}`).send({ name: 'Banner colour' }).expect(200);
      const history = await app.owner.get(`/api/v1/dashboard/flags/${flag.id}/history`).expect(200);
      expect(history.body.map((h: { version: number }) => h.version)).toEqual([3, 2, 1]);
      const rolled = await app.owner
        .post(`/api/v1/dashboard/flags/${flag.id}/rollback`)
        .send({ version: 1 })
        .expect(200);
      expect(rolled.body).toMatchObject({
        version: 4,
        name: 'A flag',
        environments: { production: { enabled: false } },
      });
      await app.owner.post(`/api/v1/dashboard/flags/${flag.id}/rollback`).send({ version: 99 }).expect(404);
      await app.owner.delete(`/api/v1/dashboard/flags/${flag.id}`).expect(204);
      await app.owner.get(`/api/v1/dashboard/flags/${flag.id}`).expect(404);
    });
  });

  describe('GET /api/v1/flags', () => {
    let app: RegisteredApp;
    let token: string;
    let keyId: string;
    let checkout: { id: string };

    beforeAll(async () => {
      app = await registerApp(t);
      const attested = await attestDevice(t, app);
      token = attested.token;
      keyId = attested.device.keyId;
      checkout = (
        await createFlag(app.owner, app.id, { key: 'checkout', valueType: 'string', defaultValue: 'classic' })
      ).body;
      await app.owner
        .put(`/api/v1/dashboard/flags/${checkout.id}/environments/production`)
        .send({
          enabled: true,
          value: 'classic-v2',
          rules: [
            {
              name: 'new app versions',
              conditions: [{ attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.0' }],
              value: 'express',
            },
          ],
        })
        .expect(200);
      const limits = (
        await createFlag(app.owner, app.id, { key: 'max_items', valueType: 'integer', defaultValue: '5' })
      ).body;
      await app.owner
        .put(`/api/v1/dashboard/flags/${limits.id}/environments/staging`)
        .send({ enabled: true, value: '50', rules: [] })
        .expect(200);
    });

    it('serves typed values for the attestation token, with rate-limit headers', async () => {
      const response = await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${token}`).expect(200);
      expect(response.body).toEqual({ flags: { checkout: 'classic-v2', max_items: 5 } });
      expect(response.headers['x-ratelimit-limit']).toBe('8000');
      const staging = await sdk(t, app)
        .get('/api/v1/flags?environment=staging')
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
      expect(staging.body.flags.max_items).toBe(50);
      await sdk(t, app).get('/api/v1/flags?environment=qa').set('Authorization', `Bearer ${token}`).expect(422);
    });

    it('runs a tenant regex that backtracks catastrophically elsewhere in linear time, and refuses what RE2 cannot run', async () => {
      const regexFlag = (
        await createFlag(app.owner, app.id, { key: 'regex_probe', valueType: 'boolean', defaultValue: 'false' })
      ).body;
      const rule = (value: string) => ({
        enabled: true,
        value: 'false',
        rules: [
          { name: 'models', conditions: [{ attribute: 'device_model', operator: 'regex', value }], value: 'true' },
        ],
      });
      await app.owner
        .put(`/api/v1/dashboard/flags/${regexFlag.id}/environments/production`)
        .send(rule('^(a|a)*$'))
        .expect(200);
      // 8,000 characters (headers stay under Node's 16 KB): a backtracking engine would need 2^8000 steps.
      const attack = `${'a'.repeat(8_000)}!`;
      const served = await sdk(t, app)
        .get('/api/v1/flags')
        .set('Authorization', `Bearer ${token}`)
        .set('X-Device-Model', attack)
        .expect(200);
      expect(served.body.flags.regex_probe).toBe(false);
      const matching = await sdk(t, app)
        .get('/api/v1/flags')
        .set('Authorization', `Bearer ${token}`)
        .set('X-Device-Model', 'aaaa')
        .expect(200);
      expect(matching.body.flags.regex_probe).toBe(true);

      const refused = await app.owner
        .put(`/api/v1/dashboard/flags/${regexFlag.id}/environments/production`)
        .send(rule('(a)\\1'))
        .expect(422);
      expect(JSON.stringify(refused.body.fields)).toMatch(/conditions.*value.*RE2 accepts/);
      await app.owner.delete(`/api/v1/dashboard/flags/${regexFlag.id}`).expect(204);
    });

    it('targets by what the device reports', async () => {
      const response = await sdk(t, app)
        .get('/api/v1/flags')
        .set('Authorization', `Bearer ${token}`)
        .set('X-App-Version', '2.1.0')
        .expect(200);
      expect(response.body.flags.checkout).toBe('express');
    });

    it('accepts an API key of the organization with flags:read instead of a token, and no other key', async () => {
      const key = await createApiKey(t, app.org, ['flags:read']);
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${key}`).expect(200);
      // Any other scope is not enough: a release-notes or feedback key reads no flags.
      for (const scope of ['org:read', 'release_notes:read', 'feedback:read', 'claims:read']) {
        const other = await createApiKey(t, app.org, [scope]);
        const refused = await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${other}`).expect(403);
        expect([scope, refused.body.error]).toEqual([scope, 'The API key lacks the scope flags:read']);
      }
      const otherApp = await registerApp(t);
      const foreign = await createApiKey(t, otherApp.org, ['flags:read']);
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${foreign}`).expect(401);
    });

    it('refuses the token of a device blocked after it was minted: at once here, within seconds on another instance, until unblocked', async () => {
      const blockedApp = await registerApp(t);
      const { device, token } = await attestDevice(t, blockedApp);
      const read = (on: TestApp) => sdk(on, blockedApp).get('/api/v1/flags').set('Authorization', `Bearer ${token}`);
      const peer = await t.startPeer();
      await read(t).expect(200);
      await read(peer).expect(200);

      const path = `/api/v1/devices/${encodeURIComponent(device.keyId)}`;
      await blockedApp.owner.post(`${path}/block`).send({ reason: 'fraud' }).expect(200);
      const refused = await read(t).expect(401);
      expect(refused.body.error).toBe('The attestation token belongs to a blocked device');
      await eventually(async () => (await read(peer)).status === 401, { timeoutMs: 8_000, intervalMs: 250 });

      await blockedApp.owner.post(`${path}/unblock`).send({}).expect(200);
      await read(t).expect(200);
      await eventually(async () => (await read(peer)).status === 200, { timeoutMs: 8_000, intervalMs: 250 });
    });

    it('refuses, after the reread of the deny set, the tokens of a deactivated app, of a deactivated organization and of a revoked debug token whose notification was lost; a fresh instance at its first request', async () => {
      const read = (on: TestApp, of: RegisteredApp, token: string) =>
        sdk(on, of).get('/api/v1/flags').set('Authorization', `Bearer ${token}`);
      const debugToken = async (of: RegisteredApp) => {
        const created = await of.owner.post(`/api/v1/apps/${of.id}/debug-tokens`).send({ name: 'CI' }).expect(201);
        const minted = await sdk(t, of)
          .post('/api/v1/attestation/debug')
          .send({ debugToken: created.body.token })
          .expect(200);
        return { id: created.body.id as string, token: minted.body.token as string };
      };
      const inactive = await registerApp(t);
      const ofInactiveOrganization = await registerApp(t);
      const debugApp = await registerApp(t);
      const tokens = {
        inactive: (await attestDevice(t, inactive)).token,
        ofInactiveOrganization: (await attestDevice(t, ofInactiveOrganization)).token,
      };
      const revoked = await debugToken(debugApp);
      const revokedLongAgo = await debugToken(debugApp);
      // Each instance now caches the apps (30 s): only the deny set can refuse them before then.
      for (const [of, token] of [
        [inactive, tokens.inactive],
        [ofInactiveOrganization, tokens.ofInactiveOrganization],
        [debugApp, revoked.token],
        [debugApp, revokedLongAgo.token],
      ] as const) {
        await read(t, of, token).expect(200);
      }

      // Written without the announcement, as if every instance had missed it.
      await t.sql(`UPDATE apps SET is_active = false WHERE id = $1`, [inactive.id]);
      await t.sql(`UPDATE organizations SET is_active = false WHERE id = $1`, [ofInactiveOrganization.org.id]);
      await t.sql(`UPDATE debug_tokens SET revoked_at = now() WHERE id = $1`, [revoked.id]);
      // Revoked before the longest-lived token it could have minted expired: out of the deny set.
      await t.sql(`UPDATE debug_tokens SET revoked_at = now() - interval '32 days' WHERE id = $1`, [revokedLongAgo.id]);

      const peer = await t.startPeer();
      const first = await read(peer, debugApp, revoked.token).expect(401);
      expect(first.body.error).toBe('The attestation token was minted from a revoked debug token');

      const refusal = async (of: RegisteredApp, token: string) => {
        const response = await read(t, of, token);
        return response.status === 401 ? (response.body.error as string) : response.status;
      };
      await eventually(async () => (await refusal(debugApp, revoked.token)) !== 200, {
        timeoutMs: 8_000,
        intervalMs: 250,
      });
      expect(await refusal(debugApp, revoked.token)).toBe(
        'The attestation token was minted from a revoked debug token',
      );
      expect(await refusal(inactive, tokens.inactive)).toBe('The attestation token belongs to a deactivated app');
      expect(await refusal(ofInactiveOrganization, tokens.ofInactiveOrganization)).toBe(
        'The attestation token belongs to a deactivated app',
      );
      expect(await refusal(debugApp, revokedLongAgo.token)).toBe(200);
    });

    it('answers 401 to an expired token, a token signed by another key, or one not using RS256', async () => {
      const key = await t.app.get(SigningKeysService).signingKey();
      const claims = { app_id: app.id, org_id: app.org.id };
      const expired = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .setSubject('device')
        .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
        .sign(key.privateKey);
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${expired}`).expect(401);
      const { privateKey: stranger } = await generateKeyPair('RS256');
      const forged = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .setSubject('device')
        .setExpirationTime('1h')
        .sign(stranger);
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${forged}`).expect(401);
      const symmetric = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: key.kid })
        .setSubject('device')
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode('a-shared-secret-of-enough-length!!'));
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${symmetric}`).expect(401);
      const valid = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .setSubject('device')
        .setExpirationTime('1h')
        .sign(key.privateKey);
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${valid}`).expect(200);
    });

    it('refuses a token once its exp has passed, though it was accepted (and remembered) before', async () => {
      const key = await t.app.get(SigningKeysService).signingKey();
      const expiresAt = Math.floor(Date.now() / 1000) + 2;
      const shortLived = await new SignJWT({ app_id: app.id, org_id: app.org.id })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .setSubject('short-lived-device')
        .setExpirationTime(expiresAt)
        .sign(key.privateKey);
      const read = () => sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${shortLived}`);
      await read().expect(200);
      await read().expect(200);
      await new Promise((resolve) => setTimeout(resolve, expiresAt * 1000 - Date.now() + 50));
      expect((await read().expect(401)).body.error).toBe(
        'The attestation token is invalid, expired or for another app',
      );
    });

    it('refuses a token of the same device whose signature was altered, after the genuine one was accepted', async () => {
      const { token } = await attestDevice(t, app);
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${token}`).expect(200);
      const [header, payload, signature] = token.split('.');
      const flipped = `${signature.slice(0, -2)}${signature.at(-2) === 'A' ? 'B' : 'A'}${signature.at(-1)}`;
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${header}.${payload}.${flipped}`).expect(401);
    });

    it('answers 401 to identity headers alone or a token of another app', async () => {
      expect((await sdk(t, app).get('/api/v1/flags').expect(401)).body.code).toBe('unauthorized');
      await sdk(t, app).get('/api/v1/flags').set('Authorization', 'Bearer not.a.token').expect(401);
      const other = await registerApp(t);
      const otherToken = (await attestDevice(t, other)).token;
      await sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${otherToken}`).expect(401);
    });

    it('applies a device override ahead of rules until it expires, and only in GET /flags', async () => {
      // The token's own device (X-Device-ID may repeat it).
      const device = keyId;
      const created = await app.owner
        .post(`/api/v1/dashboard/flags/${checkout.id}/overrides`)
        .send({ deviceKeyId: device, forcedValue: 'forced' })
        .expect(201);
      expect(created.body).toMatchObject({
        flagId: checkout.id,
        deviceKeyId: device,
        forcedValue: 'forced',
        expiresAt: null,
        createdBy: expect.stringContaining('@'),
      });
      const forced = await sdk(t, app)
        .get('/api/v1/flags')
        .set('Authorization', `Bearer ${token}`)
        .set('X-Device-ID', device)
        .set('X-App-Version', '2.1.0')
        .expect(200);
      expect(forced.body.flags.checkout).toBe('forced');
      const evaluated = await sdk(t, app)
        .post(`/api/v1/flags/${checkout.id}/evaluate`)
        .set('Authorization', `Bearer ${token}`)
        .send({ deviceId: device })
        .expect(200);
      expect(evaluated.body.resolvedValue).toBe('classic-v2');

      await t.sql(`UPDATE feature_flag_overrides SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        created.body.id,
      ]);
      // A direct database edit is not a notified change: nudge this instance's cache as a change would.
      await app.owner
        .post(`/api/v1/dashboard/flags/${checkout.id}/overrides`)
        .send({ deviceKeyId: 'someone-else', forcedValue: 'x' })
        .expect(201);
      const expired = await sdk(t, app)
        .get('/api/v1/flags')
        .set('Authorization', `Bearer ${token}`)
        .set('X-Device-ID', device)
        .expect(200);
      expect(expired.body.flags.checkout).toBe('classic-v2');

      const list = await app.owner.get(`/api/v1/dashboard/flags/${checkout.id}/overrides`).expect(200);
      expect(list.body.map((o: { deviceKeyId: string }) => o.deviceKeyId)).toEqual(['someone-else', device]);
      await app.owner.delete(`/api/v1/dashboard/flags/${checkout.id}/overrides/${created.body.id}`).expect(204);
      await app.owner.delete(`/api/v1/dashboard/flags/${checkout.id}/overrides/${created.body.id}`).expect(404);
    });

    it("serves a device token its own device only: another device's X-Device-ID is 403 device_id_mismatch, a key names any device", async () => {
      const victim = await attestDevice(t, app);
      const override = await app.owner
        .post(`/api/v1/dashboard/flags/${checkout.id}/overrides`)
        .send({ deviceKeyId: victim.device.keyId, forcedValue: 'victim-only' })
        .expect(201);
      const read = (credential: string, deviceId?: string) => {
        const request = sdk(t, app).get('/api/v1/flags').set('Authorization', `Bearer ${credential}`);
        return deviceId === undefined ? request : request.set('X-Device-ID', deviceId);
      };
      try {
        const refused = await read(token, victim.device.keyId).expect(403);
        expect(refused.body).toMatchObject({ code: 'device_id_mismatch', requestId: expect.any(String) });
        expect(JSON.stringify(refused.body)).not.toContain('victim-only');
        // Its own subject, or no header: its own values.
        expect((await read(token, keyId).expect(200)).body.flags.checkout).toBe('classic-v2');
        expect((await read(token).expect(200)).body.flags.checkout).toBe('classic-v2');
        // The victim's token names the victim, header or not.
        expect((await read(victim.token).expect(200)).body.flags.checkout).toBe('victim-only');
        expect((await read(victim.token, victim.device.keyId).expect(200)).body.flags.checkout).toBe('victim-only');
        // A server (an API key of the organization) names the device.
        const key = await createApiKey(t, app.org, ['flags:read']);
        expect((await read(key, victim.device.keyId).expect(200)).body.flags.checkout).toBe('victim-only');
        expect((await read(key).expect(200)).body.flags.checkout).toBe('classic-v2');
      } finally {
        await app.owner.delete(`/api/v1/dashboard/flags/${checkout.id}/overrides/${override.body.id}`).expect(204);
      }
    });

    it('refuses overrides with an empty device, a value of the wrong type or a past expiry (400)', async () => {
      const url = `/api/v1/dashboard/flags/${checkout.id}/overrides`;
      await app.owner.post(url).send({ deviceKeyId: '', forcedValue: 'x' }).expect(400);
      await app.owner.post(url).send({ deviceKeyId: 'd', forcedValue: '' }).expect(400);
      await app.owner
        .post(url)
        .send({ deviceKeyId: 'd', forcedValue: 'x', expiresAt: new Date(Date.now() - 60_000).toISOString() })
        .expect(400);
      const ints = (
        await createFlag(app.owner, app.id, { key: `ints${Date.now()}`, valueType: 'integer', defaultValue: '1' })
      ).body;
      const wrong = await app.owner
        .post(`/api/v1/dashboard/flags/${ints.id}/overrides`)
        .send({ deviceKeyId: 'd', forcedValue: 'abc' })
        .expect(400);
      expect(wrong.body.error).toMatch(/forcedValue/);
    });
  });

  describe('POST /api/v1/flags/:flagId/evaluate', () => {
    it('traces every active rule in priority order and names the match', async () => {
      const app = await registerApp(t);
      const { token } = await attestDevice(t, app);
      const flag = (
        await createFlag(app.owner, app.id, { key: 'trace_me', valueType: 'boolean', defaultValue: 'false' })
      ).body;
      await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({
          enabled: true,
          value: 'false',
          rules: [
            {
              name: 'germany',
              priority: 1,
              conditions: [{ attribute: 'country', operator: 'equals', value: 'DE' }],
              value: 'true',
            },
            {
              name: 'beta users',
              priority: 2,
              conditions: [{ attribute: 'custom.plan', operator: 'in_list', value: 'beta,pro' }],
              value: 'true',
            },
          ],
        })
        .expect(200);
      const result = await sdk(t, app)
        .post(`/api/v1/flags/${flag.id}/evaluate`)
        .set('Authorization', `Bearer ${token}`)
        .send({ custom: { plan: 'beta' } })
        .expect(200);
      expect(result.body).toMatchObject({
        flagKey: 'trace_me',
        flagId: flag.id,
        environment: 'production',
        resolvedValue: 'true',
        valueType: 'boolean',
        matchedRule: 'beta users',
        isDefault: false,
      });
      expect(result.body.trace).toHaveLength(2);
      expect(result.body.trace[0]).toMatchObject({
        ruleName: 'germany',
        priority: 1,
        matched: false,
        conditions: [{ attribute: 'country', operator: 'equals', expected: 'DE', actual: null, passed: false }],
      });
      expect(result.body.trace[1]).toMatchObject({ ruleName: 'beta users', matched: true });

      const unknownEnv = await sdk(t, app)
        .post(`/api/v1/flags/${flag.id}/evaluate`)
        .set('Authorization', `Bearer ${token}`)
        .send({ environment: 'qa' })
        .expect(200);
      expect(unknownEnv.body).toMatchObject({ resolvedValue: 'false', isDefault: true });
      await sdk(t, app)
        .post('/api/v1/flags/not-a-uuid/evaluate')
        .set('Authorization', `Bearer ${token}`)
        .send({})
        .expect(400);
      await sdk(t, app)
        .post('/api/v1/flags/00000000-0000-4000-8000-000000000000/evaluate')
        .set('Authorization', `Bearer ${token}`)
        .send({})
        .expect(404);
      const events: unknown[] = await t.sql(
        `SELECT 1 FROM device_events WHERE organization_id = $1 AND event_type <> 'attestation'`,
        [app.org.id],
      );
      expect(events).toHaveLength(0);
    });
  });

  describe('GET /api/v1/flags/stream', () => {
    it('streams a snapshot, then a new one when another instance changes a flag', async () => {
      const app = await registerApp(t);
      const { token } = await attestDevice(t, app);
      const flag = (await createFlag(app.owner, app.id, { key: 'live', valueType: 'boolean', defaultValue: 'false' }))
        .body;
      const server = t.app.getHttpServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;

      const events: string[] = [];
      let response: IncomingMessage | undefined;
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        path: '/api/v1/flags/stream',
        headers: { 'X-Bundle-ID': app.bundleId, 'X-Team-ID': TEAM_ID, Authorization: `Bearer ${token}` },
      });
      req.on('response', (res) => {
        response = res;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => events.push(...chunk.split('\n\n').filter((e) => e.startsWith('event:'))));
      });
      req.end();
      const openStreams = async () =>
        sampleValue((await t.http().get('/metrics').expect(200)).text, 'attestly_flag_streams_open');
      try {
        await waitFor(() => events.length === 1);
        expect(await openStreams()).toBe(1);
        expect(response!.headers['content-type']).toMatch(/text\/event-stream/);
        expect(JSON.parse(events[0].split('data: ')[1])).toEqual({ flags: { live: false } });

        // The change goes through a second instance on the same database, signed in there.
        const peer = await t.startPeer();
        const [{ email }] = await t.sql<{ email: string }>(
          `SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.organization_id = $1`,
          [app.org.id],
        );
        const peerOwner = await signIn(peer, email);
        const started = Date.now();
        await peerOwner
          .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
          .send({ enabled: true, value: 'true', rules: [] })
          .expect(200);
        await waitFor(() => events.length === 2, 1000);
        expect(Date.now() - started).toBeLessThan(1000);
        expect(JSON.parse(events[1].split('data: ')[1])).toEqual({ flags: { live: true } });
      } finally {
        req.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      await eventually(async () => (await openStreams()) === 0, { timeoutMs: 3000 });
    });

    it("opens no stream of another device's values for a device token: 403 device_id_mismatch; a key names any device", async () => {
      const app = await registerApp(t);
      const attacker = await attestDevice(t, app);
      const victim = await attestDevice(t, app);
      const flag = (await createFlag(app.owner, app.id, { key: 'gift', valueType: 'string', defaultValue: 'none' }))
        .body;
      await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({ enabled: true, value: 'none', rules: [] })
        .expect(200);
      await app.owner
        .post(`/api/v1/dashboard/flags/${flag.id}/overrides`)
        .send({ deviceKeyId: victim.device.keyId, forcedValue: 'victim-only' })
        .expect(201);
      const key = await createApiKey(t, app.org, ['flags:read']);
      const server = t.app.getHttpServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      /** The stream's answer: its status and first chunk (a snapshot event, or an error body), then closed. */
      const open = (credential: string, deviceId: string) =>
        new Promise<{ status: number; first: string }>((resolve, reject) => {
          const req = httpRequest({
            host: '127.0.0.1',
            port,
            path: '/api/v1/flags/stream',
            headers: {
              'X-Bundle-ID': app.bundleId,
              'X-Team-ID': TEAM_ID,
              Authorization: `Bearer ${credential}`,
              'X-Device-ID': deviceId,
            },
          });
          req.on('response', (res) => {
            res.setEncoding('utf8');
            res.once('data', (chunk: string) => {
              resolve({ status: res.statusCode!, first: chunk });
              req.destroy();
            });
          });
          req.on('error', reject);
          req.setTimeout(3000, () => req.destroy(new Error('no answer from the stream')));
          req.end();
        });
      try {
        const refused = await open(attacker.token, victim.device.keyId);
        expect(refused.status).toBe(403);
        expect(JSON.parse(refused.first)).toMatchObject({ code: 'device_id_mismatch' });
        const own = await open(attacker.token, attacker.device.keyId);
        expect([own.status, JSON.parse(own.first.split('data: ')[1])]).toEqual([200, { flags: { gift: 'none' } }]);
        const named = await open(key, victim.device.keyId);
        expect([named.status, JSON.parse(named.first.split('data: ')[1])]).toEqual([
          200,
          { flags: { gift: 'victim-only' } },
        ]);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it('is refused below the Business plan', async () => {
      const app = await registerApp(t, 'basic');
      const { token } = await attestDevice(t, app);
      const refused = await sdk(t, app).get('/api/v1/flags/stream').set('Authorization', `Bearer ${token}`).expect(403);
      expect(refused.body.code).toBe('feature_unavailable');
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
