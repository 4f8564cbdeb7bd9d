// Android apps through Google Play Integrity (issue 34): an app's Android identity, SDK calls named
// by X-Package-Name, and POST /api/v1/attestation/android/validate through the same gate,
// admission, events and token as App Attest, with every refusal naming its step.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { PLAY_INTEGRITY_ERROR_CODES } from '../../src/attestation/play-integrity/play-integrity.js';
import { CliArgs } from '../../src/cli/cli-args.js';
import type { CliContext } from '../../src/cli/cli-context.js';
import { androidAppCommand, androidTokenCommand } from '../../src/cli/demo-device-commands.js';
import { RateLimitService } from '../../src/rate-limit/rate-limit.service.js';
import { createClaim, staticClaim } from '../factories/claims.js';
import { createFlag } from '../factories/flags.js';
import { createApiKey, orgWithMember, randomClientIp } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import {
  androidChallenge,
  androidInstallation,
  androidPackageName,
  androidSdk,
  androidSettings,
  registerAndroidApp,
  validateAndroid,
  type AndroidValidateOptions,
} from '../support/android-client.js';
import {
  fabricateAndroidApp,
  fabricatedRequestHash,
  type FabricatedAndroidApp,
  type MintOptions,
} from '../support/play-integrity-fabricator.js';
import { expectRateLimited, spendRateLimit } from '../support/rate-limits.js';
import {
  attestAttempt,
  attestDevice,
  fabricatedRootEnv,
  registerApp,
  sdk,
  TEAM_ID,
  type RegisteredApp,
} from '../support/sdk-client.js';
import { sleep, WebhookReceivers } from '../support/webhook-receiver.js';
import { endMadGrace, freePlanQuotaRefusal, madCounter } from '../support/mad-counters.js';

const t: TestApp = await startTestApp(await fabricatedRootEnv());
const receivers = new WebhookReceivers();

afterAll(async () => {
  await t.close();
  await receivers.closeAll();
});

let sequence = 0;
const packageName = androidPackageName;
const android = (fabricated: { packageName: string }) => androidSdk(t, fabricated);
const settingsOf = androidSettings;
const androidApp = (tier = 'professional', policy: Record<string, unknown> = {}) => registerAndroidApp(t, tier, policy);
const challengeOf = (fabricated: FabricatedAndroidApp) => androidChallenge(t, fabricated);
const installation = androidInstallation;
const validate = (fabricated: FabricatedAndroidApp, options: AndroidValidateOptions = {}) =>
  validateAndroid(t, fabricated, options);

