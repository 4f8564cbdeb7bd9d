import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import * as x509 from '@peculiar/x509';
import type { Response } from 'express';
import { testConfig } from '../../test/fakes/config.js';
import {
  FakeDatabasePing,
  FakeFlagStoreProbe,
  FakeTokenSigning,
  fakeHealth,
  type FakeTenantLookup,
} from '../../test/fakes/health.js';
import type { AppConfig } from '../config/app-config.js';
import type { HealthController } from './health.controller.js';
import { PROBE_TIMEOUT_MS } from './health.service.js';

/** The readiness answer as a probe sees it: the status code and the body. */
async function readiness(controller: HealthController) {
  const response = { statusCode: 200, status: (code: number) => void (response.statusCode = code) };
  const body = await controller.status(response as unknown as Response);
  return { code: response.statusCode, body };
}

/** A self-signed certificate without the CA flag: decodes, but anchors nothing. */
async function leafCertificatePem(): Promise<string> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(algorithm, false, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=Not a CA',
    notBefore: new Date('2020-01-01T00:00:00Z'),
    notAfter: new Date('2049-12-31T00:00:00Z'),
    keys,
    signingAlgorithm: algorithm,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  return certificate.toString('pem');
}

describe('health routes (liveness, summary and readiness, on fakes of every probed component)', () => {
  let health: ReturnType<typeof fakeHealth>;
  let dir: string;
  let notACa: AppConfig;
  let undecodable: AppConfig;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'attestly-health-'));
    writeFileSync(join(dir, 'leaf.pem'), await leafCertificatePem());
    writeFileSync(
      join(dir, 'garbage.pem'),
      '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
    );
    notACa = { ...testConfig, appAttestRootCaPath: join(dir, 'leaf.pem') };
    undecodable = { ...testConfig, appAttestRootCaPath: join(dir, 'garbage.pem') };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeEach(() => {
    health = fakeHealth({ ...testConfig, serviceCommit: 'commit-abc' });
  });

  describe('readiness (/api/v1/health/status)', () => {
    it('answers 200 healthy with the four components and the commit when every probe passes, leaving Redis out when REDIS_URL is unset', async () => {
      const { code, body } = await readiness(health.controller);
      expect(code).toBe(200);
      expect(body).toEqual({
        status: 'healthy',
        timestamp: expect.any(String),
        version: 'commit-abc',
        components: {
          database: { status: 'healthy', latencyMs: expect.any(Number) },
          attestation: { status: 'healthy' },
          featureFlags: { status: 'healthy', latencyMs: expect.any(Number) },
          jwtSigning: { status: 'healthy', latencyMs: expect.any(Number) },
        },
      });
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
      expect(health.redis.checks).toBe(0);
    });

    it('answers 503 degraded naming the database, with latency -1, when the database does not answer', async () => {
      health.database.outcome = 'fails';
      const { code, body } = await readiness(health.controller);
      expect(code).toBe(503);
      expect(body.status).toBe('degraded');
      expect(body.components.database).toEqual({ status: 'unhealthy', latencyMs: -1, error: 'database unreachable' });
      expect(body.components.jwtSigning.status).toBe('healthy');
      expect(body.components.featureFlags.status).toBe('healthy');
    });

    it('answers 503 naming Redis when REDIS_URL is set and Redis does not answer, though the database does', async () => {
      health.redis.configure({ status: 'unhealthy', latencyMs: -1, error: 'redis unreachable' });
      const { code, body } = await readiness(health.controller);
      expect(code).toBe(503);
      expect(body.status).toBe('degraded');
      expect(body.components.redis).toEqual({ status: 'unhealthy', latencyMs: -1, error: 'redis unreachable' });
      expect(body.components.database.status).toBe('healthy');
    });

    it('counts a configured Redis that answers as a fifth healthy component', async () => {
      health.redis.configure({ status: 'healthy', latencyMs: 0.4 });
      const { code, body } = await readiness(health.controller);
      expect(code).toBe(200);
      expect(Object.keys(body.components).sort()).toEqual([
        'attestation',
        'database',
        'featureFlags',
        'jwtSigning',
        'redis',
      ]);
      expect(body.components.redis).toEqual({ status: 'healthy', latencyMs: 0.4 });
    });

    it('answers 503 naming token signing when the sign-and-verify cycle fails', async () => {
      health.signing.outcome = 'fails';
      const { code, body } = await readiness(health.controller);
      expect(code).toBe(503);
      expect(body.status).toBe('degraded');
      expect(body.components.jwtSigning).toEqual({ status: 'unhealthy', error: 'sign and verify cycle failed' });
      expect(body.components.database.status).toBe('healthy');
    });

    it('answers 503 naming the flag store when its table cannot be read', async () => {
      health.flags.outcome = 'fails';
      const { code, body } = await readiness(health.controller);
      expect(code).toBe(503);
      expect(body.components.featureFlags).toEqual({ status: 'unhealthy', error: 'flag store not queryable' });
    });

    it('answers 503 naming the attestation root when APP_ATTEST_ROOT_CA does not decode, or is not a CA', async () => {
      const garbage = await readiness(fakeHealth(undecodable).controller);
      expect(garbage.code).toBe(503);
      expect(garbage.body.components.attestation).toEqual({
        status: 'unhealthy',
        error: 'root certificate does not decode',
      });
      const leaf = await readiness(fakeHealth(notACa).controller);
      expect(leaf.code).toBe(503);
      expect(leaf.body.components.attestation).toEqual({ status: 'unhealthy', error: 'root certificate is not a CA' });
    });

    it("says what failed in fixed words, never the driver's message, a connection string or key material", async () => {
      health.database.outcome = 'fails';
      health.signing.outcome = 'fails';
      health.flags.outcome = 'fails';
      const { code, body } = await readiness(health.controller);
      expect(code).toBe(503);
      const text = JSON.stringify(body);
      for (const leaked of [FakeDatabasePing.FAILURE, FakeTokenSigning.FAILURE, FakeFlagStoreProbe.FAILURE]) {
        expect(text).not.toContain(leaked);
      }
      for (const fragment of ['db-pass-7', 'postgres://', 'ECONNREFUSED', 'PRIVATE KEY', 'feature_flags']) {
        expect(text).not.toContain(fragment);
      }
      expect(Object.values(body.components).map((component) => component.error)).toEqual([
        'database unreachable',
        undefined,
        'flag store not queryable',
        'sign and verify cycle failed',
      ]);
    });
  });

  describe('readiness when a probe never answers', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    it.each(['database', 'flags', 'signing'] as const)(
      'answers 503 within the probe limit when the %s probe hangs, naming it as not answering in time',
      async (component) => {
        jest.useFakeTimers();
        health[component].outcome = 'hangs';
        const answer = readiness(health.controller);
        await jest.advanceTimersByTimeAsync(PROBE_TIMEOUT_MS);
        const { code, body } = await answer;
        expect(PROBE_TIMEOUT_MS).toBeLessThan(3_000); // the Deployment's probe timeout
        expect(code).toBe(503);
        const unhealthy = Object.values(body.components).filter((report) => report.status === 'unhealthy');
        expect(unhealthy).toEqual([
          expect.objectContaining({ error: expect.stringMatching(/did not answer within 2 s$/) }),
        ]);
      },
    );
  });

  describe('liveness (/health)', () => {
    it('answers healthy with the commit without probing anything, even while the database hangs', () => {
      health.database.outcome = 'hangs';
      health.signing.outcome = 'fails';
      expect(health.controller.live()).toEqual({
        status: 'healthy',
        timestamp: expect.any(String),
        commit: 'commit-abc',
      });
      expect(health.database.calls + health.signing.calls + health.flags.calls).toBe(0);
    });
  });

  describe('summary (/api/v1/health)', () => {
    let tenants: FakeTenantLookup;
    beforeEach(() => {
      tenants = health.tenants;
    });

    it('reports the database round trip as ok, and degraded with latency -1 when the database does not answer', async () => {
      expect(await health.controller.summary()).toEqual({
        status: 'ok',
        version: 'v1',
        services: { api: { status: 'ok', latencyMs: 0 }, db: { status: 'ok', latencyMs: expect.any(Number) } },
        timestamp: expect.any(String),
        commit: 'commit-abc',
      });
      health.database.outcome = 'fails';
      const degraded = await health.controller.summary();
      expect(degraded.status).toBe('degraded');
      expect(degraded.services).toEqual({
        api: { status: 'ok', latencyMs: 0 },
        db: { status: 'degraded', latencyMs: -1 },
      });
    });

    it('tells an SDK whether its Bundle ID and Team ID name a registered app and whether attestation is on, and nothing more', async () => {
      tenants.add('com.acme.app', 'TEAM123456');
      tenants.add('com.acme.off', 'TEAM123456', { organizationActive: false });
      const found = await health.controller.summary('com.acme.app', 'TEAM123456');
      expect(found.tenant).toEqual({ found: true, appRegistered: true, attestationEnabled: true });
      expect(JSON.stringify(found)).not.toMatch(/subject-signing-secret|org-acme|app-1/);
      const suspended = await health.controller.summary('com.acme.off', 'TEAM123456');
      expect(suspended.tenant).toEqual({ found: true, appRegistered: true, attestationEnabled: false });
      const missing = await health.controller.summary('com.acme.app', 'OTHERTEAM1');
      expect(missing.tenant).toEqual({
        found: false,
        appRegistered: false,
        attestationEnabled: null,
        hint: expect.stringContaining('Bundle ID and Team ID'),
      });
    });

    it('reports attestation off for an inactive app in an active organization', async () => {
      tenants.add('com.acme.paused', 'TEAM123456', { appActive: false });
      const paused = await health.controller.summary('com.acme.paused', 'TEAM123456');
      expect(paused.tenant).toEqual({ found: true, appRegistered: true, attestationEnabled: false });
    });

    it('adds no tenant block for one identity header alone, nor while the database is down', async () => {
      tenants.add('com.acme.app', 'TEAM123456');
      expect((await health.controller.summary('com.acme.app')).tenant).toBeUndefined();
      expect((await health.controller.summary(undefined, 'TEAM123456')).tenant).toBeUndefined();
      health.database.outcome = 'fails';
      expect((await health.controller.summary('com.acme.app', 'TEAM123456')).tenant).toBeUndefined();
    });
  });
});
