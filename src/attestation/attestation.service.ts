import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AppException, badRequest } from '../common/errors/app-exception.js';
import {
  admissionRefused,
  attestationFailure,
  iosNotConfigured,
  receiptMissing,
  subjectSignatureInvalid,
  unknownKey,
} from './attestation.exceptions.js';
import { admissionRefusal } from './admission.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { DomainEvents } from '../common/domain-events/domain-events.js';
import { tierDefinition } from '../common/tiers.js';
import { ComplianceService } from '../compliance/compliance.service.js';
import type { AttestingApp, DeviceDomainEvent, DeviceFacts } from '../devices/device-domain-events.js';
import {
  DevicesRepository,
  type AttestedKey,
  type DeviceRow,
  type FailedDeviceRow,
  type ReadDeviceRow,
} from '../devices/devices.repository.js';
import { scoreStoredDevice } from '../devices/risk-score.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { MadService } from '../usage/mad.service.js';
import { isMadLimitReached } from '../usage/mad.repository.js';
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
import type { DeviceProfileFields, RefreshAttestationDto, ValidateAttestationDto } from './attestation.dto.js';
import { ChallengeService } from './challenge.service.js';
import { checkSubjectSignature } from './subject-signature.js';
import { TokenService, type MintedToken, type TokenSubject } from '../device-tokens/token.service.js';

/** What another platform's verification established of a device (`validateVerified`). */
export interface VerifiedDevice {
  platform: 'android';
  environment: 'production' | 'development';
  /** The verdict says the device is compromised (recorded as a jailbreak: risk and `blockOnJailbreak`). */
  rooted: boolean;
}

/** What an attempt learnt before a refusal: whom the failure counts against, and its score. */
interface AttemptFacts {
  /** The device the failure counts against, once the attempt knows it. */
  deviceId: string | null;
  /** From here on a refusal counts against the key's stored device, read after the rollback. */
  countAgainstStoredKey: boolean;
  /** The attempt's score, once admission computed it. */
  scored: DeviceFacts | null;
  isNewDevice: boolean;
}

/**
 * Validate (a new App Attest key) and refresh (an assertion by a known key): verification, the
 * device record and its events (through the devices feature's repository), risk, the app's
 * thresholds, the MAD quota, then a signed token. Both go through one gate, `verdict`: the
 * challenge is spent first, and every refusal after it is recorded as a device event naming the
 * refused step. What an attempt means is decided here and emitted as domain events (new
 * device, high risk, failure, anomaly) in the unit of work of the change that causes them.
 */
@Injectable()
export class AttestationService {
  private readonly trustStore: TrustStore;

  constructor(
    private readonly uow: UnitOfWork,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly challenges: ChallengeService,
    private readonly tokens: TokenService,
    private readonly mad: MadService,
    private readonly devices: DevicesRepository,
    private readonly domainEvents: DomainEvents,
    private readonly riskAlerts: RiskAlertsService,
    private readonly metrics: Metrics,
    private readonly compliance: ComplianceService,
  ) {
    this.trustStore = createTrustStore(readFileSync(config.appAttestRootCaPath, 'utf8'));
  }

  async validate(tenant: Tenant, input: ValidateAttestationDto): Promise<MintedToken> {
    const { teamId, bundleId } = iosIdentityOf(tenant);
    const subjectVerified = this.checkSubject(tenant, input);
    return this.verdict(tenant, input.keyId, 'attestation', input.challenge, async (attempt) => {
      const result = await verifyAttestation({
        attestationObject: Buffer.from(input.attestationObject, 'base64'),
        keyId: input.keyId,
        clientDataHashes: challengeClientDataHashes(input.challenge),
        teamId,
        bundleId,
        trustAnchors: this.trustStore,
        now: new Date(),
      });
      // A failed attestation names a key it has not proven: it counts against no stored device.
      if (!result.ok) throw attestationFailure(result.code, result.message);
      if (tenant.riskThresholds.requireAppStoreReceipt && result.receipt.length === 0) throw receiptMissing();
      attempt.countAgainstStoredKey = true;
      return this.storeAttested(tenant, attempt, {
        keyId: input.keyId,
        publicKeyPem: result.publicKeyPem,
        environment: result.environment,
        receipt: result.receipt,
        report: input,
        subjectVerified,
      });
    });
  }

