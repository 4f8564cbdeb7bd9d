import { describe, expect, it } from '@jest/globals';
import { DEFAULT_RISK_THRESHOLDS, type RiskThresholds } from '../apps/app.entity.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { fakeTenant } from '../../test/fakes/tenant.js';
import type { DomainEvents } from '../common/domain-events/domain-events.js';
import type { AppException } from '../common/errors/app-exception.js';
import type { ComplianceService } from '../compliance/compliance.service.js';
import type { AppConfig } from '../config/app-config.js';
import type { UnitOfWork } from '../database/unit-of-work.js';
import type { TokenService, TokenSubject } from '../device-tokens/token.service.js';
import type { DeviceRow, DevicesRepository } from '../devices/devices.repository.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RiskAlertsService } from '../risk-alerts/risk-alerts.service.js';
import type { MadService } from '../usage/mad.service.js';
import { refusalCode } from '../../test/fakes/refusal.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { challengeExpired, deviceBlocked } from './attestation.exceptions.js';
import { AttestationService, type VerifiedDevice } from './attestation.service.js';
import type { ChallengeService } from './challenge.service.js';

const ROOT_CA = 'src/attestation/app-attest/apple-app-attestation-root-ca.pem';

function tenantOf(overrides: Partial<Tenant> = {}, thresholds: Partial<RiskThresholds> = {}): Tenant {
  return fakeTenant('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-000000000001', {
    bundleId: null,
    teamId: null,
    packageName: 'com.example.notes',
    riskThresholds: { ...DEFAULT_RISK_THRESHOLDS, ...thresholds },
    ...overrides,
  });
}

function deviceRow(overrides: Partial<DeviceRow> = {}): DeviceRow {
  return {
    id: 'device-1',
    inserted: true,
    public_key_pem: '',
    sign_counter: '0',
    environment: 'production',
    client_device_id: 'client-1',
    subject_id: null,
    subject_verified: false,
    device_model: 'Pixel 9',
    os_version: '15',
    app_version: '2.1',
    country: null,
    jailbreak_detected: false,
    attestation_count: 1,
    failure_count: 0,
    counter_anomalies: 0,
    velocity_count: 1,
    is_blocked: false,
    first_seen_at: new Date(),
    mad_counted: false,
    ...overrides,
  };
}

