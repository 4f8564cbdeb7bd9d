import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppException, badRequest } from '../common/errors/app-exception.js';
import {
  attestationFailure,
  deviceBlocked,
  insufficientAttestationHistory,
  jailbreakDetected,
  keyTooOld,
  receiptMissing,
  riskThresholdExceeded,
  subjectSignatureInvalid,
  unknownKey,
} from './attestation.exceptions.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { DomainEvents } from '../common/domain-events/domain-events.js';
import { tierDefinition } from '../common/tiers.js';
import { highRiskThreshold } from '../compliance/compliance-settings.js';
import type { AttestingApp, DeviceDomainEvent, DeviceFacts } from '../devices/device-domain-events.js';
import {
  DevicesRepository,
  type DeviceRow,
  type FailedDeviceRow,
  type ReadDeviceRow,
} from '../devices/devices.repository.js';
import { scoreStoredDevice } from '../devices/risk-score.js';
import { MadService } from '../usage/mad.service.js';
import { Metrics } from '../metrics/metrics.js';
import { RiskAlertsService } from '../risk-alerts/risk-alerts.service.js';
import { anomaliesOf, FAILURE_BURST, isHighRisk } from './anomalies.js';
import {
  challengeClientDataHashes,
  createTrustStore,
  verifyAssertion,
  verifyAttestation,
  type TrustStore,
} from './app-attest/app-attest.js';
import type { RefreshAttestationDto, ValidateAttestationDto } from './attestation.dto.js';
import { ChallengeService } from './challenge.service.js';
import { checkSubjectSignature } from './subject-signature.js';
import { TokenService, type MintedToken, type TokenSubject } from './token.service.js';

/** What the admission transaction learnt before a refusal rolled it back. */
interface AttemptFacts {
  scored: DeviceFacts | null;
  isNewDevice: boolean;
}

const CHALLENGE_REFUSALS: ReadonlySet<string> = new Set(['challenge_invalid', 'challenge_expired']);

