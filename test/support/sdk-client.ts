import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@jest/globals';
import { orgWithMember, randomClientIp, type TestOrg } from '../factories/identity.js';
import type { HttpClient, TestApp } from '../harness/test-app.js';
import { appAttestAuthority, type FabricatedDevice } from './app-attest-fabricator.js';

export const TEAM_ID = 'ABCDE12345';

/** Environment for startTestApp: trust the fabricated App Attest root instead of Apple's. */
export async function fabricatedRootEnv(): Promise<Record<string, string>> {
  const authority = await appAttestAuthority();
  const path = join(mkdtempSync(join(tmpdir(), 'attestly-root-')), 'root.pem');
  writeFileSync(path, authority.rootPem);
  return { APP_ATTEST_ROOT_CA: path };
}

export interface RegisteredApp {
  id: string;
  bundleId: string;
  org: TestOrg;
  /** The organization owner's signed-in browser. */
  owner: HttpClient;
}

let sequence = 0;

/** A new organization of `tier` with an app registered through the API. */
export async function registerApp(
  t: TestApp,
  tier = 'professional',
  app: Record<string, unknown> = {},
): Promise<RegisteredApp> {
  const { org, agent } = await orgWithMember(t, { tier });
  const bundleId = `com.example.sdk${process.pid}x${++sequence}`;
  const created = await agent
    .post('/api/v1/apps')
    .send({ appName: `App ${sequence}`, bundleId, teamId: TEAM_ID, ...app });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, bundleId, org, owner: agent };
}

/** Requests as the app's SDK sends them: with its identity headers. */
/**
 * SDK calls for an app: its identity headers, and each call from a device address of its own (SDK
 * traffic comes from many devices; a test about one client's budget sets X-Forwarded-For itself).
 */
export function sdk(t: Pick<TestApp, 'http'>, app: { bundleId: string }) {
  const withIdentity = <T extends { set(name: string, value: string): T }>(request: T) =>
    request.set('X-Bundle-ID', app.bundleId).set('X-Team-ID', TEAM_ID).set('X-Forwarded-For', randomClientIp());
  return {
    get: (path: string) => withIdentity(t.http().get(path)),
    post: (path: string) => withIdentity(t.http().post(path)),
    delete: (path: string) => withIdentity(t.http().delete(path)),
  };
}

/** A fresh fabricated device's App Attest validate, answered however the service answers it. */
export async function attestAttempt(t: TestApp, app: { bundleId: string }, profile: Record<string, unknown> = {}) {
  const device = (await appAttestAuthority()).createDevice();
  const challenge = (await sdk(t, app).get('/api/v1/attestation/challenge').expect(200)).body.challenge as string;
  const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId: app.bundleId });
  const response = await sdk(t, app)
    .post('/api/v1/attestation/validate')
    .send({ keyId: device.keyId, attestationObject, challenge, ...profile });
  return { device, response };
}

/** Attests a fresh fabricated device and returns it with its token. */
export async function attestDevice(
  t: TestApp,
  app: { bundleId: string },
  profile: Record<string, unknown> = {},
): Promise<{ device: FabricatedDevice; token: string }> {
  const { device, response } = await attestAttempt(t, app, profile);
  expect(response.status).toBe(200);
  return { device, token: response.body.token as string };
}