  async refresh(tenant: Tenant, input: RefreshAttestationDto): Promise<MintedToken> {
    const { teamId, bundleId } = iosIdentityOf(tenant);
    const subjectVerified = this.checkSubject(tenant, input);
    const clientDataHashes = input.clientData
      ? clientDataHashesFor(Buffer.from(input.clientData, 'base64'), input.challenge)
      : challengeClientDataHashes(input.challenge);
    // The challenge's use reads the key's device in the same statement (decision 0077).
    return this.verdict(tenant, input.keyId, 'assertion', input.challenge, async (attempt, known) => {
      if (!known) throw unknownKey();
      const result = await verifyAssertion({
        assertion: Buffer.from(input.assertion, 'base64'),
        publicKeyPem: known.public_key_pem,
        clientDataHashes,
        teamId,
        bundleId,
        previousCounter: Number(known.sign_counter),
      });
      // A refusal counts against the stored device only once the key signed the assertion (a
      // replayed counter, then admission): anyone can send a refresh naming a key, and an assertion
      // the key did not sign says nothing about its device (docs/risk.md, failed_attestations).
      if (result.ok || result.code === 'counter_not_increasing') attempt.deviceId = known.id;
      if (!result.ok) throw attestationFailure(result.code, result.message);
      const now = new Date();
      const madPeriods = this.mad.periodStarts(tenant, now);
      const clean = await this.refreshClean(tenant, input, known, result.counter, subjectVerified, madPeriods, now);
      if (clean) return clean;
      return this.admitInTransaction(tenant, input.keyId, attempt, async () => {
        const devices = this.devices;
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
        return this.admit(tenant, device, input.keyId, 'assertion', false, attempt, {
          limitedUse: input.limitedUse === true,
          now,
        });
      });
    });
  }

  /**
   * Validate for a platform verified elsewhere (Android: android-attestation.service.ts), through
   * the same gate as validate: the subject check, the challenge spent first, `verify` (whose
   * refusals are recorded as failure events like App Attest's, against no stored device: the key
   * is not proven yet), then the device record, admission, quota, events and the token. A known
   * key is re-attested (its profile and platform signals updated), as App Attest re-validation is.
   */
  async validateVerified(
    tenant: Tenant,
    input: { keyId: string; challenge: string; report: DeviceProfileFields & { jailbreakDetected?: boolean } },
    verify: () => Promise<VerifiedDevice>,
  ): Promise<MintedToken> {
    const subjectVerified = this.checkSubject(tenant, input.report);
    return this.verdict(tenant, input.keyId, 'attestation', input.challenge, async (attempt) => {
      const verified = await verify();
      attempt.countAgainstStoredKey = true;
      return this.storeAttested(tenant, attempt, {
        keyId: input.keyId,
        publicKeyPem: '',
        environment: verified.environment,
        receipt: Buffer.alloc(0),
        report: { ...input.report, jailbreakDetected: verified.rooted || input.report.jailbreakDetected === true },
        subjectVerified,
        platform: verified.platform,
      });
    });
  }

  /**
   * A verified key stored and admitted: a key new to the app in one statement when it can be
   * (`validateClean`), otherwise, and for a key already known (re-attestation), in the
   * transaction: the upsert, then the admission rule, the quota, the events and the token.
   */
  private async storeAttested(tenant: Tenant, attempt: AttemptFacts, key: AttestedKey): Promise<MintedToken> {
    const now = new Date();
    const clean = await this.validateClean(tenant, key, now);
    if (clean) return clean;
    return this.admitInTransaction(tenant, key.keyId, attempt, async () => {
      const device = await this.devices.upsertAttested(tenant.organizationId, tenant.appId, key);
      return this.admit(tenant, device, key.keyId, 'attestation', device.inserted, attempt, { now });
    });
  }

  /**
   * The usual validate, in one statement (decision 0078): a key new to the app, whose device the
   * admission rule admits with a score that does not make it high risk, counted as monthly active
   * within the plan's limit, in an organization where no webhook endpoint listens to a new device's
   * events (so its publication would write nothing). The decision is made on the row the insert
   * will make, which the verified key and the report fully determine, and the statement applies
   * only if the key is still new, the score within the high-risk threshold, nobody listening, and
   * the count within the limit. Null when the attempt is not such a one: the transactional path then
   * decides, by the same rule, from the row as it is then. The token is minted after the commit.
   */
  private async validateClean(tenant: Tenant, key: AttestedKey, now: Date): Promise<MintedToken | null> {
    // Autocommitted, and undone by raising: inside a caller's unit of work it would abort that one.
    if (this.uow.active) return null;
    // Null when a subscriber of new devices writes more than webhook deliveries: it must hear them.
    const webhooks = this.domainEvents.webhooksOnPublishing('DeviceRegistered');
    if (webhooks === null) return null;
    const candidate = newDeviceRow(key, now);
    const risk = scoreStoredDevice(candidate, candidate.velocity_count);
    // Any refusal is the transactional path's, with its rollback and failure event.
    if (admissionRefusal('attestation', tenant.riskThresholds, candidate, risk, now.getTime())) return null;
    const count = this.mad.newDeviceCount(tenant, now);
    let device: (DeviceRow & { active_devices: number }) | null;
    try {
      device = await this.devices.insertAdmitted(tenant.organizationId, tenant.appId, key, {
        riskScore: risk.score,
        plan: tierDefinition(tenant.serviceTier),
        webhooks,
        count,
      });
    } catch (error) {
      // The count would pass the plan's limit: nothing was written; the quota decides in the transaction.
      if (isMadLimitReached(error)) return null;
      throw error;
    }
    if (!device) return null;
    this.mad.countedNewDevice(tenant, count, device.active_devices);
    this.riskAlerts.onDeviceEvent(tenant, {
      keyId: key.keyId,
      result: 'success',
      riskScore: risk.score,
      isNewDevice: true,
      errorCode: null,
    });
    return this.tokens.mint(subjectOf(tenant, key.keyId, device, risk.score));
  }