/** The gate over fakes: what it spent, stored, counted, emitted and minted, in order. */
function gate(device: Partial<DeviceRow> = {}, oneStatement?: 'applies' | 'declines' | 'at the limit') {
  const steps: string[] = [];
  const emitted: string[] = [];
  const minted: TokenSubject[] = [];
  const failures: { deviceId: string | null; errorCode: string }[] = [];
  let challengeRefusal: AppException | null = null;
  const service = new AttestationService(
    new FakeUnitOfWork() as unknown as UnitOfWork,
    { appAttestRootCaPath: ROOT_CA } as AppConfig,
    {
      consume: () => {
        steps.push('challenge spent');
        return challengeRefusal ? Promise.reject(challengeRefusal) : Promise.resolve();
      },
    } as unknown as ChallengeService,
    {
      mint: (subject: TokenSubject) => {
        minted.push(subject);
        return Promise.resolve({ token: 'token', tokenType: 'Bearer', expiresAt: 0, riskScore: subject.riskScore });
      },
    } as unknown as TokenService,
    {
      count: () => Promise.resolve(void steps.push('counted active')),
      newDeviceCount: () => ({ billing: '2026-11-01', calendar: null, limit: 1000 }),
      countedNewDevice: (_tenant: unknown, _count: unknown, current: number) =>
        void steps.push(`alerts told of ${current}`),
    } as unknown as MadService,
    {
      upsertAttested: (
        _org: string,
        _app: string,
        key: { platform?: string; report: { jailbreakDetected?: boolean } },
      ) => {
        steps.push(`device stored (${key.platform ?? 'ios'})`);
        return Promise.resolve(deviceRow({ jailbreak_detected: key.report.jailbreakDetected === true, ...device }));
      },
      recordSuccess: () => Promise.resolve(void steps.push('success recorded')),
      insertAdmitted: (_org: string, _app: string, key: { platform?: string }, admitted: { riskScore: number }) => {
        steps.push(`one statement tried (${key.platform ?? 'ios'}, score ${admitted.riskScore})`);
        if (oneStatement === 'at the limit')
          return Promise.reject(Object.assign(new Error('limit'), { code: 'AT402' }));
        return Promise.resolve(oneStatement === 'applies' ? { ...deviceRow(device), active_devices: 7 } : null);
      },
      // A device the service already knew stays stored past a refusal; a new one is rolled back.
      findByKey: () => Promise.resolve(device.inserted === false ? { id: 'device-1' } : null),
      countFailure: (_org: string, deviceId: string) =>
        Promise.resolve(void steps.push(`failure counted on ${deviceId}`)),
      recordFailure: (_org: string, failure: { deviceId: string | null; errorCode: string }) => {
        failures.push({ deviceId: failure.deviceId, errorCode: failure.errorCode });
        return Promise.resolve({ stored: null, recentFailures: 1, keyInOtherApps: false });
      },
    } as unknown as DevicesRepository,
    {
      emit: (events: { type: string }[]) => Promise.resolve(void emitted.push(...events.map((e) => e.type))),
      // Without `oneStatement`, a subscriber of new devices writes more than webhooks: the transaction.
      webhooksOnPublishing: () => (oneStatement ? ['device.new'] : null),
    } as unknown as DomainEvents,
    { onDeviceEvent: () => undefined } as unknown as RiskAlertsService,
    { attestationFailure: () => undefined } as unknown as Metrics,
    { settingsInForce: () => Promise.resolve({ maxRiskScore: 70 }) } as unknown as ComplianceService,
  );
  return {
    service,
    steps,
    emitted,
    minted,
    failures,
    refuseChallenge: (error: AppException) => (challengeRefusal = error),
  };
}

const android: VerifiedDevice = { platform: 'android', environment: 'production', rooted: false };
const input = (report: Record<string, unknown> = {}) => ({ keyId: 'key-1', challenge: 'challenge-1', report });

