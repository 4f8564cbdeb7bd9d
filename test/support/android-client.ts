import { randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import { randomClientIp } from '../factories/identity.js';
import type { TestApp } from '../harness/test-app.js';
import { fabricateAndroidApp, type FabricatedAndroidApp, type MintOptions } from './play-integrity-fabricator.js';
import { registerApp, type RegisteredApp } from './sdk-client.js';

let sequence = 0;

/** A package name no other test of this process uses. */
export const androidPackageName = () => `com.example.android${process.pid}x${++sequence}`;

/**
 * SDK calls of an Android build: X-Package-Name instead of X-Bundle-ID and X-Team-ID, each from a
 * device address of its own unless `ip` names one (a test about one client's budget).
 */
export function androidSdk(t: Pick<TestApp, 'http'>, fabricated: { packageName: string }, ip?: string) {
  const withIdentity = <T extends { set(name: string, value: string): T }>(request: T) =>
    request.set('X-Package-Name', fabricated.packageName).set('X-Forwarded-For', ip ?? randomClientIp());
  return {
    get: (path: string) => withIdentity(t.http().get(path)),
    post: (path: string) => withIdentity(t.http().post(path)),
  };
}

/** The body of PUT /api/v1/apps/{id}/android for a fabricated app. */
export function androidSettings(fabricated: FabricatedAndroidApp, policy: Record<string, unknown> = {}) {
  return {
    packageName: fabricated.packageName,
    certificateSha256Digests: [fabricated.certificateSha256Digest],
    decryptionKey: fabricated.decryptionKeyBase64,
    verificationKey: fabricated.verificationKeyBase64,
    policy,
  };
}

/** Gives a registered (iOS) app an Android identity of a new fabricated app, through the API. */
export async function addAndroidIdentity(
  app: RegisteredApp,
  policy: Record<string, unknown> = {},
): Promise<FabricatedAndroidApp> {
  const fabricated = fabricateAndroidApp(androidPackageName());
  const response = await app.owner.put(`/api/v1/apps/${app.id}/android`).send(androidSettings(fabricated, policy));
  expect(response.status).toBe(200);
  return fabricated;
}

/** A new organization of `tier` with an app that has both identities. */
export async function registerAndroidApp(
  t: TestApp,
  tier = 'professional',
  policy: Record<string, unknown> = {},
): Promise<{ app: RegisteredApp; fabricated: FabricatedAndroidApp }> {
  const app = await registerApp(t, tier);
  return { app, fabricated: await addAndroidIdentity(app, policy) };
}

export async function androidChallenge(t: Pick<TestApp, 'http'>, fabricated: { packageName: string }) {
  const response = await androidSdk(t, fabricated).get('/api/v1/attestation/challenge');
  expect(response.status).toBe(200);
  return response.body.challenge as string;
}

/** A new installation id, as the Android SDK generates on first launch. */
export const androidInstallation = () => randomBytes(16).toString('hex');

export interface AndroidValidateOptions extends Partial<MintOptions> {
  installationId?: string;
  /** Fields of the request beside the token (device profile, subject). */
  profile?: Record<string, unknown>;
  /** The client address of the validate call (the challenge comes from another). */
  ip?: string;
}

/** A challenge, a fabricated integrity token bound to it, and POST /api/v1/attestation/android/validate. */
export async function validateAndroid(
  t: Pick<TestApp, 'http'>,
  fabricated: FabricatedAndroidApp,
  options: AndroidValidateOptions = {},
) {
  const challenge = await androidChallenge(t, fabricated);
  const { installationId = androidInstallation(), profile = {}, ip, ...mint } = options;
  const integrityToken = await fabricated.mint({ challenge, ...mint });
  const response = await androidSdk(t, fabricated, ip)
    .post('/api/v1/attestation/android/validate')
    .send({ integrityToken, challenge, installationId, ...profile });
  return { response, challenge, integrityToken, installationId };
}