describe('Android attestation', () => {
  describe("an app's Android identity", () => {
    it('is set, read and replaced by an Admin; the keys are sealed and never returned', async () => {
      const app = await registerApp(t);
      const fabricated = fabricateAndroidApp(packageName());
      await app.owner.get(`/api/v1/apps/${app.id}/android`).expect(404);
      const hex = Buffer.from(fabricated.certificateSha256Digest, 'base64url').toString('hex').toUpperCase();
      const colons = hex.match(/../g)!.join(':');
      const put = await app.owner
        .put(`/api/v1/apps/${app.id}/android`)
        .send({ ...settingsOf(fabricated), certificateSha256Digests: [colons], policy: { refuseUnlicensed: true } })
        .expect(200);
      expect(put.body).toMatchObject({
        appId: app.id,
        packageName: fabricated.packageName,
        certificateSha256Digests: [fabricated.certificateSha256Digest],
        hasDecryptionKey: true,
        hasVerificationKey: true,
        policy: {
          acceptedDeviceVerdicts: ['MEETS_STRONG_INTEGRITY', 'MEETS_DEVICE_INTEGRITY'],
          refuseUnrecognizedVersion: true,
          refuseUnlicensed: true,
          basicIntegrityAsRooted: true,
          notFromPlayAsDevelopment: true,
        },
      });
      const read = await app.owner.get(`/api/v1/apps/${app.id}/android`).expect(200);
      expect(read.body).toEqual(put.body);
      for (const body of [put.body, read.body]) {
        const text = JSON.stringify(body);
        expect(text).not.toContain(fabricated.decryptionKeyBase64);
        expect(text).not.toContain(fabricated.verificationKeyBase64);
      }
      const [stored] = await t.sql<{ decryption_key_sealed: string; verification_key_sealed: string }>(
        `SELECT decryption_key_sealed, verification_key_sealed FROM android_identities WHERE app_id = $1`,
        [app.id],
      );
      expect(stored.decryption_key_sealed).not.toContain(fabricated.decryptionKeyBase64);
      expect(stored.verification_key_sealed).not.toContain(fabricated.verificationKeyBase64.slice(0, 40));

      // Later changes may leave the keys out to keep them; the policy merges.
      const changed = await app.owner
        .put(`/api/v1/apps/${app.id}/android`)
        .send({
          packageName: fabricated.packageName,
          certificateSha256Digests: [fabricated.certificateSha256Digest],
          policy: { acceptedDeviceVerdicts: ['MEETS_BASIC_INTEGRITY'] },
        })
        .expect(200);
      expect(changed.body.policy).toMatchObject({
        acceptedDeviceVerdicts: ['MEETS_BASIC_INTEGRITY'],
        refuseUnlicensed: true,
      });
    });

    it('refuses bad settings in the envelope, never with a 500', async () => {
      const app = await registerApp(t);
      const fabricated = fabricateAndroidApp(packageName());
      const put = (body: Record<string, unknown>) => app.owner.put(`/api/v1/apps/${app.id}/android`).send(body);
      const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
        .publicKey.export({ format: 'der', type: 'spki' })
        .toString('base64');
      const cases: [Record<string, unknown>, string][] = [
        [{ ...settingsOf(fabricated), packageName: 'not a package' }, 'packageName'],
        [{ ...settingsOf(fabricated), certificateSha256Digests: ['abcd'] }, 'certificateSha256Digests[0]'],
        [{ ...settingsOf(fabricated), certificateSha256Digests: [] }, 'certificateSha256Digests'],
        [{ ...settingsOf(fabricated), decryptionKey: Buffer.alloc(16).toString('base64') }, 'decryptionKey'],
        [{ ...settingsOf(fabricated), verificationKey: ec384 }, 'verificationKey'],
        [{ ...settingsOf(fabricated), verificationKey: 'bm90IGEga2V5' }, 'verificationKey'],
        [
          { ...settingsOf(fabricated), policy: { acceptedDeviceVerdicts: ['MEETS_VIRTUAL_INTEGRITY'] } },
          'acceptedDeviceVerdicts',
        ],
        [{ ...settingsOf(fabricated), policy: { acceptedDeviceVerdicts: [] } }, 'acceptedDeviceVerdicts'],
        [{ ...settingsOf(fabricated), decryptionKey: undefined }, 'decryptionKey'],
      ];
      for (const [body, field] of cases) {
        const response = await put(body);
        expect([field, response.status]).toEqual([field, 400]);
        expect(response.body).toMatchObject({ code: 'bad_request' });
        expect(response.body.error).toContain(field);
      }
      await app.owner.get(`/api/v1/apps/${app.id}/android`).expect(404);

      // A package name is one app's across the service.
      await put(settingsOf(fabricated)).expect(200);
      const other = await registerApp(t);
      const duplicate = await other.owner.put(`/api/v1/apps/${other.id}/android`).send(settingsOf(fabricated));
      expect(duplicate.status).toBe(409);
    });

    it("is another organization's 404, to read, change or delete", async () => {
      const { app, fabricated } = await androidApp();
      const stranger = await registerApp(t);
      await stranger.owner.get(`/api/v1/apps/${app.id}/android`).expect(404);
      await stranger.owner
        .put(`/api/v1/apps/${app.id}/android`)
        .send(settingsOf(fabricateAndroidApp(packageName())))
        .expect(404);
      await stranger.owner.delete(`/api/v1/apps/${app.id}/android`).expect(404);
      const [row] = await t.sql<{ package_name: string }>(
        `SELECT package_name FROM android_identities WHERE app_id = $1`,
        [app.id],
      );
      expect(row.package_name).toBe(fabricated.packageName);
    });

    it('once deleted, the package name names no app', async () => {
      const { app, fabricated } = await androidApp();
      await android(fabricated).get('/api/v1/attestation/challenge').expect(200);
      await app.owner.delete(`/api/v1/apps/${app.id}/android`).expect(204);
      await app.owner.delete(`/api/v1/apps/${app.id}/android`).expect(404);
      const response = await android(fabricated).get('/api/v1/attestation/challenge');
      expect([response.status, response.body.code]).toEqual([404, 'app_not_found']);
      expect(response.body.error).toContain('package name');
    });
  });

  describe('an Android-only app', () => {
    /** An organization of its own, with no app yet, and the Android-only app created in one call. */
    async function androidOnlyApp(tier = 'professional') {
      const { org, agent: owner } = await orgWithMember(t, { tier });
      const fabricated = fabricateAndroidApp(packageName());
      // Looked up before it exists: the miss is cached, and forgotten when the app is created.
      await android(fabricated).get('/api/v1/attestation/challenge').expect(404);
      const created = await owner
        .post('/api/v1/apps')
        .send({ appName: 'Android Notes', android: settingsOf(fabricated, { refuseUnlicensed: true }) });
      expect(created.status).toBe(201);
      return { org, owner, fabricated, app: created.body as { id: string; bundleId: null; teamId: null } };
    }

    async function appsOf(orgId: string) {
      return t.sql<{ id: string }>(`SELECT id FROM apps WHERE organization_id = $1`, [orgId]);
    }

    async function identitiesOf(fabricated: { packageName: string }) {
      return t.sql<{ app_id: string }>(`SELECT app_id FROM android_identities WHERE package_name = $1`, [
        fabricated.packageName,
      ]);
    }

    it('is created in one call, validated into a device token and served flags', async () => {
      const { org, owner, fabricated, app } = await androidOnlyApp();
      expect(app).toMatchObject({ appName: 'Android Notes', bundleId: null, teamId: null, isPrimary: true });
      expect((await owner.get(`/api/v1/apps/${app.id}`).expect(200)).body).toMatchObject({
        bundleId: null,
        teamId: null,
      });
      expect((await owner.get(`/api/v1/apps/${app.id}/android`).expect(200)).body).toMatchObject({
        packageName: fabricated.packageName,
        hasDecryptionKey: true,
        policy: { refuseUnlicensed: true },
      });
      const audit = await t.sql<{ action: string }>(
        `SELECT action FROM audit_logs WHERE organization_id = $1 AND resource_id = $2 ORDER BY action`,
        [org.id, app.id],
      );
      expect(audit.map((row) => row.action)).toEqual(['app.android_created', 'app.created']);
      // The quick start is the Swift SDK's: none for an app without an iOS identity.
      expect((await owner.get('/api/v1/org/quickstart-snippet').expect(200)).body).toEqual({
        appId: app.id,
        appName: 'Android Notes',
        bundleId: null,
        teamId: null,
        swiftSnippet: null,
      });
      const flag = await createFlag(owner, app.id, 'android_only_banner', 'string', 'classic');
      await owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({ enabled: true, value: 'hello', rules: [] })
        .expect(200);

      const { response } = await validate(fabricated, { profile: { deviceModel: 'Pixel 9' } });
      expect(response.status).toBe(200);
      const token = response.body.token as string;
      const claims = decodeJwt(token);
      expect(claims).toMatchObject({ app_id: app.id, org_id: org.id, aud: fabricated.packageName });
      expect(claims).not.toHaveProperty('bundle_id');
      expect(claims).not.toHaveProperty('team_id');
      const verifyKey = await createApiKey(t, org, ['tokens:verify']);
      const verified = await t
        .http()
        .post('/api/v1/tokens/verify')
        .set('Authorization', `Bearer ${verifyKey}`)
        .send({ token })
        .expect(200);
      expect(verified.body.valid).toBe(true);
      const flags = await android(fabricated).get('/api/v1/flags').set('Authorization', `Bearer ${token}`).expect(200);
      expect(flags.body.flags).toMatchObject({ android_only_banner: 'hello' });

      const devices = await owner.get('/api/v1/devices').expect(200);
      expect(devices.body.items).toEqual([
        expect.objectContaining({ appId: app.id, keyId: claims.sub, platform: 'android', deviceModel: 'Pixel 9' }),
      ]);
      expect((await owner.get('/api/v1/devices?platform=ios').expect(200)).body.metadata.total).toBe(0);
    });

    it('is not shut out by iOS headers that spell its package name, and they never reach it', async () => {
      const { fabricated } = await androidOnlyApp();
      // An attacker's iOS lookup whose bundle id is "android" and team id the package: a miss,
      // once cached under the package's own key (30 s of 404s for the app's every SDK call).
      const ios = () =>
        t
          .http()
          .get('/api/v1/attestation/challenge')
          .set('X-Bundle-ID', 'android')
          .set('X-Team-ID', fabricated.packageName)
          .set('X-Forwarded-For', randomClientIp());
      expect((await ios()).status).toBe(404);
      await android(fabricated).get('/api/v1/attestation/challenge').expect(200);
      // And once the package is cached, the same iOS headers still name no app.
      expect((await ios()).status).toBe(404);
    });

    it('answers an Android identity set while its app is deleted with 404, never a 500', async () => {
      const { owner } = await androidOnlyApp();
      const answers: string[] = [];
      for (let i = 0; i < 8; i++) {
        const other = await owner
          .post('/api/v1/apps')
          .send({ appName: `Racing ${i}`, bundleId: `com.example.racing${process.pid}x${i}`, teamId: TEAM_ID })
          .expect(201);
        const [put, removed] = await Promise.all([
          owner
            .put(`/api/v1/apps/${other.body.id as string}/android`)
            .send(settingsOf(fabricateAndroidApp(packageName()))),
          sleep(i * 3).then(() => owner.delete(`/api/v1/apps/${other.body.id as string}`)),
        ]);
        answers.push(`${put.status}/${removed.status}`);
      }
      // The change lands before the deletion (200, then 204 takes the identity along) or after it (404).
      for (const answer of answers) expect(['200/204', '404/204']).toContain(answer);
    });

    it('gives an emulator build a debug token through its package name, never counted as a device', async () => {
      // Play Integrity does not pass on an emulator or a CI runner: the debug provider is the way in.
      const { org, owner, fabricated, app } = await androidOnlyApp();
      const created = await owner.post(`/api/v1/apps/${app.id}/debug-tokens`).send({ name: 'Android emulator' });
      expect(created.status).toBe(201);
      const exchanged = await android(fabricated)
        .post('/api/v1/attestation/debug')
        .send({ debugToken: created.body.token as string, deviceId: 'emulator-5554' });
      expect(exchanged.status).toBe(200);
      const claims = decodeJwt(exchanged.body.token as string);
      expect(claims).toMatchObject({
        app_id: app.id,
        org_id: org.id,
        aud: fabricated.packageName,
        env: 'debug',
        debug: true,
        sub: `debug:${created.body.id as string}:emulator-5554`,
      });
      const flags = await android(fabricated)
        .get('/api/v1/flags')
        .set('Authorization', `Bearer ${exchanged.body.token as string}`);
      expect(flags.status).toBe(200);
      expect((await owner.get('/api/v1/devices').expect(200)).body.metadata.total).toBe(0);
      // Another app's package name does not take this app's debug token.
      const other = await androidOnlyApp();
      const refused = await android(other.fabricated)
        .post('/api/v1/attestation/debug')
        .send({ debugToken: created.body.token as string, deviceId: 'emulator-5554' });
      expect([refused.status, refused.body.code]).toEqual([401, expect.any(String)]);
    });

    it('is not reached by iOS headers, and App Attest is refused for it before the challenge is spent', async () => {
      const { fabricated } = await androidOnlyApp();
      // No Bundle ID names it; not its package name either.
      const unknown = await t
        .http()
        .get('/api/v1/attestation/challenge')
        .set('X-Bundle-ID', fabricated.packageName)
        .set('X-Team-ID', TEAM_ID);
      expect([unknown.status, unknown.body.code]).toEqual([404, 'app_not_found']);

      const challenge = await challengeOf(fabricated);
      const attest = await android(fabricated)
        .post('/api/v1/attestation/validate')
        .send({ keyId: randomBytes(32).toString('base64'), attestationObject: 'AAAA', challenge });
      expect([attest.status, attest.body.code]).toEqual([400, 'ios_not_configured']);
      // The challenge is still good for the Android route.
      const integrityToken = await fabricated.mint({ challenge });
      const validated = await android(fabricated)
        .post('/api/v1/attestation/android/validate')
        .send({ integrityToken, challenge, installationId: installation() });
      expect(validated.status).toBe(200);
    });

    it('refuses a create without any identity, with half an iOS one, or with a refused Android one, leaving nothing behind', async () => {
      const { org, agent: owner } = await orgWithMember(t, { tier: 'professional' });
      const fabricated = fabricateAndroidApp(packageName());
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'bundleId'],
        [{ bundleId: 'com.example.half' }, 'teamId'],
        [{ teamId: TEAM_ID }, 'bundleId'],
        [{ bundleId: 'com.example.half', android: settingsOf(fabricated) }, 'teamId'],
        [{ bundleId: null, teamId: null, android: settingsOf(fabricated) }, 'bundleId'],
        [{ android: { ...settingsOf(fabricated), packageName: 'not a package' } }, 'android.packageName'],
        [
          { android: { ...settingsOf(fabricated), certificateSha256Digests: ['abcd'] } },
          'android.certificateSha256Digests[0]',
        ],
        [{ android: { ...settingsOf(fabricated), verificationKey: 'bm90IGEga2V5' } }, 'android.verificationKey'],
        [{ android: { ...settingsOf(fabricated), decryptionKey: undefined } }, 'android.decryptionKey'],
        [{ android: 'com.example.app' }, 'android'],
      ];
      for (const [body, field] of cases) {
        const response = await owner.post('/api/v1/apps').send({ appName: 'Refused', ...body });
        expect([field, response.status]).toEqual([field, 400]);
        expect(response.body).toMatchObject({ code: 'bad_request' });
        expect(response.body.error).toContain(field);
      }
      expect(await appsOf(org.id)).toEqual([]);
      expect(await identitiesOf(fabricated)).toEqual([]);

      // A package name another app has: the PUT's 409, and the app is not created either.
      const { app: holder } = await androidApp();
      const taken = await holder.owner.get(`/api/v1/apps/${holder.id}/android`).expect(200);
      const duplicate = await owner
        .post('/api/v1/apps')
        .send({ appName: 'Copycat', android: { ...settingsOf(fabricated), packageName: taken.body.packageName } });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.error).toContain('package name');
      const viaPut = await owner.put(`/api/v1/apps/${holder.id}/android`).send(settingsOf(fabricated));
      expect(viaPut.status).toBe(404);
      expect(await appsOf(org.id)).toEqual([]);
      expect(
        await t.sql(`SELECT 1 FROM audit_logs WHERE organization_id = $1 AND resource_type = 'app'`, [org.id]),
      ).toEqual([]);

      // Both identities in one call.
      const both = await owner.post('/api/v1/apps').send({
        appName: 'Both',
        bundleId: `com.example.both${process.pid}x${++sequence}`,
        teamId: TEAM_ID,
        android: settingsOf(fabricated),
      });
      expect(both.status).toBe(201);
      expect(both.body.bundleId).toMatch(/^com\.example\.both/);
      expect(await identitiesOf(fabricated)).toEqual([{ app_id: both.body.id }]);
    });

    it('keeps its only identity: deleting it is refused until the app is given an iOS one, set once', async () => {
      const { owner, fabricated, app } = await androidOnlyApp();
      const refused = await owner.delete(`/api/v1/apps/${app.id}/android`);
      expect([refused.status, refused.body.code]).toEqual([409, 'conflict']);
      expect(refused.body.error).toContain('only identity');
      await android(fabricated).get('/api/v1/attestation/challenge').expect(200);

      await owner.put(`/api/v1/apps/${app.id}`).send({ bundleId: 'com.example.half' }).expect(400);
      const bundleId = `com.example.later${process.pid}x${++sequence}`;
      const given = await owner.put(`/api/v1/apps/${app.id}`).send({ bundleId, teamId: TEAM_ID }).expect(200);
      expect(given.body).toMatchObject({ bundleId, teamId: TEAM_ID });
      // The same values change nothing; others are refused: the iOS identity is immutable once set.
      await owner.put(`/api/v1/apps/${app.id}`).send({ bundleId, teamId: TEAM_ID }).expect(200);
      const changed = await owner
        .put(`/api/v1/apps/${app.id}`)
        .send({ bundleId: `${bundleId}.other`, teamId: TEAM_ID });
      expect([changed.status, changed.body.code]).toEqual([409, 'conflict']);
      // The iOS headers reach it now, and the Android identity may go.
      await sdk(t, { bundleId }).get('/api/v1/attestation/challenge').expect(200);
      await owner.delete(`/api/v1/apps/${app.id}/android`).expect(204);
      expect((await owner.get(`/api/v1/apps/${app.id}`).expect(200)).body.bundleId).toBe(bundleId);

      // Another organization's app is 404; an iOS identity another app has is the create's 409.
      const { app: other, owner: otherOwner } = await androidOnlyApp();
      await owner
        .put(`/api/v1/apps/${other.id}`)
        .send({ bundleId: `${bundleId}.x`, teamId: TEAM_ID })
        .expect(404);
      const duplicate = await otherOwner.put(`/api/v1/apps/${other.id}`).send({ bundleId, teamId: TEAM_ID });
      expect([duplicate.status, duplicate.body.code]).toEqual([409, 'conflict']);
      expect(duplicate.body.error).toContain('Bundle ID');
      expect((await otherOwner.get(`/api/v1/apps/${other.id}`).expect(200)).body.bundleId).toBeNull();
    });
  });

  describe('validate', () => {
    let app: RegisteredApp;
    let fabricated: FabricatedAndroidApp;
    let verifyKey: string;

    beforeAll(async () => {
      ({ app, fabricated } = await androidApp('enterprise'));
      verifyKey = await createApiKey(t, app.org, ['tokens:verify']);
      await createClaim(app.owner, staticClaim({ claimKey: 'plan', staticValue: 'gold' }));
      const flag = await createFlag(app.owner, app.id, 'android_checkout', 'string', 'classic');
      await app.owner
        .put(`/api/v1/dashboard/flags/${flag.id}/environments/production`)
        .send({ enabled: true, value: 'express', rules: [] })
        .expect(200);
    });

    it('turns a fabricated integrity token into a device token with the claims, verified and served flags', async () => {
      const { response, installationId } = await validate(fabricated, {
        profile: { deviceModel: 'Pixel 8', osVersion: '15', appVersion: '2.1.0', country: 'de' },
      });
      expect(response.status).toBe(200);
      const token = response.body.token as string;
      const jwks = (await t.http().get('/.well-known/jwks.json').expect(200)).body as JSONWebKeySet;
      const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['RS256'] });
      expect(payload).toMatchObject({ app_id: app.id, org_id: app.org.id, plan: 'gold', risk_score: 0 });

      const verified = await t
        .http()
        .post('/api/v1/tokens/verify')
        .set('Authorization', `Bearer ${verifyKey}`)
        .send({ token })
        .expect(200);
      expect(verified.body).toEqual({ valid: true, claims: decodeJwt(token) });

      const flags = await android(fabricated).get('/api/v1/flags').set('Authorization', `Bearer ${token}`).expect(200);
      expect(flags.body.flags).toMatchObject({ android_checkout: 'express' });

      const [device] = await t.sql<{ platform: string; device_model: string; environment: string; key_id: string }>(
        `SELECT platform, device_model, environment, key_id FROM devices WHERE app_id = $1 AND key_id = $2`,
        [app.id, payload.sub],
      );
      expect(device).toMatchObject({ platform: 'android', device_model: 'Pixel 8', environment: 'production' });

      // Re-attestation of the same installation: a fresh token and challenge, the same device.
      const again = await validate(fabricated, { installationId });
      expect(again.response.status).toBe(200);
      expect(decodeJwt(again.response.body.token as string).sub).toBe(payload.sub);
      const [counted] = await t.sql<{ attestation_count: number }>(
        `SELECT attestation_count FROM devices WHERE app_id = $1 AND key_id = $2`,
        [app.id, payload.sub],
      );
      expect(counted.attestation_count).toBe(2);
    });

    it('spends the challenge: a replayed token or challenge is refused', async () => {
      const { response, challenge, integrityToken, installationId } = await validate(fabricated);
      expect(response.status).toBe(200);
      const replay = await android(fabricated)
        .post('/api/v1/attestation/android/validate')
        .send({ integrityToken, challenge, installationId });
      expect([replay.status, replay.body.code]).toEqual([400, 'challenge_invalid']);
      // A token bound to a spent challenge is no good for a fresh one either.
      const fresh = await challengeOf(fabricated);
      const rebound = await android(fabricated)
        .post('/api/v1/attestation/android/validate')
        .send({ integrityToken, challenge: fresh, installationId });
      expect([rebound.status, rebound.body.code]).toEqual([401, 'request_hash_mismatch']);
    });

    it('names the refused step of each mutated token, as an event and a webhook', async () => {
      const { app: strict, fabricated: strictApp } = await androidApp('professional', { refuseUnlicensed: true });
      const receiver = await receivers.start();
      await strict.owner
        .post('/api/v1/org/webhooks')
        .send({ url: receiver.url, events: ['device.attestation_failed'] })
        .expect(201);
      const other = fabricateAndroidApp(strictApp.packageName);
      const cases: [string, number, Partial<MintOptions> | 'malformed'][] = [
        ['integrity_token_malformed', 400, 'malformed'],
        ['integrity_decrypt_failed', 401, { encryptionKey: new Uint8Array(randomBytes(32)) }],
        [
          'integrity_signature_invalid',
          401,
          { signingKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey },
        ],
        ['integrity_payload_invalid', 400, { signedText: JSON.stringify({ requestDetails: 'none' }) }],
        ['package_mismatch', 401, { requestPackageName: 'com.example.someone.else' }],
        ['request_hash_mismatch', 401, { requestHash: fabricatedRequestHash('another challenge') }],
        ['verdict_stale', 401, { timestampMillis: Date.now() - 10 * 60_000 }],
        ['certificate_mismatch', 401, { certificateSha256Digest: [other.certificateSha256Digest] }],
        ['app_unrecognized', 403, { appRecognitionVerdict: 'UNRECOGNIZED_VERSION' }],
        ['app_unlicensed', 403, { appLicensingVerdict: 'UNLICENSED' }],
        ['device_integrity_failed', 403, { deviceVerdicts: ['MEETS_BASIC_INTEGRITY'] }],
      ];
      expect(cases.map(([code]) => code).sort()).toEqual([...PLAY_INTEGRITY_ERROR_CODES].sort());
      const installationId = installation();
      for (const [code, status, mutation] of cases) {
        const challenge = await challengeOf(strictApp);
        const integrityToken =
          mutation === 'malformed' ? 'not.a.jwe' : await strictApp.mint({ challenge, ...mutation });
        const response = await android(strictApp)
          .post('/api/v1/attestation/android/validate')
          .send({ integrityToken, challenge, installationId });
        expect([code, response.status, response.body?.code]).toEqual([code, status, code]);
        // The challenge of a refused attempt is spent.
        const reuse = await android(strictApp)
          .post('/api/v1/attestation/android/validate')
          .send({ integrityToken: await strictApp.mint({ challenge }), challenge, installationId });
        expect([code, reuse.body?.code]).toEqual([code, 'challenge_invalid']);
      }
      const codes = cases.map(([code]) => code);
      const events = await t.sql<{ error_code: string }>(
        `SELECT error_code FROM device_events WHERE app_id = $1 AND result = 'failure' ORDER BY created_at`,
        [strict.id],
      );
      expect(events.map((row) => row.error_code)).toEqual(codes);
      const webhooks = await t.sql<{ error_code: string }>(
        `SELECT data->>'error_code' AS error_code FROM webhook_events
          WHERE organization_id = $1 AND event_type = 'device.attestation_failed' ORDER BY occurred_at`,
        [strict.org.id],
      );
      expect(webhooks.map((row) => row.error_code)).toEqual(codes);
      const metrics = (await t.http().get('/metrics').expect(200)).text;
      for (const code of codes) {
        expect(metrics).toContain(`attestly_attestation_failures_total{app_id="${strict.id}",code="${code}"} 1`);
      }
    });

    it("applies an app's changed settings to its Android calls at once, the iOS identity beside it", async () => {
      // An app with both identities, whose package name this instance has just resolved.
      const { app: both, fabricated: lenient } = await androidApp('professional', {
        acceptedDeviceVerdicts: ['MEETS_DEVICE_INTEGRITY', 'MEETS_BASIC_INTEGRITY'],
      });
      const before = await validate(lenient, { deviceVerdicts: ['MEETS_BASIC_INTEGRITY'] });
      expect(before.response.status).toBe(200);
      expect(decodeJwt(before.response.body.token as string).aud).toBe(both.bundleId);

      await both.owner
        .put(`/api/v1/apps/${both.id}`)
        .send({ riskThresholds: { blockOnJailbreak: true }, jwtConfiguration: { customAudience: 'api.example.com' } })
        .expect(200);
      const rooted = await validate(lenient, { deviceVerdicts: ['MEETS_BASIC_INTEGRITY'] });
      expect([rooted.response.status, rooted.response.body.code]).toEqual([403, 'jailbreak_detected']);
      const clean = await validate(lenient);
      expect(clean.response.status).toBe(200);
      expect(decodeJwt(clean.response.body.token as string).aud).toBe('api.example.com');

      // Subject binding switched on: an unsigned subject is refused on Android at once too.
      await both.owner.post(`/api/v1/apps/${both.id}/subject-signing-secret`).expect(200);
      await both.owner.put(`/api/v1/apps/${both.id}`).send({ requireSignedSubject: true }).expect(200);
      const unsigned = await validate(lenient, { profile: { subjectId: 'user-1' } });
      expect([unsigned.response.status, unsigned.response.body.code]).toEqual([401, 'subject_signature_invalid']);
    });

    it("feeds the verdict's labels into the risk score under the app's policy", async () => {
      const { fabricated: lenient } = await androidApp('professional', {
        acceptedDeviceVerdicts: ['MEETS_DEVICE_INTEGRITY', 'MEETS_BASIC_INTEGRITY'],
        refuseUnrecognizedVersion: false,
      });
      const basic = await validate(lenient, { deviceVerdicts: ['MEETS_BASIC_INTEGRITY'] });
      expect(basic.response.status).toBe(200);
      expect(decodeJwt(basic.response.body.token as string)).toMatchObject({ risk_score: 40 });
      const unrecognized = await validate(lenient, { appRecognitionVerdict: 'UNRECOGNIZED_VERSION' });
      expect(unrecognized.response.status).toBe(200);
      expect(decodeJwt(unrecognized.response.body.token as string)).toMatchObject({ risk_score: 15 });

      const { app: blocking, fabricated: rootedRefused } = await androidApp('professional', {
        acceptedDeviceVerdicts: ['MEETS_BASIC_INTEGRITY'],
      });
      await blocking.owner
        .put(`/api/v1/apps/${blocking.id}`)
        .send({ riskThresholds: { blockOnJailbreak: true } })
        .expect(200);
      const refused = await validate(rootedRefused, { deviceVerdicts: ['MEETS_BASIC_INTEGRITY'] });
      expect([refused.response.status, refused.response.body.code]).toEqual([403, 'jailbreak_detected']);
    });

    it("reaches nothing of another organization's Android app: its device token, key, integrity token or challenge", async () => {
      const { app: stranger, fabricated: strangerApp } = await androidApp();
      const strangerToken = (await validate(strangerApp)).response.body.token as string;
      const strangerKey = await createApiKey(t, stranger.org, ['flags:read']);
      const ownToken = (await validate(fabricated)).response.body.token as string;
      const flag = { context: { targetingKey: decodeJwt(ownToken).sub } };
      // The stranger's device token and key, with this app's package name: refused before any flag.
      for (const credential of [strangerToken, strangerKey]) {
        const bearer = `Bearer ${credential}`;
        await android(fabricated).get('/api/v1/flags').set('Authorization', bearer).expect(401);
        await android(fabricated).post('/ofrep/v1/evaluate/flags').set('Authorization', bearer).send(flag).expect(401);
        await android(fabricated)
          .post('/ofrep/v1/evaluate/flags/android_checkout')
          .set('Authorization', bearer)
          .send(flag)
          .expect(401);
      }
      // With its own package name, this app's flag is a flag it does not have.
      const missing = await android(strangerApp)
        .post('/ofrep/v1/evaluate/flags/android_checkout')
        .set('Authorization', `Bearer ${strangerKey}`)
        .send(flag);
      expect([missing.status, missing.body.errorCode]).toEqual([404, 'FLAG_NOT_FOUND']);

      // This app's integrity token replayed through the stranger's app: its challenge is this
      // app's (challenge_invalid), and with the stranger's own challenge it does not decrypt.
      const challenge = await challengeOf(fabricated);
      const integrityToken = await fabricated.mint({ challenge });
      const viaStranger = (body: Record<string, unknown>) =>
        android(strangerApp).post('/api/v1/attestation/android/validate').send(body);
      const misdirected = await viaStranger({ integrityToken, challenge, installationId: installation() });
      expect([misdirected.status, misdirected.body.code]).toEqual([400, 'challenge_invalid']);
      const rebound = await viaStranger({
        integrityToken,
        challenge: await challengeOf(strangerApp),
        installationId: installation(),
      });
      expect([rebound.status, rebound.body.code]).toEqual([401, 'integrity_decrypt_failed']);
      // Neither attempt spent this app's challenge.
      const own = await android(fabricated)
        .post('/api/v1/attestation/android/validate')
        .send({ integrityToken, challenge, installationId: installation() });
      expect(own.status).toBe(200);
    });

    it("applies the deny set: a blocked Android device's token is refused, and its installation cannot re-attest", async () => {
      const { response, installationId } = await validate(fabricated);
      const token = response.body.token as string;
      const keyId = decodeJwt(token).sub!;
      await app.owner
        .post(`/api/v1/devices/${encodeURIComponent(keyId)}/block`)
        .send({ reason: 'abuse' })
        .expect(200);
      await android(fabricated).get('/api/v1/flags').set('Authorization', `Bearer ${token}`).expect(401);
      await android(fabricated)
        .post('/ofrep/v1/evaluate/flags')
        .set('Authorization', `Bearer ${token}`)
        .send({ context: {} })
        .expect(401);
      const again = await validate(fabricated, { installationId });
      expect([again.response.status, again.response.body.code]).toEqual([403, 'device_blocked']);
    });

    it('refuses an app without an Android identity before spending the challenge', async () => {
      const ios = await registerApp(t);
      const challenge = (await sdk(t, ios).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
      const response = await sdk(t, ios)
        .post('/api/v1/attestation/android/validate')
        .send({ integrityToken: 'a.b.c.d.e', challenge, installationId: installation() });
      expect([response.status, response.body.code]).toEqual([400, 'android_not_configured']);
    });

    it('refuses malformed requests in the envelope', async () => {
      const challenge = await challengeOf(fabricated);
      for (const body of [
        { challenge, installationId: installation() },
        { integrityToken: 'x'.repeat(20_000), challenge, installationId: installation() },
        { integrityToken: 'a.b.c.d.e', challenge, installationId: 'short' },
        { integrityToken: 'a.b.c.d.e', installationId: installation() },
      ]) {
        const response = await android(fabricated).post('/api/v1/attestation/android/validate').send(body);
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect(response.body.code).toBeDefined();
      }
      const header = await t.http().get('/api/v1/attestation/challenge').set('X-Package-Name', 'x'.repeat(300));
      expect(header.status).toBe(400);
    });
  });

  it('runs the tour with the CLI: attest:android-app keys, attest:android-token tokens', async () => {
    const context = { config: { dataDir: mkdtempSync(join(tmpdir(), 'attestly-android-')) } } as unknown as CliContext;
    const pkg = packageName();
    const appOptions = { package: 'string' } as const;
    const made = await androidAppCommand(context, CliArgs.parse(['--package', pkg], appOptions));
    // Created once: the same keys the second time, so a configured app keeps verifying.
    expect(await androidAppCommand(context, CliArgs.parse(['--package', pkg], appOptions))).toEqual(made);
    const app = await registerApp(t);
    await app.owner.put(`/api/v1/apps/${app.id}/android`).send(made.androidSettings).expect(200);
    const demo = { packageName: pkg };
    const tokenOptions = {
      package: 'string',
      challenge: 'string',
      verdict: 'string',
      'app-verdict': 'string',
      licensing: 'string',
    } as const;
    const mint = async (extra: string[]) => {
      const challenge = (await android(demo).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
      const { integrityToken } = await androidTokenCommand(
        context,
        CliArgs.parse(['--package', pkg, '--challenge', challenge, ...extra], tokenOptions),
      );
      return android(demo)
        .post('/api/v1/attestation/android/validate')
        .send({ integrityToken, challenge, installationId: installation() });
    };
    expect((await mint([])).status).toBe(200);
    const refused = await mint(['--verdict', 'none']);
    expect([refused.status, refused.body.code]).toEqual([403, 'device_integrity_failed']);
    await expect(
      androidTokenCommand(
        context,
        CliArgs.parse(['--package', pkg, '--challenge', 'c', '--verdict', 'ROOTED'], tokenOptions),
      ),
    ).rejects.toThrow('--verdict');
  });

  it('counts an iOS and an Android device of one app as two monthly active devices', async () => {
    const { app, fabricated } = await androidApp();
    // The usage answer is cached for five minutes: read once, after both devices attested.
    await attestDevice(t, app);
    expect((await validate(fabricated)).response.status).toBe(200);
    expect((await app.owner.get('/api/v1/org/usage').expect(200)).body.currentMAD).toBe(2);
    const platforms = await t.sql<{ platform: string }>(
      `SELECT platform FROM devices WHERE app_id = $1 ORDER BY platform`,
      [app.id],
    );
    expect(platforms.map((row) => row.platform)).toEqual(['android', 'ios']);
  });

  describe("the organization's plan limits, as for iOS", () => {
    it("refuses a Free organization's 1,001st device on Android after the grace period, iOS too, while device 1 still re-attests", async () => {
      const { app, fabricated } = await androidApp('free');
      const first = await validate(fabricated);
      expect(first.response.status).toBe(200);
      // 999 more devices were active this month.
      await t.sql(`UPDATE mad_counters SET active_devices = 1000 WHERE organization_id = $1`, [app.org.id]);

      const inGrace = await validate(fabricated);
      expect(inGrace.response.status).toBe(200);
      const counter = await madCounter(t, app.org.id);
      expect(counter.active_devices).toBe(1001);
      expect(counter.over_limit_since).not.toBeNull();

      await endMadGrace(t, app.org.id);
      const refused = await validate(fabricated);
      expect(refused.response.status).toBe(402);
      expect(refused.response.body).toEqual(freePlanQuotaRefusal(refused.response.headers['x-request-id']));
      // The refused installation is no device and its challenge is spent; the failure is recorded.
      const devices = await t.sql<{ key_id: string }>(`SELECT key_id FROM devices WHERE app_id = $1`, [app.id]);
      expect(devices).toHaveLength(2);
      const replay = await android(fabricated).post('/api/v1/attestation/android/validate').send({
        integrityToken: refused.integrityToken,
        challenge: refused.challenge,
        installationId: refused.installationId,
      });
      expect([replay.status, replay.body.code]).toEqual([400, 'challenge_invalid']);
      const failures = await t.sql<{ error_code: string }>(
        `SELECT error_code FROM device_events WHERE app_id = $1 AND result = 'failure'`,
        [app.id],
      );
      expect(failures.map((row) => row.error_code)).toEqual(['quota_exceeded']);

      // One quota for both platforms: a new iOS device of the organization is refused alike.
      const ios = await attestAttempt(t, app);
      expect([ios.response.status, ios.response.body.code, ios.response.body.current]).toEqual([
        402,
        'quota_exceeded',
        1001,
      ]);
      const [after] = await t.sql<{ active_devices: number }>(
        `SELECT active_devices FROM mad_counters WHERE organization_id = $1`,
        [app.org.id],
      );
      expect(after.active_devices).toBe(1001);

      // A device counted this month re-attests (Android's refresh) and keeps its token coming.
      const again = await validate(fabricated, { installationId: first.installationId });
      expect(again.response.status).toBe(200);
      expect(decodeJwt(again.response.body.token as string).sub).toBe(
        decodeJwt(first.response.body.token as string).sub,
      );
    });

    it("spends and enforces the organization's attest rate on Android validates with iOS ones: 429 with Retry-After", async () => {
      const { app, fabricated } = await androidApp('free');
      // Free: 30 validates a minute for the organization; all but one spent by earlier requests.
      await spendRateLimit(t, 'attest', app.org.id, 1, 'free');
      const last = await validate(fabricated);
      expect(last.response.status).toBe(200);
      expect(last.response.headers['x-ratelimit-limit']).toBe('30');
      expect(last.response.headers['x-ratelimit-remaining']).toBe('0');
      // The Android validate spent the last one: iOS and Android are refused, each from an address of its own.
      expectRateLimited((await attestAttempt(t, app)).response);
      const refused = await validate(fabricated);
      expectRateLimited(refused.response);
      expect(refused.response.headers['x-ratelimit-limit']).toBe('30');
      // The refusal spent no challenge: the same request, sent again once the window moved on, is served.
      const limiter = t.app.get(RateLimitService);
      const later = Date.now() + 61_000;
      limiter.clock = () => later;
      try {
        const retried = await android(fabricated).post('/api/v1/attestation/android/validate').send({
          integrityToken: refused.integrityToken,
          challenge: refused.challenge,
          installationId: refused.installationId,
        });
        expect(retried.status).toBe(200);
      } finally {
        limiter.clock = Date.now;
      }
      // Another organization's Android app is not counted against it.
      const other = await androidApp('free');
      expect((await validate(other.fabricated)).response.status).toBe(200);
    });

    it('spends and enforces the per-address validate limit on Android validates with iOS ones: 429 with Retry-After', async () => {
      const { app, fabricated } = await androidApp();
      const ip = randomClientIp();
      // 60 validates a minute from one client address; all but one spent by earlier requests.
      await spendRateLimit(t, 'ip-validate', ip, 1);
      expect((await validate(fabricated, { ip })).response.status).toBe(200);
      // The Android validate spent the last one: an iOS validate from the address is refused before
      // its body is read, and so is the next Android one.
      expectRateLimited(await sdk(t, app).post('/api/v1/attestation/validate').set('X-Forwarded-For', ip).send({}));
      expectRateLimited((await validate(fabricated, { ip })).response);
      // The organization's budget is far from spent: another address is served.
      expect((await validate(fabricated)).response.status).toBe(200);
    });
  });
});