  /**
   * The one gate of validate and refresh (docs/security.md, "Every verdict spends the
   * challenge"). The challenge is used up first, in its own commit (for an assertion the same
   * statement reads the key's device, handed to `decide`: decision 0077); then `decide` runs, and any
   * refusal it makes, whatever the step (verification, receipt, unknown or blocked key, age, the
   * admission rule, quota, counter), is recorded as a failure event before it is answered, with
   * its domain events (the `device.attestation_failed` webhook through the outbox) in the same
   * transaction. A refusal rolls back what admission wrote, never the challenge, so a refused
   * payload cannot be retried once a threshold changes. Only a challenge that cannot be used
   * (unknown, used, expired, another app's) is answered without an event: it says nothing about
   * the device.
   */
  private async verdict<T>(
    tenant: Tenant,
    keyId: string,
    eventType: 'attestation' | 'assertion',
    challenge: string,
    decide: (attempt: AttemptFacts, known: ReadDeviceRow | null) => Promise<T>,
  ): Promise<T> {
    // An assertion is made by a known key: the challenge's use reads it in the same statement.
    let known: ReadDeviceRow | null = null;
    if (eventType === 'assertion') {
      known = await this.challenges.consumeReadingKey(tenant.appId, challenge, {
        organizationId: tenant.organizationId,
        keyId,
      });
    } else {
      await this.challenges.consume(tenant.appId, challenge);
    }
    const attempt: AttemptFacts = { deviceId: null, countAgainstStoredKey: false, scored: null, isNewDevice: false };
    try {
      return await decide(attempt, known);
    } catch (error) {
      if (error instanceof AppException && error.getStatus() < 500) {
        const deviceId =
          attempt.deviceId ??
          (attempt.countAgainstStoredKey
            ? ((await this.devices.findByKey(tenant.organizationId, tenant.appId, keyId))?.id ?? null)
            : null);
        await this.recordFailure(tenant, keyId, eventType, error.code, deviceId, attempt.scored);
      }
      throw error;
    }
  }

