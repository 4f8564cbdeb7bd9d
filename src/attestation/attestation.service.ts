import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppException, badRequest } from '../common/errors/app-exception.js';
import { queryRows } from '../database/sql.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { scoreRisk } from '../devices/risk-score.js';
import { MadService } from '../usage/mad.service.js';
import { Metrics } from '../metrics/metrics.js';
import { RiskAlertsService } from '../risk-alerts/risk-alerts.service.js';
import { WebhookEvents, type DeviceFacts } from '../webhooks/webhook-events.js';
import {
  challengeClientDataHashes,
  createTrustStore,
  verifyAssertion,
  verifyAttestation,
  type AppAttestErrorCode,
  type TrustStore,
} from './app-attest/app-attest.js';
import type { RefreshAttestationDto, ValidateAttestationDto } from './attestation.dto.js';
import { ChallengeService } from './challenge.service.js';
import { checkSubjectSignature } from './subject-signature.js';
import { TokenService, type MintedToken, type TokenSubject } from './token.service.js';

interface DeviceRow {
  id: string;
  inserted: boolean;
  public_key_pem: string;
  sign_counter: string;
  environment: 'development' | 'production';
  client_device_id: string;
  subject_id: string | null;
  subject_verified: boolean;
  device_model: string | null;
  os_version: string | null;
  app_version: string | null;
  country: string | null;
  jailbreak_detected: boolean;
  attestation_count: number;
  failure_count: number;
  counter_anomalies: number;
  velocity_count: number;
  is_blocked: boolean;
  first_seen_at: Date;
}

/** A device's risk signals after a failure was counted. */
interface FailedDeviceRow {
  client_device_id: string;
  environment: 'development' | 'production';
  jailbreak_detected: boolean;
  failure_count: number;
  counter_anomalies: number;
  is_blocked: boolean;
  device_model: string | null;
  os_version: string | null;
  attestations_this_hour: number;
}

/** What the admission transaction learnt before a refusal rolled it back. */
interface AttemptFacts {
  scored: DeviceFacts | null;
  isNewDevice: boolean;
}

const CHALLENGE_REFUSALS: ReadonlySet<string> = new Set(['challenge_invalid', 'challenge_expired']);

/** Malformed input rather than a failed check: 400 instead of 401. */
const MALFORMED: ReadonlySet<AppAttestErrorCode> = new Set(['invalid_cbor', 'invalid_format', 'invalid_assertion']);

const DEVICE_COLUMNS = `id, public_key_pem, sign_counter, environment, client_device_id, subject_id, subject_verified, device_model,
  os_version, app_version, country, jailbreak_detected, attestation_count, failure_count, counter_anomalies,
  velocity_count, is_blocked, first_seen_at`;

/**
 * Validate (a new App Attest key) and refresh (an assertion by a known key): verification, the
 * device record and its events, risk, the app's thresholds, the MAD quota, then a signed token.
 * Every failure is recorded as a device event naming the failed step.
 */
