import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { SigningKeysService } from '../../src/device-tokens/signing-keys.service.js';
import {
  appAttestAuthority,
  type FabricatedAuthority,
  type FabricatedDevice,
} from '../support/app-attest-fabricator.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { TEAM_ID, fabricatedRootEnv, registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { ChallengeService } from '../../src/attestation/challenge.service.js';
import { DevicesRepository } from '../../src/devices/devices.repository.js';
import { decode as decodeCbor, Encoder } from 'cbor-x';
import { endMadGrace, freePlanQuotaRefusal, madCounter } from '../support/mad-counters.js';
import { createWebhookEndpoint } from '../factories/webhooks.js';

describe('device attestation', () => {
  let t: TestApp;
  let authority: FabricatedAuthority;

  beforeAll(async () => {
    authority = await appAttestAuthority();
    t = await startTestApp(await fabricatedRootEnv());
  });
  afterAll(async () => {
    await t.close();
  });

  async function challenge(app: RegisteredApp): Promise<string> {
    return (await sdk(t, app).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
  }

  async function attest(
    app: RegisteredApp,
    device: FabricatedDevice,
    extra: Record<string, unknown> = {},
    environment?: 'development' | 'production',
  ) {
    const value = await challenge(app);
    const attestationObject = await device.attest({
      challenge: value,
      teamId: TEAM_ID,
      bundleId: app.bundleId,
      environment,
    });
    return sdk(t, app)
      .post('/api/v1/attestation/validate')
      .send({ keyId: device.keyId, attestationObject, challenge: value, ...extra });
  }

  async function refresh(app: RegisteredApp, device: FabricatedDevice, counter: number) {
    const value = await challenge(app);
    const assertion = device.assert({ challenge: value, counter, teamId: TEAM_ID, bundleId: app.bundleId });
    return sdk(t, app).post('/api/v1/attestation/refresh').send({ keyId: device.keyId, assertion, challenge: value });
  }

  /**
   * The names of the prepared statements run while `work` runs (the hot statements are named,
   * decision 0077; the service's jobs use none of these names).
   */
  async function namedStatementsDuring(work: () => Promise<void>): Promise<string[]> {
    const named: string[] = [];
    const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = prototype.query;
    prototype.query = function (this: unknown, ...args: unknown[]) {
      const config = args[0];
      if (typeof config === 'object' && config !== null && 'name' in config && typeof config.name === 'string') {
        named.push(config.name);
      }
      return original.apply(this, args);
    };
    try {
      await work();
    } finally {
      prototype.query = original;
    }
    return named;
  }

  /** A validate of `device` and the prepared statements it ran (the challenge's issue before it not counted). */
  async function attestCounting(app: RegisteredApp, device: FabricatedDevice) {
    const value = await challenge(app);
    const attestationObject = await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId });
    let response: Awaited<ReturnType<typeof attest>> | undefined;
    const named = await namedStatementsDuring(async () => {
      response = await sdk(t, app)
        .post('/api/v1/attestation/validate')
        .send({ keyId: device.keyId, attestationObject, challenge: value });
    });
    return { status: response!.status, body: response!.body as Record<string, unknown>, named };
  }

  /** What validate stored of a key: its row, its success events and its counts as monthly active. */
  async function stored(app: RegisteredApp, keyId: string) {
    const devices = await t.sql<{ attestation_count: number; velocity_count: number; risk_score: number }>(
      `SELECT attestation_count, velocity_count, risk_score FROM devices WHERE app_id = $1 AND key_id = $2`,
      [app.id, keyId],
    );
    const successes = await t.sql<{ event_type: string; risk_score: number }>(
      `SELECT event_type, risk_score FROM device_events WHERE app_id = $1 AND key_id = $2 AND result = 'success'`,
      [app.id, keyId],
    );
    const counted = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM mad_devices m JOIN devices d ON d.id = m.device_id
        WHERE d.app_id = $1 AND d.key_id = $2`,
      [app.id, keyId],
    );
    return { devices, successes, periods: counted[0].n };
  }

  async function jwks(): Promise<JSONWebKeySet> {
    return (await t.http().get('/.well-known/jwks.json').expect(200)).body as JSONWebKeySet;
  }

  describe('challenges', () => {
    it('issues a 32-byte base64 challenge valid five minutes, with rate-limit headers', async () => {
      const app = await registerApp(t);
      const response = await sdk(t, app).get('/api/v1/attestation/challenge').expect(200);
      expect(Buffer.from(response.body.challenge, 'base64')).toHaveLength(32);
      const ttl = new Date(response.body.expiresAt).getTime() - Date.now();
      expect(ttl).toBeGreaterThan(290_000);
      expect(ttl).toBeLessThanOrEqual(300_000);
      expect(response.headers['x-ratelimit-limit']).toBe('4000');
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    });

    it('needs both identity headers (400) of a registered app (404) that is active (403)', async () => {
      const app = await registerApp(t);
      expect(
        (await t.http().get('/api/v1/attestation/challenge').set('X-Bundle-ID', app.bundleId).expect(400)).body.code,
      ).toBe('bad_request');
      const unknown = await t
        .http()
        .get('/api/v1/attestation/challenge')
        .set('X-Bundle-ID', 'com.nobody.app')
        .set('X-Team-ID', TEAM_ID)
        .expect(404);
      expect(unknown.body).toMatchObject({ code: 'app_not_found', hint: expect.any(String) });

      const second = await app.owner
        .post('/api/v1/apps')
        .send({ appName: 'Second', bundleId: `${app.bundleId}.second`, teamId: TEAM_ID })
        .expect(201);
      await app.owner.post(`/api/v1/apps/${second.body.id}/deactivate`).expect(200);
      const inactive = { ...app, bundleId: `${app.bundleId}.second` };
      expect((await sdk(t, inactive).get('/api/v1/attestation/challenge').expect(403)).body.code).toBe('app_inactive');
    });

    it('refuses identity headers longer than any app can have (400)', async () => {
      const app = await registerApp(t);
      for (const [bundleId, teamId] of [
        ['a'.repeat(156), TEAM_ID],
        [`com.${'x'.repeat(15_000)}.app`, TEAM_ID],
        [app.bundleId, 'T'.repeat(65)],
      ]) {
        const response = await t
          .http()
          .get('/api/v1/attestation/challenge')
          .set('X-Bundle-ID', bundleId)
          .set('X-Team-ID', teamId)
          .expect(400);
        expect(response.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining('at most 155') });
      }
      // At the bounds, an identity is looked up as any other: unknown, 404.
      const longest = await t
        .http()
        .get('/api/v1/attestation/challenge')
        .set('X-Bundle-ID', 'a'.repeat(155))
        .set('X-Team-ID', 'T'.repeat(64))
        .expect(404);
      expect(longest.body.code).toBe('app_not_found');
    });

    it('is single-use, bound to its app, and expires after five minutes', async () => {
      const app = await registerApp(t);
      const other = await registerApp(t);
      const device = authority.createDevice();
      const value = await challenge(app);
      const attestationObject = await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId });
      const body = { keyId: device.keyId, attestationObject, challenge: value };

      expect((await sdk(t, other).post('/api/v1/attestation/validate').send(body).expect(400)).body.code).toBe(
        'challenge_invalid',
      );
      await sdk(t, app).post('/api/v1/attestation/validate').send(body).expect(200);
      expect((await sdk(t, app).post('/api/v1/attestation/validate').send(body).expect(400)).body.code).toBe(
        'challenge_invalid',
      );

      const stale = await challenge(app);
      await t.sql(`UPDATE attestation_challenges SET expires_at = now() - interval '1 second'`);
      const late = await sdk(t, app)
        .post('/api/v1/attestation/validate')
        .send({
          ...body,
          challenge: stale,
          attestationObject: await device.attest({ challenge: stale, teamId: TEAM_ID, bundleId: app.bundleId }),
        })
        .expect(400);
      expect(late.body.code).toBe('challenge_expired');
    });

    it('answers challenge_expired to an expired challenge without a stamp for a day past its expiry (its row), then challenge_invalid', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      // As the service issued challenges before they carried their expiry (and as the benchmark seeds them).
      const value = randomBytes(32).toString('base64');
      const hash = createHash('sha256').update(value).digest('hex');
      await t.sql(`INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at) VALUES ($1, $2, now())`, [
        hash,
        app.id,
      ]);
      const body = {
        keyId: device.keyId,
        attestationObject: await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId }),
        challenge: value,
      };
      const answer = async (): Promise<string> =>
        (await sdk(t, app).post('/api/v1/attestation/validate').send(body).expect(400)).body.code as string;
      const purge = () => t.app.get(ChallengeService).purgeExpired();
      // Long past the minute after which the purge used to forget it.
      await t.sql(
        `UPDATE attestation_challenges SET expires_at = now() - interval '23 hours' WHERE challenge_hash = $1`,
        [hash],
      );
      await purge();
      expect(await answer()).toBe('challenge_expired');
      expect(await answer()).toBe('challenge_expired');
      await t.sql(
        `UPDATE attestation_challenges SET expires_at = now() - interval '25 hours' WHERE challenge_hash = $1`,
        [hash],
      );
      await purge();
      expect(await answer()).toBe('challenge_invalid');
    });
  });

  describe('validate', () => {
    it('mints an RS256 token that verifies against the JWKS, with sub = keyId', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      const response = await attest(app, device, {
        deviceModel: 'iPhone15,2',
        osVersion: '17.4',
        appVersion: '2.1.0',
        country: 'de',
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        token: expect.any(String),
        tokenType: 'Bearer',
        expiresAt: expect.any(String),
        riskScore: 0,
      });

      const { payload, protectedHeader } = await jwtVerify(response.body.token, createLocalJWKSet(await jwks()), {
        issuer: 'http://127.0.0.1:3000',
        audience: app.bundleId,
        algorithms: ['RS256'],
      });
      expect(protectedHeader.kid).toEqual(expect.any(String));
      expect(payload).toMatchObject({
        sub: device.keyId,
        org_id: app.org.id,
        app_id: app.id,
        env: 'production',
        risk_score: 0,
        bundle_id: app.bundleId,
        team_id: TEAM_ID,
        subscription: { status: 'none' },
      });
      expect(payload.exp! - payload.iat!).toBe(3600);
      expect(payload.jti).toEqual(expect.any(String));

      const [row] = await t.sql(
        `SELECT device_model, os_version, country, attestation_count, environment FROM devices WHERE key_id = $1`,
        [device.keyId],
      );
      expect(row).toEqual({
        device_model: 'iPhone15,2',
        os_version: '17.4',
        country: 'DE',
        attestation_count: 1,
        environment: 'production',
      });
      const events = await t.sql(`SELECT event_type, result FROM device_events WHERE key_id = $1`, [device.keyId]);
      expect(events).toEqual([{ event_type: 'attestation', result: 'success' }]);
    });

    it("honours the app's JWT configuration", async () => {
      const app = await registerApp(t, 'professional', {
        jwtConfiguration: {
          overrideExpirationTime: 600,
          includeAppMetadata: false,
          customAudience: 'api.example.com',
          customIssuer: 'https://issuer.example.com',
        },
      });
      const response = await attest(app, authority.createDevice());
      const { payload } = await jwtVerify(response.body.token, createLocalJWKSet(await jwks()), {
        issuer: 'https://issuer.example.com',
        audience: 'api.example.com',
      });
      expect(payload.exp! - payload.iat!).toBe(600);
      expect(payload.bundle_id).toBeUndefined();
    });

    it('names the failed verification step in the code, the hint and the device event', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      const value = await challenge(app);
      const attestationObject = await device.attest({
        challenge: value,
        teamId: TEAM_ID,
        bundleId: 'com.someone.else',
      });
      const response = await sdk(t, app)
        .post('/api/v1/attestation/validate')
        .send({ keyId: device.keyId, attestationObject, challenge: value })
        .expect(401);
      expect(response.body).toMatchObject({ code: 'rp_id_mismatch', hint: expect.stringContaining('rp id mismatch') });
      const [event] = await t.sql(`SELECT result, error_code FROM device_events WHERE key_id = $1`, [device.keyId]);
      expect(event).toEqual({ result: 'failure', error_code: 'rp_id_mismatch' });
    });

    it('refuses an intermediate certificate whose EC point was tampered with as certificate_chain_invalid, recording the failure', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      const value = await challenge(app);
      const genuine = await device.attest({ challenge: value, teamId: TEAM_ID, bundleId: app.bundleId });
      const object = decodeCbor(Buffer.from(genuine, 'base64')) as {
        fmt: string;
        attStmt: { x5c: Uint8Array[]; receipt: Uint8Array };
        authData: Uint8Array;
      };
      const intermediate = Buffer.from(object.attStmt.x5c[1]);
      const key = new X509Certificate(intermediate).publicKey;
      const point = key.export({ type: 'spki', format: 'der' });
      // The uncompressed point (0x04, x, y) ends the key: its length follows the curve (97 bytes on
      // P-384, as Apple's intermediate; 65 on P-256). Its 0x04 prefix becomes 0x05: OpenSSL can no
      // longer read the key. (A fixed 65 once hit a coordinate byte, a no-op when it was already 5.)
      const coordinate = Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url').length;
      const prefix = intermediate.indexOf(point) + point.length - (1 + 2 * coordinate);
      expect(intermediate[prefix]).toBe(0x04);
      intermediate[prefix] = 0x05;
      const tampered = new Encoder({ useRecords: false, mapsAsObjects: false }).encode(
        new Map<string, unknown>([
          ['fmt', object.fmt],
          [
            'attStmt',
            new Map<string, unknown>([
              ['x5c', [Buffer.from(object.attStmt.x5c[0]), intermediate]],
              ['receipt', Buffer.from(object.attStmt.receipt)],
            ]),
          ],
          ['authData', Buffer.from(object.authData)],
        ]),
      );
      const response = await sdk(t, app)
        .post('/api/v1/attestation/validate')
        .send({ keyId: device.keyId, attestationObject: tampered.toString('base64'), challenge: value });
      expect(response.status).toBeLessThan(500);
      expect(response.body.code).toBe('certificate_chain_invalid');
      const [event] = await t.sql(`SELECT result, error_code FROM device_events WHERE key_id = $1`, [device.keyId]);
      expect(event).toEqual({ result: 'failure', error_code: 'certificate_chain_invalid' });
    });

    it('answers 400 for an attestation object that is not CBOR and 422 for malformed fields', async () => {
      const app = await registerApp(t);
      const value = await challenge(app);
      const garbage = await sdk(t, app)
        .post('/api/v1/attestation/validate')
        .send({
          keyId: authority.createDevice().keyId,
          attestationObject: Buffer.from('not cbor').toString('base64'),
          challenge: value,
        })
        .expect(400);
      expect(garbage.body.code).toMatch(/invalid_(cbor|format)/);
      const malformed = await sdk(t, app)
        .post('/api/v1/attestation/validate')
        .send({ keyId: '***', attestationObject: 5 })
        .expect(422);
      expect(malformed.body.fields.map((f: { field: string }) => f.field)).toEqual(
        expect.arrayContaining(['keyId', 'attestationObject', 'challenge']),
      );
    });

    it("applies the app's risk thresholds with domain codes", async () => {
      const strict = await registerApp(t, 'professional', {
        riskThresholds: { blockOnJailbreak: true, maxAllowedRiskScore: 10 },
      });
      expect((await attest(strict, authority.createDevice(), { jailbreakDetected: true })).body.code).toBe(
        'jailbreak_detected',
      );
      const dev = await attest(strict, authority.createDevice(), {}, 'development');
      expect(dev.status).toBe(403);
      expect(dev.body).toMatchObject({
        code: 'risk_threshold_exceeded',
        hint: expect.stringContaining('development_environment'),
      });
      const clean = await attest(strict, authority.createDevice());
      expect(clean.status).toBe(200);
    });
  });

  describe('challenges are single-use whatever the outcome', () => {
    it('uses the challenge up when admission refuses a verified attestation: the same payload cannot try again', async () => {
      const strict = await registerApp(t, 'professional', { riskThresholds: { maxAllowedRiskScore: 10 } });
      const device = authority.createDevice();
      const value = await challenge(strict);
      const attestationObject = await device.attest({
        challenge: value,
        teamId: TEAM_ID,
        bundleId: strict.bundleId,
        environment: 'development',
      });
      const send = () =>
        sdk(t, strict)
          .post('/api/v1/attestation/validate')
          .send({ keyId: device.keyId, attestationObject, challenge: value });
      const refused = await send();
      expect([refused.status, refused.body.code]).toEqual([403, 'risk_threshold_exceeded']);
      // Raising the threshold does not make the used challenge good again.
      await strict.owner
        .put(`/api/v1/apps/${strict.id}`)
        .send({ riskThresholds: { maxAllowedRiskScore: 100 } })
        .expect(200);
      const again = await send();
      expect([again.status, again.body.code]).toEqual([400, 'challenge_invalid']);
    });
  });

  describe('a new key in one statement (decision 0078)', () => {
    const ONE_STATEMENT = ['challenges_use', 'devices_insert_admitted'];

    it('stores the key, its score, its count and its success event in one statement after the challenge', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      const validated = await attestCounting(app, device);
      expect(validated.status).toBe(200);
      expect(validated.named).toEqual(ONE_STATEMENT);
      const { payload } = await jwtVerify(validated.body.token as string, createLocalJWKSet(await jwks()));
      expect(payload.sub).toBe(device.keyId);
      const facts = await stored(app, device.keyId);
      expect(facts.devices).toEqual([{ attestation_count: 1, velocity_count: 1, risk_score: 0 }]);
      expect(facts.successes).toEqual([{ event_type: 'attestation', risk_score: 0 }]);
      expect(facts.periods).toBeGreaterThan(0);
      expect((await madCounter(t, app.org.id)).active_devices).toBe(1);
      // A development key scores 15: stored with its score, as the transaction stores it.
      const development = authority.createDevice();
      expect((await attest(app, development, {}, 'development')).status).toBe(200);
      expect((await stored(app, development.keyId)).devices).toEqual([
        { attestation_count: 1, velocity_count: 1, risk_score: 15 },
      ]);
      // The key known now: re-attesting takes the transaction, and counts the device once.
      const again = await attestCounting(app, device);
      expect(again.status).toBe(200);
      expect(again.named).toEqual([
        ...ONE_STATEMENT,
        'devices_upsert_attested',
        'devices_touch',
        'mad_count_device',
        'devices_record_success',
      ]);
      const after = await stored(app, device.keyId);
      expect(after.devices).toEqual([{ attestation_count: 2, velocity_count: 2, risk_score: 0 }]);
      expect(after.successes).toHaveLength(2);
      expect(after.periods).toBe(facts.periods);
      expect((await madCounter(t, app.org.id)).active_devices).toBe(2);
    });

    it('takes the transaction where an endpoint listens to new devices, and writes their webhooks with the device', async () => {
      const app = await registerApp(t);
      await createWebhookEndpoint(app.owner, 'http://127.0.0.1:9/hook', ['flag.updated']);
      // An endpoint listening to something else changes nothing.
      const quiet = await attestCounting(app, authority.createDevice());
      expect([quiet.status, quiet.named]).toEqual([200, ONE_STATEMENT]);
      await createWebhookEndpoint(app.owner, 'http://127.0.0.1:9/hook', ['device.attested.first']);
      const device = authority.createDevice();
      const heard = await attestCounting(app, device);
      expect(heard.status).toBe(200);
      expect(heard.named).toEqual([
        ...ONE_STATEMENT,
        'devices_upsert_attested',
        'mad_count_device',
        'devices_record_success',
        'webhooks_subscribed_events',
        'webhooks_insert_event',
      ]);
      const events = await t.sql<{ event_type: string; key_id: string }>(
        `SELECT event_type, data->>'key_id' AS key_id FROM webhook_events WHERE organization_id = $1`,
        [app.org.id],
      );
      expect(events).toEqual([{ event_type: 'device.attested.first', key_id: device.keyId }]);
      const facts = await stored(app, device.keyId);
      expect(facts.devices).toEqual([{ attestation_count: 1, velocity_count: 1, risk_score: 0 }]);
      expect(facts.successes).toHaveLength(1);
      expect((await madCounter(t, app.org.id)).active_devices).toBe(2);
    });

    it("never passes the plan's limit in one statement: at the limit the transaction's quota decides", async () => {
      const app = await registerApp(t, 'free');
      expect((await attest(app, authority.createDevice())).status).toBe(200);
      await t.sql(`UPDATE mad_counters SET active_devices = 999 WHERE organization_id = $1`, [app.org.id]);
      // The 1,000th device is within the limit: one statement.
      const last = await attestCounting(app, authority.createDevice());
      expect([last.status, last.named]).toEqual([200, ONE_STATEMENT]);
      expect(await madCounter(t, app.org.id)).toEqual({ active_devices: 1000, over_limit_since: null });
      // The 1,001st would pass it: the statement writes nothing, and the transaction starts the grace period.
      const device = authority.createDevice();
      const over = await attestCounting(app, device);
      expect(over.status).toBe(200);
      expect(over.named.slice(0, 3)).toEqual([...ONE_STATEMENT, 'devices_upsert_attested']);
      const counter = await madCounter(t, app.org.id);
      expect(counter.active_devices).toBe(1001);
      expect(counter.over_limit_since).not.toBeNull();
      const facts = await stored(app, device.keyId);
      expect(facts.devices).toHaveLength(1);
      expect(facts.successes).toHaveLength(1);
      // Should devices race for the last place, the usage feature's count refuses to pass the limit
      // under the counter's lock, and undoes the statement it runs in.
      const [{ period }] = await t.sql<{ period: string }>(
        `SELECT period_start::text AS period FROM mad_counters WHERE organization_id = $1`,
        [app.org.id],
      );
      await t.sql(`UPDATE mad_counters SET active_devices = 1000, over_limit_since = NULL WHERE organization_id = $1`, [
        app.org.id,
      ]);
      const [{ id }] = await t.sql<{ id: string }>(
        `INSERT INTO devices (organization_id, app_id, key_id, public_key_pem, environment)
         VALUES ($1, $2, 'racing-key', '', 'production') RETURNING id`,
        [app.org.id, app.id],
      );
      await expect(
        t.sql(`SELECT mad_count_new_device($1, $2::date, NULL, $3, 1000)`, [app.org.id, period, id]),
      ).rejects.toMatchObject({ code: 'AT402' });
      expect((await madCounter(t, app.org.id)).active_devices).toBe(1000);
      expect(await t.sql(`SELECT 1 FROM mad_devices WHERE device_id = $1`, [id])).toEqual([]);
      expect(
        await t.sql(`SELECT mad_count_new_device($1, $2::date, NULL, $3, 1001) AS n`, [app.org.id, period, id]),
      ).toEqual([{ n: 1001 }]);
    });

    it('counts concurrent new devices exactly, across the limit, and one key attested at once is one device', async () => {
      const app = await registerApp(t, 'free');
      expect((await attest(app, authority.createDevice())).status).toBe(200);
      await t.sql(`UPDATE mad_counters SET active_devices = 995 WHERE organization_id = $1`, [app.org.id]);
      const answers = await Promise.all(Array.from({ length: 10 }, () => attest(app, authority.createDevice())));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      const counter = await madCounter(t, app.org.id);
      expect(counter.active_devices).toBe(1005);
      expect(counter.over_limit_since).not.toBeNull();

      const enterprise = await registerApp(t, 'enterprise');
      const device = authority.createDevice();
      const same = await Promise.all(Array.from({ length: 4 }, () => attest(enterprise, device)));
      expect(same.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const facts = await stored(enterprise, device.keyId);
      expect(facts.devices).toEqual([{ attestation_count: 4, velocity_count: 4, risk_score: 0 }]);
      expect(facts.successes).toHaveLength(4);
      expect((await madCounter(t, enterprise.org.id)).active_devices).toBe(1);
    });
  });

  describe('refresh', () => {
    it('spends the challenge and reads the key in one statement: a usual refresh is two prepared statements', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      expect((await attest(app, device)).status).toBe(200);
      expect((await refresh(app, device, 1)).status).toBe(200);
      const value = await challenge(app);
      const assertion = device.assert({ challenge: value, counter: 2, teamId: TEAM_ID, bundleId: app.bundleId });
      // Nor any other read of the key, named or not.
      const devices = t.app.get(DevicesRepository);
      const findByKey = devices.findByKey.bind(devices);
      let separateReads = 0;
      devices.findByKey = (...args) => {
        separateReads += 1;
        return findByKey(...args);
      };
      let named: string[];
      try {
        let refreshed: { status: number } | undefined;
        named = await namedStatementsDuring(async () => {
          refreshed = await sdk(t, app)
            .post('/api/v1/attestation/refresh')
            .send({ keyId: device.keyId, assertion, challenge: value });
        });
        expect(refreshed?.status).toBe(200);
      } finally {
        devices.findByKey = findByKey;
      }
      expect(named).toEqual(['challenges_use_reading_key', 'devices_refresh_clean']);
      expect(separateReads).toBe(0);
      // The challenge was spent in that statement: the same payload is refused.
      const replay = await sdk(t, app)
        .post('/api/v1/attestation/refresh')
        .send({ keyId: device.keyId, assertion, challenge: value });
      expect(replay.body.code).toBe('challenge_invalid');
    });

    it("spends another organization's key's refresh on its own app only: no device of the other is read or touched", async () => {
      const mine = await registerApp(t);
      const theirs = await registerApp(t);
      const device = authority.createDevice();
      expect((await attest(theirs, device)).status).toBe(200);
      const before = await t.sql(`SELECT sign_counter, last_seen_at, failure_count FROM devices WHERE key_id = $1`, [
        device.keyId,
      ]);
      // Through my app, with my challenge: my app has no such key.
      const refused = await refresh(mine, device, 5);
      expect([refused.status, refused.body.code]).toEqual([401, 'reattest_required']);
      expect(
        await t.sql(`SELECT sign_counter, last_seen_at, failure_count FROM devices WHERE key_id = $1`, [device.keyId]),
      ).toEqual(before);
      // The failure is my app's, against no device.
      expect(
        await t.sql<{ app_id: string; device_id: string | null; error_code: string }>(
          `SELECT app_id, device_id, error_code FROM device_events WHERE key_id = $1 AND result = 'failure'`,
          [device.keyId],
        ),
      ).toEqual([{ app_id: mine.id, device_id: null, error_code: 'reattest_required' }]);
      // Their device still refreshes.
      expect((await refresh(theirs, device, 1)).status).toBe(200);
    });

    it('mints a fresh token for an assertion with a higher counter and refuses a replay', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      expect((await attest(app, device)).status).toBe(200);

      const first = await refresh(app, device, 1);
      expect(first.status).toBe(200);
      const { payload } = await jwtVerify(first.body.token, createLocalJWKSet(await jwks()));
      expect(payload.sub).toBe(device.keyId);

      const replay = await refresh(app, device, 1);
      expect(replay.status).toBe(401);
      expect(replay.body.code).toBe('counter_not_increasing');
      expect((await refresh(app, device, 5)).status).toBe(200);

      const [row] = await t.sql<{ sign_counter: string; counter_anomalies: number }>(
        `SELECT sign_counter, counter_anomalies FROM devices WHERE key_id = $1`,
        [device.keyId],
      );
      expect(row).toEqual({ sign_counter: '5', counter_anomalies: 1 });
    });

    it('lets no one but the key count failures against its device, whatever counter their assertion claims', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      expect((await attest(app, device)).status).toBe(200);
      expect((await refresh(app, device, 2)).status).toBe(200);
      // Another key's assertions for this key id: an old counter, the same and a new one.
      const stranger = authority.createDevice();
      for (const counter of [1, 2, 3]) {
        const value = await challenge(app);
        const assertion = stranger.assert({ challenge: value, counter, teamId: TEAM_ID, bundleId: app.bundleId });
        const refused = await sdk(t, app)
          .post('/api/v1/attestation/refresh')
          .send({ keyId: device.keyId, assertion, challenge: value });
        expect([counter, refused.status, refused.body.code]).toEqual([counter, 401, 'signature_invalid']);
      }
      const stored = () =>
        t.sql<{ failure_count: number; counter_anomalies: number; risk_score: number }>(
          `SELECT failure_count, counter_anomalies, risk_score FROM devices WHERE key_id = $1`,
          [device.keyId],
        );
      expect(await stored()).toEqual([{ failure_count: 0, counter_anomalies: 0, risk_score: 0 }]);
      // On record as the key's failures all the same (analytics, alert rules).
      const events = await t.sql<{ error_code: string }>(
        `SELECT error_code FROM device_events WHERE key_id = $1 AND result = 'failure'`,
        [device.keyId],
      );
      expect(events.map((event) => event.error_code)).toEqual([
        'signature_invalid',
        'signature_invalid',
        'signature_invalid',
      ]);
      // The key's own replayed counter is an anomaly of the device.
      expect((await refresh(app, device, 2)).body.code).toBe('counter_not_increasing');
      expect(await stored()).toEqual([{ failure_count: 1, counter_anomalies: 1, risk_score: 20 }]);
      expect((await refresh(app, device, 4)).status).toBe(200);
    });

    it('admits one of two concurrent refreshes with the same counter and refuses the other as a replay', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      expect((await attest(app, device)).status).toBe(200);
      // Both assertions carry counter 3 over their own challenge, so both pass verification
      // against the stored counter 0; only the counter update decides between them.
      const challenges = [await challenge(app), await challenge(app)];
      const answers = await Promise.all(
        challenges.map((value) =>
          sdk(t, app)
            .post('/api/v1/attestation/refresh')
            .send({
              keyId: device.keyId,
              assertion: device.assert({ challenge: value, counter: 3, teamId: TEAM_ID, bundleId: app.bundleId }),
              challenge: value,
            }),
        ),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
      expect(answers.find((answer) => answer.status === 401)?.body.code).toBe('counter_not_increasing');
      const [row] = await t.sql<{ sign_counter: string; counter_anomalies: number }>(
        `SELECT sign_counter, counter_anomalies FROM devices WHERE key_id = $1`,
        [device.keyId],
      );
      expect(row).toEqual({ sign_counter: '3', counter_anomalies: 1 });
      expect((await refresh(app, device, 3)).body.code).toBe('counter_not_increasing');
      expect((await refresh(app, device, 4)).status).toBe(200);
    });

    it.each<['development' | 'production', number]>([
      ['production', 0],
      ['development', 15],
    ])(
      'records a refresh of a %s device alike: counter, velocity, score and its success event',
      async (environment, riskScore) => {
        const app = await registerApp(t);
        const device = authority.createDevice();
        expect((await attest(app, device, {}, environment)).status).toBe(200);
        const first = await refresh(app, device, 1);
        expect(first.status).toBe(200);
        expect(first.body.riskScore).toBe(riskScore);
        expect((await refresh(app, device, 2)).status).toBe(200);
        const [row] = await t.sql(
          `SELECT sign_counter, velocity_count, risk_score, attestation_count FROM devices WHERE key_id = $1`,
          [device.keyId],
        );
        expect(row).toEqual({ sign_counter: '2', velocity_count: 3, risk_score: riskScore, attestation_count: 1 });
        const events = await t.sql(
          `SELECT event_type, result, risk_score FROM device_events WHERE key_id = $1 ORDER BY created_at`,
          [device.keyId],
        );
        expect(events).toEqual([
          { event_type: 'attestation', result: 'success', risk_score: riskScore },
          { event_type: 'assertion', result: 'success', risk_score: riskScore },
          { event_type: 'assertion', result: 'success', risk_score: riskScore },
        ]);
      },
    );

    it('accepts clientData that contains the challenge', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      await attest(app, device);
      const value = await challenge(app);
      const clientData = Buffer.from(JSON.stringify({ challenge: value, action: 'refresh' }));
      const assertion = device.assert({ clientData, counter: 1, teamId: TEAM_ID, bundleId: app.bundleId });
      await sdk(t, app)
        .post('/api/v1/attestation/refresh')
        .send({ keyId: device.keyId, assertion, challenge: value, clientData: clientData.toString('base64') })
        .expect(200);
    });

    it('answers 401 reattest_required for an unknown or blocked key', async () => {
      const app = await registerApp(t);
      const stranger = authority.createDevice();
      expect((await refresh(app, stranger, 1)).body.code).toBe('reattest_required');
      const device = authority.createDevice();
      await attest(app, device);
      await t.sql(`UPDATE devices SET is_blocked = true WHERE key_id = $1`, [device.keyId]);
      const blocked = await refresh(app, device, 1);
      expect(blocked.status).toBe(401);
      expect(blocked.body.code).toBe('reattest_required');
    });

    it("refuses a key older than the app's maxDeviceAge", async () => {
      const app = await registerApp(t, 'professional', { riskThresholds: { maxDeviceAge: 30 } });
      const device = authority.createDevice();
      await attest(app, device);
      await t.sql(`UPDATE devices SET first_seen_at = now() - interval '31 days' WHERE key_id = $1`, [device.keyId]);
      expect((await refresh(app, device, 1)).body.code).toBe('reattest_required');
    });
  });

  describe('monthly active devices', () => {
    it("refuses a Free organization's 1,001st device after the grace period while device 1 still refreshes", async () => {
      const app = await registerApp(t, 'free');
      const first = authority.createDevice();
      expect((await attest(app, first)).status).toBe(200);
      // 999 more devices were active this month.
      await t.sql(`UPDATE mad_counters SET active_devices = 1000 WHERE organization_id = $1`, [app.org.id]);

      const inGrace = await attest(app, authority.createDevice());
      expect(inGrace.status).toBe(200);
      const counter = await madCounter(t, app.org.id);
      expect(counter.active_devices).toBe(1001);
      expect(counter.over_limit_since).not.toBeNull();

      await endMadGrace(t, app.org.id);
      const refused = await attest(app, authority.createDevice());
      expect(refused.status).toBe(402);
      expect(refused.body).toEqual(freePlanQuotaRefusal(refused.headers['x-request-id']));
      const [after] = await t.sql<{ active_devices: number }>(
        `SELECT active_devices FROM mad_counters WHERE organization_id = $1`,
        [app.org.id],
      );
      expect(after.active_devices).toBe(1001);

      expect((await refresh(app, first, 1)).status).toBe(200);
    });

    it('counts a device once per period however often it attests', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      await attest(app, device);
      await refresh(app, device, 1);
      await refresh(app, device, 2);
      const [counter] = await t.sql<{ active_devices: number }>(
        `SELECT active_devices FROM mad_counters WHERE organization_id = $1`,
        [app.org.id],
      );
      expect(counter.active_devices).toBe(1);
    });

    it('counts a known device again in a period that has not seen it, and only once', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      await attest(app, device);
      // As at the start of a new period: the device has no row in the period being counted.
      await t.sql(`DELETE FROM mad_devices WHERE organization_id = $1`, [app.org.id]);
      await t.sql(`UPDATE mad_counters SET active_devices = 0 WHERE organization_id = $1`, [app.org.id]);
      expect((await refresh(app, device, 1)).status).toBe(200);
      expect((await refresh(app, device, 2)).status).toBe(200);
      const counted = await t.sql<{ active_devices: number }>(
        `SELECT active_devices FROM mad_counters WHERE organization_id = $1`,
        [app.org.id],
      );
      // One row per period counted (billing and, when it differs, calendar), each counting the device once.
      expect(counted.length).toBeGreaterThan(0);
      expect(counted.map((row) => row.active_devices)).toEqual(counted.map(() => 1));
      const rows = await t.sql(`SELECT 1 FROM mad_devices WHERE organization_id = $1`, [app.org.id]);
      expect(rows).toHaveLength(counted.length);
    });
  });

  describe('signing keys', () => {
    it('keeps the retired key in the JWKS after a rotation, so earlier tokens still verify', async () => {
      const app = await registerApp(t);
      const device = authority.createDevice();
      const before = (await attest(app, device)).body.token as string;
      const newKid = await t.app.get(SigningKeysService).rotate();
      const after = (await refresh(app, device, 1)).body.token as string;
      expect(decodeProtectedHeader(after).kid).toBe(newKid);
      expect(decodeProtectedHeader(before).kid).not.toBe(newKid);
      const keySet = createLocalJWKSet(await jwks());
      await jwtVerify(before, keySet);
      await jwtVerify(after, keySet);
      expect((await jwks()).keys.length).toBeGreaterThanOrEqual(2);
    });
  });
});