  /**
   * The usual refresh, in one statement (decision 0062): a device the admission rule admits as
   * read, whose score does not make it high risk (nothing to announce), that keeps its subject and
   * is already counted this period. The decision is made on the row as read, predicting the one
   * thing the touch changes that the score reads (the velocity count; a refresh reports no
   * jailbreak), and the statement applies only if the row is still that version, the prediction
   * holds and the score is within the high-risk threshold. Null when the refresh is not such a one
   * or the row moved: the transactional path then decides, by the same rule, from the row as it is
   * then. The token is minted after the commit, from the row as stored.
   */
  private async refreshClean(
    tenant: Tenant,
    input: RefreshAttestationDto,
    known: ReadDeviceRow,
    counter: number,
    subjectVerified: boolean,
    madPeriods: readonly string[],
    now: Date,
  ): Promise<MintedToken | null> {
    if (input.subjectId !== undefined && input.subjectId !== known.subject_id) return null;
    const velocityCount = known.velocity_window_expired ? 1 : known.velocity_count + 1;
    const risk = scoreStoredDevice(known, velocityCount);
    // Any refusal is the transactional path's, with its rollback and failure event.
    if (admissionRefusal('assertion', tenant.riskThresholds, known, risk, now.getTime())) return null;
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

  /** The admission rule and the quota for a verified device, then the event and the token. */
  private async admit(
    tenant: Tenant,
    device: DeviceRow,
    keyId: string,
    eventType: 'attestation' | 'assertion',
    isNewDevice: boolean,
    attempt: AttemptFacts,
    options: { limitedUse?: boolean; now: Date },
  ): Promise<MintedToken> {
    const risk = scoreStoredDevice(device, device.velocity_count);
    const refusal = admissionRefusal(eventType, tenant.riskThresholds, device, risk, options.now.getTime());
    if (refusal && !refusal.scored) throw admissionRefused(eventType, refusal);
    const scored = deviceFacts(keyId, device, risk.score);
    attempt.scored = scored;
    attempt.isNewDevice = isNewDevice;
    if (refusal) throw admissionRefused(eventType, refusal);
    await this.mad.count(tenant, device.id, isNewDevice, options.now, device.mad_counted === true);
    await this.devices.recordSuccess(tenant.organizationId, tenant.appId, device.id, keyId, eventType, risk.score);
    const events: DeviceDomainEvent[] = [];
    if (isNewDevice) events.push({ type: 'DeviceRegistered', app: attestingApp(tenant), device: scored });
    const highRisk = await this.highRiskEvent(tenant, scored);
    if (highRisk) events.push(highRisk);
    // A clean device that is not new emits nothing and costs no query.
    await this.domainEvents.emit(events);
    return this.tokens.mint(subjectOf(tenant, keyId, device, risk.score), { limitedUse: options.limitedUse });
  }

  /** Runs the admission in one unit of work; after its commit, the risk alerts hear of the success. */
  private async admitInTransaction<T>(
    tenant: Tenant,
    keyId: string,
    attempt: AttemptFacts,
    work: () => Promise<T>,
  ): Promise<T> {
    const admitted = await this.uow.run(work);
    // After commit, so the evaluation counts this event; it never delays the answer.
    this.riskAlerts.onDeviceEvent(tenant, {
      keyId,
      result: 'success',
      riskScore: attempt.scored?.riskScore ?? null,
      isNewDevice: attempt.isNewDevice,
      errorCode: null,
    });
    return admitted;
  }

  /**
   * Subject binding (docs/security.md): whether `subjectId` comes signed by the tenant's backend.
   * An app that requires it refuses an unsigned or badly signed subject with 401; any app checks a
   * signature it is sent. Pure input checking, before the gate: the challenge stays unused.
   */
  private checkSubject(tenant: Tenant, input: DeviceProfileFields): boolean {
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

  /**
   * The organization's high-risk event for a scored device, or null. A score of 0 exceeds no
   * threshold, so a clean device costs no query; otherwise one indexed read of the compliance
   * settings in force (under the plan the tenant resolved with), in the caller's unit of work.
   */
  private async highRiskEvent(tenant: Tenant, device: DeviceFacts): Promise<DeviceDomainEvent | null> {
    if (device.riskScore <= 0) return null;
    const { maxRiskScore: threshold } = await this.compliance.settingsInForce(
      tenant.organizationId,
      tierDefinition(tenant.serviceTier),
    );
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
    const facts = await this.uow.run(async () => {
      const devices = this.devices;
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
      const highRisk = scored ? await this.highRiskEvent(tenant, scored) : null;
      if (highRisk) events.push(highRisk);
      const anomalies = anomaliesOf({
        errorCode: code,
        recentFailures: recorded.recentFailures,
        keyInOtherApps: recorded.keyInOtherApps,
      });
      for (const anomaly of anomalies) {
        events.push({ type: 'DeviceAnomalyDetected', app, device, errorCode: code, ...anomaly });
      }
      await this.domainEvents.emit(events);
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

/**
 * The App ID App Attest checks against; an Android-only app (named by X-Package-Name) has none and
 * is refused before the gate, its challenge unspent.
 */
function iosIdentityOf(tenant: Tenant): { teamId: string; bundleId: string } {
  if (tenant.teamId === null || tenant.bundleId === null) throw iosNotConfigured();
  return { teamId: tenant.teamId, bundleId: tenant.bundleId };
}

/** Where a device event happened, without the rest of the tenant (its secrets stay here). */
function attestingApp(tenant: Tenant): AttestingApp {
  return { organizationId: tenant.organizationId, appId: tenant.appId, bundleId: tenant.bundleId };
}

/**
 * The row a verified key new to the app is inserted as, as the admission rule and the score read
 * it (`ATTESTED_VALUES` in the devices repository: no failures or anomalies yet, one attestation
 * in a new velocity window, not blocked, first seen now).
 */
function newDeviceRow(key: AttestedKey, now: Date) {
  return {
    is_blocked: false,
    jailbreak_detected: key.report.jailbreakDetected === true,
    environment: key.environment,
    failure_count: 0,
    counter_anomalies: 0,
    attestation_count: 1,
    velocity_count: 1,
    first_seen_at: now,
  };
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