@Injectable()
export class AttestationService {
  private readonly trustStore: TrustStore;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly challenges: ChallengeService,
    private readonly tokens: TokenService,
    private readonly mad: MadService,
    private readonly webhooks: WebhookEvents,
    private readonly riskAlerts: RiskAlertsService,
    private readonly metrics: Metrics,
  ) {
    this.trustStore = createTrustStore(readFileSync(config.appAttestRootCaPath, 'utf8'));
  }

  /**
   * The challenge is used up in its own commit by every attempt that reaches verification,
   * whatever the outcome, before the admission transaction.
   */
  async validate(tenant: Tenant, input: ValidateAttestationDto): Promise<MintedToken> {
    const subjectVerified = this.checkSubject(tenant, input);
    const result = verifyAttestation({
      attestationObject: Buffer.from(input.attestationObject, 'base64'),
      keyId: input.keyId,
      clientDataHashes: challengeClientDataHashes(input.challenge),
      teamId: tenant.teamId,
      bundleId: tenant.bundleId,
      trustAnchors: this.trustStore,
      now: new Date(),
    });
    if (!result.ok) {
      await this.challenges.consume(tenant.appId, input.challenge);
      await this.recordFailure(tenant, input.keyId, 'attestation', result.code);
      throw attestationFailure(result.code, result.message);
    }
    if (tenant.riskThresholds.requireAppStoreReceipt && result.receipt.length === 0) {
      await this.challenges.consume(tenant.appId, input.challenge);
      await this.recordFailure(tenant, input.keyId, 'attestation', 'receipt_missing');
      throw new AppException(403, 'receipt_missing', 'This app requires an App Store receipt in the attestation');
    }
    // Used up in its own commit: a refusal decided during admission (risk, quota, a blocked
    // device) rolls the admission back, never the challenge, so the same payload cannot be retried.
    await this.challenges.consume(tenant.appId, input.challenge);
    return this.withFailureEvents(tenant, input.keyId, 'attestation', async (manager, seen) => {
      const device = await this.upsertAttestedDevice(
        manager,
        tenant,
        input,
        result.publicKeyPem,
        result.environment,
        result.receipt,
        subjectVerified,
      );
      return this.admit(manager, tenant, device, input.keyId, 'attestation', device.inserted, seen);
    });
  }

  async refresh(tenant: Tenant, input: RefreshAttestationDto): Promise<MintedToken> {
    const subjectVerified = this.checkSubject(tenant, input);
    const known = await this.findDevice(this.dataSource.manager, tenant.appId, input.keyId);
    if (!known || known.is_blocked) {
      throw new AppException(401, 'reattest_required', 'This key is unknown or revoked: attest the device again', {
        hint: 'Generate a new App Attest key and call POST /api/v1/attestation/validate',
      });
    }
    const clientDataHashes = input.clientData
      ? clientDataHashesFor(Buffer.from(input.clientData, 'base64'), input.challenge)
      : challengeClientDataHashes(input.challenge);
    const result = verifyAssertion({
      assertion: Buffer.from(input.assertion, 'base64'),
      publicKeyPem: known.public_key_pem,
      clientDataHashes,
      teamId: tenant.teamId,
      bundleId: tenant.bundleId,
      previousCounter: Number(known.sign_counter),
    });
    if (!result.ok) {
      await this.challenges.consume(tenant.appId, input.challenge);
      await this.recordFailure(tenant, input.keyId, 'assertion', result.code, known.id);
      throw attestationFailure(result.code, result.message);
    }
    this.assertDeviceAge(tenant, known);
    await this.challenges.consume(tenant.appId, input.challenge);
    return this.withFailureEvents(tenant, input.keyId, 'assertion', async (manager, seen) => {
      // The counter only moves forward: of two concurrent refreshes with one counter, one wins.
      const device = await this.touchDevice(manager, known.id, input, false, subjectVerified, result.counter);
      if (!device) throw attestationFailure('counter_not_increasing', 'The assertion counter did not increase');
      if (input.subjectId !== undefined && input.subjectId !== known.subject_id) {
        // Who uses the device changed: an event in the device's history, committed with the admission.
        await manager.query(
          `INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result)
           VALUES ($1, $2, $3, $4, 'subject_changed', 'success')`,
          [tenant.organizationId, tenant.appId, known.id, input.keyId],
        );
      }
      return this.admit(manager, tenant, device, input.keyId, 'assertion', false, seen, input.limitedUse === true);
    });
  }

  /** Risk, thresholds and quota for a verified device, then the event and the token. */
  private async admit(
    manager: EntityManager,
    tenant: Tenant,
    device: DeviceRow,
    keyId: string,
    eventType: 'attestation' | 'assertion',
    isNewDevice: boolean,
    seen: AttemptFacts,
    limitedUse = false,
  ): Promise<MintedToken> {
    const thresholds = tenant.riskThresholds;
    if (device.is_blocked) throw new AppException(403, 'device_blocked', 'This device is blocked by the app owner');
    const risk = scoreRisk({
      jailbreakDetected: device.jailbreak_detected,
      environment: device.environment,
      failureCount: device.failure_count,
      counterAnomalies: device.counter_anomalies,
      attestationsThisHour: device.velocity_count,
      blocked: device.is_blocked,
    });
    const scored = deviceFacts(keyId, device, risk.score);
    seen.scored = scored;
    seen.isNewDevice = isNewDevice;
    if (thresholds.blockOnJailbreak && device.jailbreak_detected) {
      throw new AppException(403, 'jailbreak_detected', 'This app does not accept jailbroken devices');
    }
    if (risk.score > thresholds.maxAllowedRiskScore) {
      throw new AppException(
        403,
        'risk_threshold_exceeded',
        `The device's risk score ${risk.score} is above the app's limit`,
        {
          hint: `Signals: ${risk.reasons.join(', ')}`,
        },
      );
    }
    if (device.attestation_count < thresholds.minAttestationCount) {
      throw new AppException(403, 'insufficient_attestation_history', 'This device has not attested often enough yet', {
        hint: `The app requires ${thresholds.minAttestationCount} successful attestations`,
      });
    }
    await this.mad.count(manager, tenant, device.id, isNewDevice);
    // One round trip: the device's new score and its success event.
    await manager.query(
      `WITH scored AS (UPDATE devices SET risk_score = $6 WHERE id = $3)
       INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, risk_score)
       VALUES ($1, $2, $3, $4, $5, 'success', $6)`,
      [tenant.organizationId, tenant.appId, device.id, keyId, eventType, risk.score],
    );
    await this.webhooks.deviceAdmitted(manager, tenant, scored, isNewDevice);
    return this.tokens.mint(subjectOf(tenant, keyId, device, risk.score), { limitedUse });
  }

  /** Runs the admission transaction; a refusal inside it still leaves a failure event behind. */
  private async withFailureEvents<T>(
    tenant: Tenant,
    keyId: string,
    eventType: 'attestation' | 'assertion',
    work: (manager: EntityManager, seen: AttemptFacts) => Promise<T>,
  ): Promise<T> {
    const seen: AttemptFacts = { scored: null, isNewDevice: false };
    try {
      const admitted = await this.dataSource.transaction((manager) => work(manager, seen));
      // After commit, so the evaluation counts this event; it never delays the answer.
      this.riskAlerts.onDeviceEvent(tenant, {
        keyId,
        result: 'success',
        riskScore: seen.scored?.riskScore ?? null,
        isNewDevice: seen.isNewDevice,
        errorCode: null,
      });
      return admitted;
    } catch (error) {
      // A stale or reused challenge says nothing about the device: no failure event for it.
      if (error instanceof AppException && error.getStatus() < 500 && !CHALLENGE_REFUSALS.has(error.code)) {
        const device = await this.findDevice(this.dataSource.manager, tenant.appId, keyId);
        await this.recordFailure(tenant, keyId, eventType, error.code, device?.id ?? null, seen.scored);
      }
      throw error;
    }
  }

  private async upsertAttestedDevice(
    manager: EntityManager,
    tenant: Tenant,
    input: ValidateAttestationDto,
    publicKeyPem: string,
    environment: 'development' | 'production',
    receipt: Buffer,
    subjectVerified: boolean,
  ): Promise<DeviceRow> {
    const rows: DeviceRow[] = await manager.query(
      `INSERT INTO devices (organization_id, app_id, key_id, public_key_pem, sign_counter, environment, receipt,
                           client_device_id, subject_id, device_model, os_version, app_version, country,
                           jailbreak_detected, attestation_count, velocity_count, subject_verified)
       VALUES ($1, $2, $3, $4, 0, $5, $6, COALESCE($7, ''), $8, $9, $10, $11, upper($12), COALESCE($13, false), 1, 1,
               $8::text IS NOT NULL AND $14::boolean)
       ON CONFLICT (app_id, key_id) DO UPDATE SET
         public_key_pem = EXCLUDED.public_key_pem, sign_counter = 0, environment = EXCLUDED.environment,
         receipt = EXCLUDED.receipt
       RETURNING ${DEVICE_COLUMNS}, (xmax = 0) AS inserted`,
      [
        tenant.organizationId,
        tenant.appId,
        input.keyId,
        publicKeyPem,
        environment,
        receipt,
        input.deviceId ?? null,
        input.subjectId ?? null,
        input.deviceModel ?? null,
        input.osVersion ?? null,
        input.appVersion ?? null,
        input.country ?? null,
        input.jailbreakDetected ?? null,
        subjectVerified,
      ],
    );
    const device = rows[0];
    if (device.inserted) return device;
    const touched = await this.touchDevice(manager, device.id, input, true, subjectVerified);
    return { ...touched!, inserted: false };
  }

  /** Profile fields the device reports, the attestation count and the hourly velocity window. */
  /**
   * Profile fields the device reports, the attestation count and the hourly velocity window; with
   * `advanceCounterTo`, also the assertion counter, only if it moves forward (null otherwise).
   */
  private async touchDevice(
    manager: EntityManager,
    id: string,
    input: ValidateAttestationDto | RefreshAttestationDto,
    attested: boolean,
    subjectVerified: boolean,
    advanceCounterTo: number | null = null,
  ): Promise<DeviceRow | null> {
    const rows = await queryRows<DeviceRow>(
      manager,
      `UPDATE devices SET
         device_model = COALESCE($2, device_model), os_version = COALESCE($3, os_version),
         app_version = COALESCE($4, app_version), country = COALESCE(upper($5), country),
         subject_id = COALESCE($6, subject_id), client_device_id = COALESCE($7, client_device_id),
         subject_verified = CASE WHEN $6::text IS NULL THEN subject_verified ELSE $11::boolean END,
         jailbreak_detected = COALESCE($8, jailbreak_detected),
         attestation_count = attestation_count + CASE WHEN $9 THEN 1 ELSE 0 END,
         velocity_count = CASE WHEN velocity_window_start < now() - interval '1 hour' THEN 1 ELSE velocity_count + 1 END,
         velocity_window_start = CASE WHEN velocity_window_start < now() - interval '1 hour' THEN now() ELSE velocity_window_start END,
         sign_counter = COALESCE($10, sign_counter),
         last_seen_at = now(), updated_at = now()
       WHERE id = $1 AND ($10::bigint IS NULL OR sign_counter < $10)
       RETURNING ${DEVICE_COLUMNS}, false AS inserted`,
      [
        id,
        input.deviceModel ?? null,
        input.osVersion ?? null,
        input.appVersion ?? null,
        input.country ?? null,
        input.subjectId ?? null,
        input.deviceId ?? null,
        'jailbreakDetected' in input ? (input.jailbreakDetected ?? null) : null,
        attested,
        advanceCounterTo,
        subjectVerified,
      ],
    );
    return rows[0] ?? null;
  }

  /**
   * Subject binding (docs/security.md): whether `subjectId` comes signed by the tenant's backend.
   * An app that requires it refuses an unsigned or badly signed subject with 401; any app checks a
   * signature it is sent. Pure input checking, before verification: the challenge stays unused.
   */
  private checkSubject(tenant: Tenant, input: ValidateAttestationDto | RefreshAttestationDto): boolean {
    const signed = input.subjectSignature !== undefined || input.subjectExpiresAt !== undefined;
    if (input.subjectId === undefined) {
      if (signed) throw badRequest('subjectId: is required with subjectSignature and subjectExpiresAt');
      return false;
    }
    if (!tenant.requireSignedSubject && !signed) return false;
    const refuse = (message: string) =>
      new AppException(401, 'subject_signature_invalid', message, {
        hint: 'Sign the subject on your backend: HMAC-SHA256 of "attestly-subject-v1\\n<appId>\\n<subjectId>\\n<expiresAt>" with the app\'s subject signing secret, base64url',
      });
    if (!tenant.subjectSigningSecret) throw refuse('This app has no subject signing secret');
    const check = checkSubjectSignature({
      secret: tenant.subjectSigningSecret,
      appId: tenant.appId,
      subjectId: input.subjectId,
      signature: input.subjectSignature,
      expiresAt: input.subjectExpiresAt,
      now: Math.floor(Date.now() / 1000),
    });
    switch (check) {
      case 'valid':
        return true;
      case 'missing':
        throw refuse('This app accepts subjectId only with subjectSignature and subjectExpiresAt from your backend');
      case 'expired':
        throw refuse('The subject signature has expired');
      case 'too_long':
        throw refuse('The subject signature is valid for more than 30 days');
      case 'invalid':
        throw refuse('The subject signature does not match this app, subject and expiry');
    }
  }

  private async findDevice(manager: EntityManager, appId: string, keyId: string): Promise<DeviceRow | null> {
    const rows: DeviceRow[] = await manager.query(
      `SELECT ${DEVICE_COLUMNS}, false AS inserted FROM devices WHERE app_id = $1 AND key_id = $2`,
      [appId, keyId],
    );
    return rows[0] ?? null;
  }

  private assertDeviceAge(tenant: Tenant, device: DeviceRow): void {
    const maxDays = tenant.riskThresholds.maxDeviceAge;
    if (maxDays !== null && Date.now() - device.first_seen_at.getTime() > maxDays * 86_400_000) {
      throw new AppException(401, 'reattest_required', `This key is older than the app's limit of ${maxDays} days`, {
        hint: 'Generate a new App Attest key and attest again',
      });
    }
  }

  /**
   * A failure event; attributed to the device (and counted in its risk) when the key is known.
   * The event, its webhooks and the risk alerts carry the score of this attempt: `scored` when the
   * refusal came after scoring, else the device's signals with this failure counted.
   */
  private async recordFailure(
    tenant: Tenant,
    keyId: string,
    eventType: 'attestation' | 'assertion',
    code: string,
    deviceId: string | null = null,
    scored: DeviceFacts | null = null,
  ): Promise<void> {
    let facts = scored;
    this.metrics.attestationFailure(tenant.appId, code);
    if (deviceId) {
      const [device] = await queryRows<FailedDeviceRow>(
        this.dataSource.manager,
        `UPDATE devices SET failure_count = failure_count + 1,
                counter_anomalies = counter_anomalies + CASE WHEN $2 = 'counter_not_increasing' THEN 1 ELSE 0 END
          WHERE id = $1
        RETURNING client_device_id, environment, jailbreak_detected, failure_count, counter_anomalies, is_blocked,
                  device_model, os_version,
                  CASE WHEN velocity_window_start >= now() - interval '1 hour' THEN velocity_count ELSE 0 END
                    AS attestations_this_hour`,
        [deviceId, code],
      );
      if (device && !facts) {
        const risk = scoreRisk({
          jailbreakDetected: device.jailbreak_detected,
          environment: device.environment,
          failureCount: device.failure_count,
          counterAnomalies: device.counter_anomalies,
          attestationsThisHour: device.attestations_this_hour,
          blocked: device.is_blocked,
        });
        facts = {
          keyId,
          clientDeviceId: device.client_device_id,
          riskScore: risk.score,
          jailbreakDetected: device.jailbreak_detected,
          deviceModel: device.device_model,
          osVersion: device.os_version,
        };
      }
    }
    await this.dataSource.query(
      `INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, error_code, risk_score)
       VALUES ($1, $2, $3, $4, $5, 'failure', $6, $7)`,
      [tenant.organizationId, tenant.appId, deviceId, keyId, eventType, code, facts?.riskScore ?? null],
    );
    this.riskAlerts.onDeviceEvent(tenant, {
      keyId,
      result: 'failure',
      riskScore: facts?.riskScore ?? null,
      isNewDevice: false,
      errorCode: code,
    });
    await this.webhooks.attestationFailed(this.dataSource.manager, tenant, {
      keyId,
      errorCode: code,
      scored,
      counted: facts,
    });
  }
}