describe('AttestationService: the gate every platform passes', () => {
  it('spends the challenge before anything is verified, then stores, counts, announces and mints', async () => {
    const { service, steps, emitted, minted } = gate();
    const verified = await service.validateVerified(tenantOf(), input(), () => {
      steps.push('verified');
      return Promise.resolve(android);
    });
    expect(verified.token).toBe('token');
    expect(steps).toEqual([
      'challenge spent',
      'verified',
      'device stored (android)',
      'counted active',
      'success recorded',
    ]);
    expect(emitted).toEqual(['DeviceRegistered']);
    expect(minted).toEqual([expect.objectContaining({ keyId: 'key-1', riskScore: 0, deviceModel: 'Pixel 9' })]);
  });

  it('stores, counts and records a usual new key in one statement, then mints; otherwise the transaction decides', async () => {
    const verify = () => Promise.resolve(android);
    const clean = gate({}, 'applies');
    expect((await clean.service.validateVerified(tenantOf(), input(), verify)).token).toBe('token');
    expect(clean.steps).toEqual(['challenge spent', 'one statement tried (android, score 0)', 'alerts told of 7']);
    expect(clean.emitted).toEqual([]);
    expect(clean.minted).toEqual([expect.objectContaining({ keyId: 'key-1', riskScore: 0 })]);
    // The key was known, or someone listens, or the score is over the high-risk threshold: nothing written.
    const declined = gate({}, 'declines');
    await declined.service.validateVerified(tenantOf(), input(), verify);
    expect(declined.steps).toEqual([
      'challenge spent',
      'one statement tried (android, score 0)',
      'device stored (android)',
      'counted active',
      'success recorded',
    ]);
    expect(declined.emitted).toEqual(['DeviceRegistered']);
    // The count would pass the plan's limit: the statement undid itself, the quota decides.
    const limited = gate({}, 'at the limit');
    await limited.service.validateVerified(tenantOf(), input(), verify);
    expect(limited.steps.slice(1, 4)).toEqual([
      'one statement tried (android, score 0)',
      'device stored (android)',
      'counted active',
    ]);
    // A device the admission rule refuses is not tried in one statement: the transaction refuses and records it.
    const strict = gate({}, 'applies');
    const rooted = strict.service.validateVerified(tenantOf({}, { blockOnJailbreak: true }), input(), () =>
      Promise.resolve({ ...android, rooted: true }),
    );
    expect(await refusalCode(rooted)).toBe('jailbreak_detected');
    expect(strict.steps).toEqual(['challenge spent', 'device stored (android)']);
    expect(strict.failures).toEqual([{ deviceId: null, errorCode: 'jailbreak_detected' }]);
  });

  it('records a refused verification as a failure against no stored device, the challenge already spent', async () => {
    const { service, steps, emitted, minted, failures } = gate();
    const refused = service.validateVerified(tenantOf(), input(), () => Promise.reject(deviceBlocked()));
    expect(await refusalCode(refused)).toBe('device_blocked');
    expect(steps).toEqual(['challenge spent']);
    expect(failures).toEqual([{ deviceId: null, errorCode: 'device_blocked' }]);
    expect(emitted).toEqual(['AttestationFailed']);
    expect(minted).toEqual([]);
  });

  it('answers an unusable challenge without verifying or recording anything: it says nothing about the device', async () => {
    const { service, steps, failures, refuseChallenge } = gate();
    refuseChallenge(challengeExpired());
    const verify = () => Promise.reject(new Error('must not run'));
    expect(await refusalCode(service.validateVerified(tenantOf(), input(), verify))).toBe('challenge_expired');
    expect(steps).toEqual(['challenge spent']);
    expect(failures).toEqual([]);
  });

  it('refuses a blocked device once verified, counting the failure against it when it was known', async () => {
    const known = gate({ is_blocked: true, inserted: false });
    expect(await refusalCode(known.service.validateVerified(tenantOf(), input(), () => Promise.resolve(android)))).toBe(
      'device_blocked',
    );
    expect(known.steps).toEqual(['challenge spent', 'device stored (android)', 'failure counted on device-1']);
    expect(known.failures).toEqual([{ deviceId: 'device-1', errorCode: 'device_blocked' }]);
    expect(known.emitted).toEqual(['AttestationFailed']);
    expect(known.minted).toEqual([]);
  });

  it("records a rooted verdict as a jailbreak, refused where the app's thresholds say so", async () => {
    const rooted: VerifiedDevice = { ...android, rooted: true };
    const { service, minted } = gate();
    await service.validateVerified(tenantOf(), input(), () => Promise.resolve(rooted));
    expect(minted[0]).toMatchObject({ jailbreakDetected: true });
    expect(minted[0].riskScore).toBeGreaterThan(0);
    const strict = gate();
    const refused = strict.service.validateVerified(tenantOf({}, { blockOnJailbreak: true }), input(), () =>
      Promise.resolve(rooted),
    );
    expect(await refusalCode(refused)).toBe('jailbreak_detected');
    expect(strict.minted).toEqual([]);
  });

  it('checks the subject before the gate: a signature without its subject leaves the challenge unspent', async () => {
    const { service, steps } = gate();
    const unsigned = service.validateVerified(tenantOf(), input({ subjectSignature: 'c2ln' }), () =>
      Promise.resolve(android),
    );
    expect(await refusalCode(unsigned)).toBe('bad_request');
    const required = service.validateVerified(
      tenantOf({ requireSignedSubject: true, subjectSigningSecret: 's'.repeat(32) }),
      input({ subjectId: 'user-1' }),
      () => Promise.resolve(android),
    );
    expect(await refusalCode(required)).toBe('subject_signature_invalid');
    expect(steps).toEqual([]);
  });

  it('refuses App Attest for an app without an iOS identity before the challenge is spent', async () => {
    const { service, steps } = gate();
    const validate = service.validate(tenantOf(), {
      keyId: 'key-1',
      attestationObject: 'AA==',
      challenge: 'challenge-1',
    });
    expect(await refusalCode(validate)).toBe('ios_not_configured');
    expect(steps).toEqual([]);
  });
});