/**
 * Validate (a new App Attest key) and refresh (an assertion by a known key): verification, the
 * device record and its events (through the devices feature's repository), risk, the app's
 * thresholds, the MAD quota, then a signed token. Every failure is recorded as a device event
 * naming the failed step. What an attempt means is decided here and published as domain events
 * (new device, high risk, failure, anomaly) in the transaction of the change that causes them.
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
    private readonly devices: DevicesRepository,
    private readonly domainEvents: DomainEvents,
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
      throw receiptMissing();
    }
    // Used up in its own commit: a refusal decided during admission (risk, quota, a blocked
    // device) rolls the admission back, never the challenge, so the same payload cannot be retried.
    await this.challenges.consume(tenant.appId, input.challenge);
    return this.withFailureEvents(tenant, input.keyId, 'attestation', async (manager, seen) => {
      const device = await this.devices.in(manager).upsertAttested(tenant.organizationId, tenant.appId, {
        keyId: input.keyId,
        publicKeyPem: result.publicKeyPem,
        environment: result.environment,
        receipt: result.receipt,
        report: input,
        subjectVerified,
      });
      return this.admit(manager, tenant, device, input.keyId, 'attestation', device.inserted, seen);
    });
  }

  async refresh(tenant: Tenant, input: RefreshAttestationDto): Promise<MintedToken> {
    const subjectVerified = this.checkSubject(tenant, input);
    const known = await this.devices.findByKey(tenant.organizationId, tenant.appId, input.keyId);
    if (!known || known.is_blocked) {
      throw unknownKey();
    }
    const clientDataHashes = input.clientData
      ? clientDataHashesFor(Buffer.from(input.clientData, 'base64'), input.challenge)
      : challengeClientDataHashes(input.challenge);
    const result = await verifyAssertion({
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
    const now = new Date();
    const madPeriods = this.mad.periodStarts(tenant, now);
    const clean = await this.refreshClean(tenant, input, known, result.counter, subjectVerified, madPeriods);
    if (clean) return clean;
    return this.withFailureEvents(tenant, input.keyId, 'assertion', async (manager, seen) => {
      const devices = this.devices.in(manager);
      // The counter only moves forward: of two concurrent refreshes with one counter, one wins.
      // The same statement says whether the device is already counted this period, so a counted
      // device spends no statement on the quota.
      const device = await devices.touch(tenant.organizationId, known.id, input, {
        attested: false,
        subjectVerified,
        advanceCounterTo: result.counter,
        madPeriods,
      });
      if (!device) throw attestationFailure('counter_not_increasing', 'The assertion counter did not increase');
      if (input.subjectId !== undefined && input.subjectId !== known.subject_id) {
        // Who uses the device changed: an event in the device's history, committed with the admission.
        await devices.recordSubjectChanged(tenant.organizationId, tenant.appId, known.id, input.keyId);
      }
      return this.admit(manager, tenant, device, input.keyId, 'assertion', false, seen, {
        limitedUse: input.limitedUse === true,
        now,
      });
    });
  }

  /**
   * The usual refresh, in one statement (decision 0062): a device the app's thresholds admit,
   * whose score does not make it high risk (nothing to announce), that keeps its subject and is
   * already counted this period. The decision is made on the row as read, predicting the one thing
   * the touch changes that the score reads (the velocity count; a refresh reports no jailbreak),
   * and the statement applies only if the row is still that version, the prediction holds and the
   * score is within the high-risk threshold. Null when the refresh is not such a one or the row
   * moved: the transactional path then decides as before. The token is minted after the commit,
   * from the row as stored.
   */
  private async refreshClean(
    tenant: Tenant,
    input: RefreshAttestationDto,
    known: ReadDeviceRow,
    counter: number,
    subjectVerified: boolean,
    madPeriods: readonly string[],
  ): Promise<MintedToken | null> {
    if (input.subjectId !== undefined && input.subjectId !== known.subject_id) return null;
    const velocityCount = known.velocity_window_expired ? 1 : known.velocity_count + 1;
    const risk = scoreStoredDevice(known, velocityCount);
    // Every refusal of `admit` is left to it, with its rollback and failure event.
    const thresholds = tenant.riskThresholds;
    if (thresholds.blockOnJailbreak && known.jailbreak_detected) return null;
    if (risk.score > thresholds.maxAllowedRiskScore) return null;
    if (known.attestation_count < thresholds.minAttestationCount) return null;
    const device = await this.devices.refreshClean(tenant.organizationId, tenant.appId, known.id, input.keyId, input, {
      subjectVerified,
      counter,
      version: known.version,
      velocityCount,
      riskScore: risk.score,
      madPeriods,
      plan: tierDefinition(tenant.serviceTier),
    });
    if (!device) return null;
    this.riskAlerts.onDeviceEvent(tenant, {
      keyId: input.keyId,
      result: 'success',
      riskScore: risk.score,
      isNewDevice: false,
      errorCode: null,
    });
    return this.tokens.mint(subjectOf(tenant, input.keyId, device, risk.score), {
      limitedUse: input.limitedUse === true,
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
    options: { limitedUse?: boolean; now?: Date } = {},
  ): Promise<MintedToken> {
    const thresholds = tenant.riskThresholds;
    if (device.is_blocked) throw deviceBlocked();
    const risk = scoreStoredDevice(device, device.velocity_count);
    const scored = deviceFacts(keyId, device, risk.score);
    seen.scored = scored;
    seen.isNewDevice = isNewDevice;
    if (thresholds.blockOnJailbreak && device.jailbreak_detected) {
      throw jailbreakDetected();
    }
    if (risk.score > thresholds.maxAllowedRiskScore) {
      throw riskThresholdExceeded(risk.score, risk.reasons);
    }
    if (device.attestation_count < thresholds.minAttestationCount) {
      throw insufficientAttestationHistory(thresholds.minAttestationCount);
    }
    await this.mad.count(manager, tenant, device.id, isNewDevice, options.now, device.mad_counted === true);
    await this.devices
      .in(manager)
      .recordSuccess(tenant.organizationId, tenant.appId, device.id, keyId, eventType, risk.score);
    const events: DeviceDomainEvent[] = [];
    if (isNewDevice) events.push({ type: 'DeviceRegistered', app: attestingApp(tenant), device: scored });
    const highRisk = await this.highRiskEvent(manager, tenant, scored);
    if (highRisk) events.push(highRisk);
    // A clean device that is not new publishes nothing and costs no query.
    await this.domainEvents.publish(manager, events);
    return this.tokens.mint(subjectOf(tenant, keyId, device, risk.score), { limitedUse: options.limitedUse });
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
        const device = await this.devices.findByKey(tenant.organizationId, tenant.appId, keyId);
        await this.recordFailure(tenant, keyId, eventType, error.code, device?.id ?? null, seen.scored);
      }
      throw error;
    }
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
    if (!tenant.subjectSigningSecret) throw subjectSignatureInvalid('This app has no subject signing secret');
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
        throw subjectSignatureInvalid(
          'This app accepts subjectId only with subjectSignature and subjectExpiresAt from your backend',
        );
      case 'expired':
        throw subjectSignatureInvalid('The subject signature has expired');
      case 'too_long':
        throw subjectSignatureInvalid('The subject signature is valid for more than 30 days');
      case 'invalid':
        throw subjectSignatureInvalid('The subject signature does not match this app, subject and expiry');
    }
  }

  private assertDeviceAge(tenant: Tenant, device: DeviceRow): void {
    const maxDays = tenant.riskThresholds.maxDeviceAge;
    if (maxDays !== null && Date.now() - device.first_seen_at.getTime() > maxDays * 86_400_000) {
      throw keyTooOld(maxDays);
    }
  }

  /**
   * The organization's high-risk event for a scored device, or null. A score of 0 exceeds no
   * threshold, so a clean device costs no query; otherwise one indexed read of the compliance
   * settings in force (under the plan the tenant resolved with), in the caller's transaction.
   */
  private async highRiskEvent(
    manager: EntityManager,
    tenant: Tenant,
    device: DeviceFacts,
  ): Promise<DeviceDomainEvent | null> {
    if (device.riskScore <= 0) return null;
    const threshold = await highRiskThreshold(manager, tenant.organizationId, tierDefinition(tenant.serviceTier));
    if (!isHighRisk(device.riskScore, threshold)) return null;
    return { type: 'HighRiskDevice', app: attestingApp(tenant), device, threshold };
  }

  /**
   * A failure event; attributed to the device (and counted in its risk) when the key is known.
   * The event, its domain events and the risk alerts carry the score of this attempt: `scored`
   * when the refusal came after scoring, else the device's signals with this failure counted.
   * The count, the event and what they mean (failure, high risk, anomalies) commit together.
   */
  private async recordFailure(
    tenant: Tenant,
    keyId: string,
    eventType: 'attestation' | 'assertion',
    code: string,
    deviceId: string | null = null,
    scored: DeviceFacts | null = null,
  ): Promise<void> {
    this.metrics.attestationFailure(tenant.appId, code);
    const facts = await this.dataSource.transaction(async (manager) => {
      const devices = this.devices.in(manager);
      let counted = scored;
      if (deviceId) {
        const device = await devices.countFailure(tenant.organizationId, deviceId, code);
        if (device && !counted) counted = countedFacts(keyId, device);
      }
      const recorded = await devices.recordFailure(tenant.organizationId, {
        appId: tenant.appId,
        deviceId,
        keyId,
        eventType,
        errorCode: code,
        riskScore: counted?.riskScore ?? null,
        windowMinutes: FAILURE_BURST.windowMinutes,
      });
      // A new device refused after scoring was rolled back: only `scored` still knows it.
      const device: DeviceFacts = counted ?? {
        keyId,
        clientDeviceId: recorded.stored?.client_device_id ?? null,
        riskScore: recorded.stored?.risk_score ?? 0,
        jailbreakDetected: recorded.stored?.jailbreak_detected ?? false,
        deviceModel: recorded.stored?.device_model ?? null,
        osVersion: recorded.stored?.os_version ?? null,
      };
      const app = attestingApp(tenant);
      const events: DeviceDomainEvent[] = [{ type: 'AttestationFailed', app, device, errorCode: code }];
      // High risk only for a score this attempt computed, not for one the failure counting made up.
      const highRisk = scored ? await this.highRiskEvent(manager, tenant, scored) : null;
      if (highRisk) events.push(highRisk);
      const anomalies = anomaliesOf({
        errorCode: code,
        recentFailures: recorded.recentFailures,
        keyInOtherApps: recorded.keyInOtherApps,
      });
      for (const anomaly of anomalies) {
        events.push({ type: 'DeviceAnomalyDetected', app, device, errorCode: code, ...anomaly });
      }
      await this.domainEvents.publish(manager, events);
      return counted;
    });
    // Committed: the evaluation counts this event.
    this.riskAlerts.onDeviceEvent(tenant, {
      keyId,
      result: 'failure',
      riskScore: facts?.riskScore ?? null,
      isNewDevice: false,
      errorCode: code,
    });
  }
}

/** clientData given by the device must contain the challenge it answers. */
function clientDataHashesFor(clientData: Buffer, challenge: string): Buffer[] {
  if (!clientData.toString('utf8').includes(challenge) && !clientData.includes(Buffer.from(challenge, 'base64'))) {
    throw badRequest('clientData: must contain the challenge');
  }
  return [createHash('sha256').update(clientData).digest()];
}

/** Where a device event happened, without the rest of the tenant (its secrets stay here). */
function attestingApp(tenant: Tenant): AttestingApp {
  return { organizationId: tenant.organizationId, appId: tenant.appId, bundleId: tenant.bundleId };
}

/** A known device's facts with a failure just counted: its current signals, scored. */
function countedFacts(keyId: string, device: FailedDeviceRow): DeviceFacts {
  const risk = scoreStoredDevice(device, device.attestations_this_hour);
  return {
    keyId,
    clientDeviceId: device.client_device_id,
    riskScore: risk.score,
    jailbreakDetected: device.jailbreak_detected,
    deviceModel: device.device_model,
    osVersion: device.os_version,
  };
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