function attestationFailure(code: AppAttestErrorCode, message: string): AppException {
  return new AppException(MALFORMED.has(code) ? 400 : 401, code, message, {
    hint: `Verification failed at the ${code.replace(/_/g, ' ')} step`,
  });
}

/** clientData given by the device must contain the challenge it answers. */
function clientDataHashesFor(clientData: Buffer, challenge: string): Buffer[] {
  if (!clientData.toString('utf8').includes(challenge) && !clientData.includes(Buffer.from(challenge, 'base64'))) {
    throw badRequest('clientData: must contain the challenge');
  }
  return [createHash('sha256').update(clientData).digest()];
}

function deviceFacts(keyId: string, device: DeviceRow, riskScore: number): DeviceFacts {
  return {
    keyId,
    clientDeviceId: device.client_device_id,
    riskScore,
    jailbreakDetected: device.jailbreak_detected,
    deviceModel: device.device_model,
    osVersion: device.os_version,
  };
}

function subjectOf(tenant: Tenant, keyId: string, device: DeviceRow, riskScore: number): TokenSubject {
  return {
    tenant,
    keyId,
    environment: device.environment,
    riskScore,
    attestationCount: device.attestation_count,
    deviceModel: device.device_model,
    osVersion: device.os_version,
    appVersion: device.app_version,
    country: device.country,
    jailbreakDetected: device.jailbreak_detected,
    firstSeenAt: device.first_seen_at,
    failureCount: device.failure_count,
    // With subject binding on, a subject the tenant's backend did not sign says nothing.
    subjectId: tenant.requireSignedSubject && !device.subject_verified ? null : device.subject_id,
  };
}
