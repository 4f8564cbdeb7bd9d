import { Injectable } from '@nestjs/common';
import type { AppId, OrganizationId } from '../common/access/tenant-id.js';
import { readChanges } from '../database/change-cursor.js';
import { preparedStatement, queryPrepared, queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { highRiskThresholdInputs } from '../compliance/compliance-settings.js';
import type { TierDefinition } from '../common/tiers.js';
import type { BlockChange, DenySetDelta } from './deny-set-state.js';
import type { AttestationEnvironment } from './device.entity.js';
import { toFailureTrend, type FailureTrend, type FailureTrendRow } from './failure-trend.js';

export interface DeviceProfileRow {
  id: string;
  app_id: string;
  key_id: string;
  platform: DevicePlatform;
  device_model: string | null;
  os_version: string | null;
  app_version: string | null;
  country: string | null;
  risk_score: number;
  jailbreak_detected: boolean;
  attestation_count: number;
  is_blocked: boolean;
  first_seen_at: Date;
  last_seen_at: Date;
  updated_at: Date;
}

export interface EventRow {
  id: string;
  app_id: string;
  key_id: string;
  event_type: 'attestation' | 'assertion' | 'subject_changed';
  result: 'success' | 'failure';
  error_code: string | null;
  risk_score: number | null;
  debug: boolean;
  created_at: Date;
}

/** The columns of a device list item, as `toDeviceItem` reads them. */
export const DEVICE_ITEM_COLUMNS = `key_id, app_id, platform, client_device_id, device_model, os_version, app_version,
  country, risk_score, jailbreak_detected, attestation_count, environment, is_blocked, blocked_reason, first_seen_at,
  last_seen_at`;

/** Which platform attested a device: App Attest (`ios`) or Play Integrity (`android`). */
export const DEVICE_PLATFORMS = ['ios', 'android'] as const;
export type DevicePlatform = (typeof DEVICE_PLATFORMS)[number];

export interface DeviceItemRow {
  key_id: string;
  app_id: string;
  platform: DevicePlatform;
  client_device_id: string;
  device_model: string | null;
  os_version: string | null;
  app_version: string | null;
  country: string | null;
  risk_score: number;
  jailbreak_detected: boolean;
  attestation_count: number;
  environment: 'development' | 'production';
  is_blocked: boolean;
  blocked_reason: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
}

/** A device's risk signals, as blocking rescores it. */
export interface RiskSignalRow {
  id: string;
  environment: 'development' | 'production';
  jailbreak_detected: boolean;
  failure_count: number;
  counter_anomalies: number;
  attestations_this_hour: number;
}

/**
 * The attested device keys of an organization, as the dashboard lists them, and the
 * administrator's block. Rows are written by the attestation service; a key id is unique per
 * app, so one key id may (rarely) name a device row in each of several apps.
 */

/** The devices table's state as the attestation path reads it. */
export interface DeviceRow {
  id: string;
  /** True when this statement created the row (a key seen for the first time). */
  inserted: boolean;
  public_key_pem: string;
  sign_counter: string;
  environment: AttestationEnvironment;
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
  /** Whether the device is counted as monthly active in every period `touch` was given (else false). */
  mad_counted?: boolean;
}

/** A device as `findByKey` reads it: its row, the row's version and whether its velocity window is over. */
export interface ReadDeviceRow extends DeviceRow {
  /** The row version (`xmin`): any later write to the row changes it. */
  version: string;
  /** The hourly velocity window has ended: the next touch starts a new one at 1. */
  velocity_window_expired: boolean;
}

/** What `refreshClean` needs beyond the device report: see there. */
export interface CleanRefresh {
  readonly subjectVerified: boolean;
  /** The verified assertion's counter. */
  readonly counter: number;
  /** `version` of the row the caller read and decided on. */
  readonly version: string;
  /** The velocity count the caller predicted from that row and scored. */
  readonly velocityCount: number;
  readonly riskScore: number;
  readonly madPeriods: readonly string[];
  /** The organization's plan, which decides the high-risk threshold the score must not exceed. */
  readonly plan: TierDefinition;
}

/** What `insertAdmitted` needs beyond the verified key: see there. */
export interface AdmittedNewDevice {
  /** The score of the device the key's row will be, which the admission rule admitted. */
  readonly riskScore: number;
  /** The organization's plan, which decides the high-risk threshold the score must not exceed. */
  readonly plan: TierDefinition;
  /** The webhook events publishing the new device may write (`DomainEvents.webhooksOnPublishing`). */
  readonly webhooks: readonly string[];
  /** The count as monthly active: the periods and the limit (`MadService.newDeviceCount`). */
  readonly count: { readonly billing: string; readonly calendar: string | null; readonly limit: number | null };
}

/** A device's risk signals after a failure was counted. */
export interface FailedDeviceRow {
  client_device_id: string;
  environment: AttestationEnvironment;
  jailbreak_detected: boolean;
  failure_count: number;
  counter_anomalies: number;
  is_blocked: boolean;
  device_model: string | null;
  os_version: string | null;
  attestations_this_hour: number;
}

/** What a device reports about itself with a validate or refresh; absent fields keep what is stored. */
export interface DeviceReport {
  deviceId?: string;
  subjectId?: string;
  deviceModel?: string;
  osVersion?: string;
  appVersion?: string;
  country?: string;
  jailbreakDetected?: boolean;
}

/** A verified App Attest key, as validate stores it. */
export interface AttestedKey {
  keyId: string;
  publicKeyPem: string;
  environment: AttestationEnvironment;
  receipt: Buffer;
  report: DeviceReport;
  subjectVerified: boolean;
  /** The platform that attested the key; App Attest's when not said. */
  platform?: 'ios' | 'android';
}

/** The stored facts a device event announces. */
export interface StoredDeviceFacts {
  client_device_id: string;
  risk_score: number;
  jailbreak_detected: boolean;
  device_model: string | null;
  os_version: string | null;
}

/** A recorded failure and what the device's history says around it. */
export interface RecordedFailure {
  /** The key's device in this app, when known (whether or not the failure was attributed to it). */
  stored: StoredDeviceFacts | null;
  /** Failures attributed to that device within the window, this one included; null without one. */
  recentFailures: number | null;
  /** Whether another app of the organization knows the key. */
  keyInOtherApps: boolean;
}

export interface FailureToRecord {
  appId: string;
  /** The device the failure counts against; null for a key not known or not attributed. */
  deviceId: string | null;
  keyId: string;
  eventType: 'attestation' | 'assertion';
  errorCode: string;
  riskScore: number | null;
  /** The window `recentFailures` counts over. */
  windowMinutes: number;
}

/** Per app, the attestation figures of the organization's dashboard. */
export interface AppDeviceTotals {
  total: number;
  successes: number;
  lastAt: Date | null;
  devices: number;
  avgRisk: number | null;
}

export interface DailyUsageRow {
  date: string;
  attestations: number;
  uniqueDevices: number;
  avgRiskScore: number | null;
}

export interface TopDeviceRow {
  key_id: string;
  attestation_count: number;
  risk_score: number;
  last_seen_at: Date;
  device_model: string | null;
}

export interface RecentFailureRow {
  created_at: Date;
  error_code: string | null;
  key_id: string;
}

/** The hourly velocity count a touch leaves: a new window starts at 1 once the current one is an hour old. */
const VELOCITY_AFTER_TOUCH = `CASE WHEN velocity_window_start < now() - interval '1 hour' THEN 1 ELSE velocity_count + 1 END`;

const DEVICE_COLUMNS = `id, public_key_pem, sign_counter, environment, client_device_id, subject_id, subject_verified, device_model,
  os_version, app_version, country, jailbreak_detected, attestation_count, failure_count, counter_anomalies,
  velocity_count, is_blocked, first_seen_at`;

/**
 * What a touch writes, for `touch` and `refreshClean` alike. Parameters: $2-$8 the report
 * (model, OS, app version, country, subject id, client device id, jailbreak), $9 whether it is an
 * attestation, $10 the new counter (null: unchanged), $11 whether a given subject id is verified.
 */
const TOUCH = `
         device_model = COALESCE($2, device_model), os_version = COALESCE($3, os_version),
         app_version = COALESCE($4, app_version), country = COALESCE(upper($5), country),
         subject_id = COALESCE($6, subject_id), client_device_id = COALESCE($7, client_device_id),
         subject_verified = CASE WHEN $6::text IS NULL THEN subject_verified ELSE $11::boolean END,
         jailbreak_detected = COALESCE($8, jailbreak_detected),
         attestation_count = attestation_count + CASE WHEN $9 THEN 1 ELSE 0 END,
         velocity_count = ${VELOCITY_AFTER_TOUCH},
         velocity_window_start = CASE WHEN velocity_window_start < now() - interval '1 hour' THEN now() ELSE velocity_window_start END,
         sign_counter = COALESCE($10, sign_counter),
         last_seen_at = now(), updated_at = now()`;

/**
 * The key's device as the attestation path reads it: the SQL function `device_by_key` (migration
 * DeviceByKey), which the challenge's use on refresh also reads in its statement, so the read has
 * one definition.
 */
const FIND_BY_KEY = preparedStatement(
  'devices_find_by_key',
  `SELECT ${DEVICE_COLUMNS}, false AS inserted, version, velocity_window_expired FROM device_by_key($1, $2, $3)`,
);

/** `refreshClean`'s statement: see there. */
const REFRESH_CLEAN = preparedStatement(
  'devices_refresh_clean',
  `WITH touched AS (
     UPDATE devices SET ${TOUCH}, risk_score = $16
      WHERE id = $1 AND organization_id = $12 AND xmin::text = $14 AND sign_counter < $10
        AND ${VELOCITY_AFTER_TOUCH} = $15 AND NOT COALESCE($8, jailbreak_detected)
        AND mad_device_counted($12, $13::date[], devices.id)
        AND $16 <= compliance_high_risk_threshold($12, $19::boolean, $20::int)
     RETURNING ${DEVICE_COLUMNS}
   ), recorded AS (
     INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, risk_score)
     SELECT $12, $17::uuid, id, $18::text, 'assertion', 'success', $16 FROM touched
   )
   SELECT ${DEVICE_COLUMNS}, false AS inserted, true AS mad_counted FROM touched`,
);

/** The columns a verified key's new row sets, for `upsertAttested` and `insertAdmitted`. */
const ATTESTED_COLUMNS = `organization_id, app_id, key_id, public_key_pem, sign_counter, environment, receipt,
  client_device_id, subject_id, device_model, os_version, app_version, country, jailbreak_detected,
  attestation_count, velocity_count, subject_verified, platform`;

/**
 * Their values, from `attestedParameters` ($1-$15: organization, app, key, public key, environment,
 * receipt, then the report, whether a subject is verified, and the platform).
 */
const ATTESTED_VALUES = `$1::uuid, $2::uuid, $3::text, $4::text, 0, $5::text, $6::bytea, COALESCE($7::text, ''),
  $8::text, $9::text, $10::text, $11::text, upper($12::text), COALESCE($13::boolean, false), 1, 1,
  $8::text IS NOT NULL AND $14::boolean, $15::text`;

/** `upsertAttested`'s statement. */
const UPSERT_ATTESTED = preparedStatement(
  'devices_upsert_attested',
  `INSERT INTO devices (${ATTESTED_COLUMNS})
   VALUES (${ATTESTED_VALUES})
   ON CONFLICT (app_id, key_id) DO UPDATE SET
     public_key_pem = EXCLUDED.public_key_pem, sign_counter = 0, environment = EXCLUDED.environment,
     receipt = EXCLUDED.receipt
   RETURNING ${DEVICE_COLUMNS}, (xmax = 0) AS inserted`,
);

/**
 * `insertAdmitted`'s statement: see there. $16 the score, $17-$18 the high-risk threshold's
 * inputs, $19 the webhook events a new device is published as, $20-$22 the count's periods and limit.
 */
const INSERT_ADMITTED = preparedStatement(
  'devices_insert_admitted',
  `WITH inserted AS (
     INSERT INTO devices (${ATTESTED_COLUMNS}, risk_score)
     SELECT ${ATTESTED_VALUES}, $16::int
      WHERE $16::int <= compliance_high_risk_threshold($1::uuid, $17::boolean, $18::int)
        AND NOT webhooks_listening($1::uuid, $19::text[])
        AND mad_has_room($1::uuid, $20::date, $22::int)
     ON CONFLICT (app_id, key_id) DO NOTHING
     RETURNING ${DEVICE_COLUMNS}
   ), counted AS (
     SELECT mad_count_new_device($1::uuid, $20::date, $21::date, inserted.id, $22::int) AS active_devices FROM inserted
   ), recorded AS (
     INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, risk_score)
     SELECT $1::uuid, $2::uuid, id, $3::text, 'attestation', 'success', $16::int FROM inserted
   )
   SELECT inserted.*, true AS inserted, true AS mad_counted, counted.active_devices
     FROM inserted CROSS JOIN counted`,
);

/** `touch`'s statement. */
const TOUCH_DEVICE = preparedStatement(
  'devices_touch',
  `UPDATE devices SET ${TOUCH}
    WHERE id = $1 AND organization_id = $12 AND ($10::bigint IS NULL OR sign_counter < $10)
   RETURNING ${DEVICE_COLUMNS}, false AS inserted,
             CASE WHEN $13::date[] IS NULL THEN false ELSE mad_device_counted($12, $13::date[], devices.id) END
               AS mad_counted`,
);

/** `recordSuccess`'s statement. */
const RECORD_SUCCESS = preparedStatement(
  'devices_record_success',
  `WITH scored AS (UPDATE devices SET risk_score = $6 WHERE id = $3 AND organization_id = $1)
   INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, risk_score)
   VALUES ($1, $2, $3, $4, $5, 'success', $6)`,
);

/**
 * The devices feature's tables, `devices` and `device_events`, as other features reach them: the
 * attestation path's writes and the reads of app statistics and risk alerts (the devices feature's
 * own services query them directly). Every method takes the organization id first and keeps to
 * it. Statements run in the open unit of work (on the pool outside one).
 */
@Injectable()
export class DevicesRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private get runner() {
    return this.uow.manager();
  }

  /** The key's device in the app, or null. */
  async findByKey(organizationId: OrganizationId, appId: string, keyId: string): Promise<ReadDeviceRow | null> {
    const rows = await queryPrepared<ReadDeviceRow>(this.runner, FIND_BY_KEY, [organizationId, appId, keyId]);
    return rows[0] ?? null;
  }

  /**
   * Stores a verified key: one upsert, which for a key already known replaces its public key and
   * resets its counter, then `touch` records the attestation (a second statement only then).
   */
  async upsertAttested(organizationId: OrganizationId, appId: string, key: AttestedKey): Promise<DeviceRow> {
    const report = key.report;
    const rows = await queryPrepared<DeviceRow>(
      this.runner,
      UPSERT_ATTESTED,
      attestedParameters(organizationId, appId, key),
    );
    const device = rows[0];
    if (device.inserted) return device;
    const touched = await this.touch(organizationId, device.id, report, {
      attested: true,
      subjectVerified: key.subjectVerified,
    });
    return { ...touched!, inserted: false };
  }

  /**
   * A verified key new to the app, admitted, in one autocommitted statement (decision 0078): its
   * row (with its score), its count as monthly active (the usage feature's `mad_count_new_device`)
   * and its success event. It applies only when the key has no row in the app, the score is no
   * higher than the organization's high-risk threshold, and no active endpoint of the organization
   * listens to `admitted.webhooks` (the webhooks feature's `webhooks_listening`): then publishing the
   * device's events would write nothing; and the billing period's count is below the plan's limit
   * (the usage feature's `mad_has_room`). Otherwise it changes nothing and answers null. A count
   * that would still pass the limit (new devices racing for the last places) makes the usage
   * function raise, undoing the statement (the caller checks `isMadLimitReached`). The answer carries `active_devices`, the billing period's count after it.
   */
  async insertAdmitted(
    organizationId: OrganizationId,
    appId: string,
    key: AttestedKey,
    admitted: AdmittedNewDevice,
  ): Promise<(DeviceRow & { active_devices: number }) | null> {
    const threshold = highRiskThresholdInputs(admitted.plan);
    const rows = await queryPrepared<DeviceRow & { active_devices: number }>(this.runner, INSERT_ADMITTED, [
      ...attestedParameters(organizationId, appId, key),
      admitted.riskScore,
      threshold.complianceRules,
      threshold.fallback,
      admitted.webhooks,
      admitted.count.billing,
      admitted.count.calendar,
      admitted.count.limit,
    ]);
    return rows[0] ?? null;
  }

  /**
   * Profile fields the device reports, the attestation count (when `attested`) and the hourly
   * velocity window; with `advanceCounterTo`, also the assertion counter, only if it moves
   * forward (null otherwise: of two concurrent refreshes with one counter, one wins). With
   * `madPeriods`, the same statement answers whether the device is already counted as monthly
   * active in those periods (`mad_counted`, through the usage feature's SQL function `mad_device_counted`).
   */
  async touch(
    organizationId: OrganizationId,
    deviceId: string,
    report: DeviceReport,
    options: {
      attested: boolean;
      subjectVerified: boolean;
      advanceCounterTo?: number | null;
      madPeriods?: readonly string[];
    },
  ): Promise<DeviceRow | null> {
    const rows = await queryPrepared<DeviceRow>(this.runner, TOUCH_DEVICE, [
      ...touchParameters(deviceId, report, options.attested, options.advanceCounterTo ?? null, options.subjectVerified),
      organizationId,
      options.madPeriods ?? null,
    ]);
    return rows[0] ?? null;
  }

  /**
   * A refresh of an admitted device that is already counted this period, in one autocommitted
   * statement: the touch (as `touch` with `advanceCounterTo`), the risk score and the success
   * event. It applies only to the row the caller decided on: the same version (`xmin`; a write by
   * anyone since changes it), a counter below the new one, the velocity count the caller scored,
   * no jailbreak after the report, the device counted as monthly active in `madPeriods`, and a
   * score no higher than the organization's high-risk threshold (so nothing is to be announced).
   * Otherwise it changes nothing and answers null, and the caller takes the transactional path,
   * which decides again from the row as it is then.
   */
  async refreshClean(
    organizationId: OrganizationId,
    appId: string,
    deviceId: string,
    keyId: string,
    report: DeviceReport,
    refresh: CleanRefresh,
  ): Promise<DeviceRow | null> {
    const threshold = highRiskThresholdInputs(refresh.plan);
    const rows = await queryPrepared<DeviceRow>(this.runner, REFRESH_CLEAN, [
      ...touchParameters(deviceId, report, false, refresh.counter, refresh.subjectVerified),
      organizationId,
      refresh.madPeriods,
      refresh.version,
      refresh.velocityCount,
      refresh.riskScore,
      appId,
      keyId,
      threshold.complianceRules,
      threshold.fallback,
    ]);
    return rows[0] ?? null;
  }

  /** Who uses the device changed: an event in its history. */
  async recordSubjectChanged(
    organizationId: OrganizationId,
    appId: string,
    deviceId: string,
    keyId: string,
  ): Promise<void> {
    await this.runner.query(
      `INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result)
       VALUES ($1, $2, $3, $4, 'subject_changed', 'success')`,
      [organizationId, appId, deviceId, keyId],
    );
  }

  /** One round trip: the device's new score and its success event. */
  async recordSuccess(
    organizationId: OrganizationId,
    appId: string,
    deviceId: string,
    keyId: string,
    eventType: 'attestation' | 'assertion',
    riskScore: number,
  ): Promise<void> {
    await queryPrepared(this.runner, RECORD_SUCCESS, [organizationId, appId, deviceId, keyId, eventType, riskScore]);
  }

  /** A debug-token exchange: a success event of the debug subject, which has no device row. */
  async recordDebugExchange(organizationId: OrganizationId, appId: string, subjectKeyId: string): Promise<void> {
    await this.runner.query(
      `INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, risk_score, debug)
       VALUES ($1, $2, NULL, $3, 'attestation', 'success', 0, true)`,
      [organizationId, appId, subjectKeyId],
    );
  }

  /** Counts a failure against the device (and a counter anomaly for `counter_not_increasing`). */
  async countFailure(
    organizationId: OrganizationId,
    deviceId: string,
    errorCode: string,
  ): Promise<FailedDeviceRow | null> {
    const [device] = await queryRows<FailedDeviceRow>(
      this.runner,
      `UPDATE devices SET failure_count = failure_count + 1,
              counter_anomalies = counter_anomalies + CASE WHEN $2 = 'counter_not_increasing' THEN 1 ELSE 0 END
        WHERE id = $1 AND organization_id = $3
      RETURNING client_device_id, environment, jailbreak_detected, failure_count, counter_anomalies, is_blocked,
                device_model, os_version,
                CASE WHEN velocity_window_start >= now() - interval '1 hour' THEN velocity_count ELSE 0 END
                  AS attestations_this_hour`,
      [deviceId, errorCode, organizationId],
    );
    return device ?? null;
  }

  /**
   * The failure event, answering in the same round trip what the device's history says around it:
   * the key's stored device, its failures in the window (this one included) and whether another
   * app of the organization knows the key. Indexed lookups only. A failure counted against a
   * device also stores the event's score as the device's (`risk_score`), so the device list and
   * details show the score its latest attempt was given, admitted or refused.
   */
  async recordFailure(organizationId: OrganizationId, failure: FailureToRecord): Promise<RecordedFailure> {
    const [row] = await queryRows<
      StoredDeviceFacts & { known: boolean; recent_failures: number | null; key_in_other_apps: boolean }
    >(
      this.runner,
      `WITH recorded AS (
         INSERT INTO device_events (organization_id, app_id, device_id, key_id, event_type, result, error_code, risk_score)
         VALUES ($1, $2, $3, $4, $5, 'failure', $6, $7)
       ), scored AS (
         UPDATE devices SET risk_score = $7, updated_at = now()
          WHERE id = $3 AND organization_id = $1 AND $7::int IS NOT NULL
       ), stored AS (
         SELECT id, client_device_id, risk_score, jailbreak_detected, device_model, os_version
           FROM devices WHERE app_id = $2 AND key_id = $4 AND organization_id = $1
       )
       SELECT s.id IS NOT NULL AS known, s.client_device_id, s.risk_score, s.jailbreak_detected, s.device_model,
              s.os_version,
              CASE WHEN s.id IS NOT NULL THEN
                (SELECT count(*)::int FROM device_events e
                  WHERE e.device_id = s.id AND e.result = 'failure' AND e.created_at > now() - make_interval(mins => $8))
                + CASE WHEN $3::uuid IS NULL THEN 0 ELSE 1 END
              END AS recent_failures,
              EXISTS (SELECT 1 FROM devices o WHERE o.organization_id = $1 AND o.key_id = $4 AND o.app_id <> $2)
                AS key_in_other_apps
         FROM (SELECT 1) AS one LEFT JOIN stored s ON true`,
      [
        organizationId,
        failure.appId,
        failure.deviceId,
        failure.keyId,
        failure.eventType,
        failure.errorCode,
        failure.riskScore,
        failure.windowMinutes,
      ],
    );
    return {
      stored: row.known
        ? {
            client_device_id: row.client_device_id,
            risk_score: row.risk_score,
            jailbreak_detected: row.jailbreak_detected,
            device_model: row.device_model,
            os_version: row.os_version,
          }
        : null,
      recentFailures: row.recent_failures,
      keyInOtherApps: row.key_in_other_apps,
    };
  }

  /** The stored facts of the key's device in the app, or null. */
  async storedFacts(organizationId: OrganizationId, appId: string, keyId: string): Promise<StoredDeviceFacts | null> {
    const [row] = await queryRows<StoredDeviceFacts>(
      this.runner,
      `SELECT client_device_id, risk_score, jailbreak_detected, device_model, os_version
         FROM devices WHERE app_id = $2 AND key_id = $3 AND organization_id = $1`,
      [organizationId, appId, keyId],
    );
    return row ?? null;
  }

  /** Failed attempts of one key in one app within the last `windowMinutes`. */
  failuresOfKey(organizationId: OrganizationId, appId: string, keyId: string, windowMinutes: number): Promise<number> {
    return this.count(
      `SELECT count(*)::int AS observed FROM device_events
        WHERE app_id = $2 AND key_id = $3 AND result = 'failure' AND created_at > now() - make_interval(mins => $4)
          AND organization_id = $1`,
      [organizationId, appId, keyId, windowMinutes],
    );
  }

  /** Failed attempts in one app within the last `windowMinutes`. */
  failuresOfApp(organizationId: OrganizationId, appId: string, windowMinutes: number): Promise<number> {
    return this.count(
      `SELECT count(*)::int AS observed FROM device_events
        WHERE app_id = $2 AND result = 'failure' AND created_at > now() - make_interval(mins => $3)
          AND organization_id = $1`,
      [organizationId, appId, windowMinutes],
    );
  }

  /** Devices (of one app, or of the organization) whose first successful attestation is in the window. */
  newDevices(organizationId: OrganizationId, appId: string | null, windowMinutes: number): Promise<number> {
    return this.count(
      `SELECT count(DISTINCT e.device_id)::int AS observed
         FROM device_events e JOIN devices d ON d.id = e.device_id
        WHERE e.organization_id = $1 AND ($2::uuid IS NULL OR e.app_id = $2::uuid)
          AND e.created_at > now() - make_interval(mins => $3) AND e.result = 'success'
          AND e.event_type = 'attestation' AND d.first_seen_at > now() - make_interval(mins => $3)`,
      [organizationId, appId, windowMinutes],
    );
  }

  /** Per app of the organization: attestations (debug exchanges left out), successes, devices, average risk. */
  async totalsByApp(organizationId: OrganizationId): Promise<Map<string, AppDeviceTotals>> {
    const rows = await queryRows<{
      app_id: string;
      total: string | null;
      successes: string | null;
      last_at: Date | null;
      devices: string | null;
      avg_risk: string | null;
    }>(
      this.runner,
      `SELECT COALESCE(e.app_id, d.app_id) AS app_id, e.total, e.successes, e.last_at, d.devices, d.avg_risk
         FROM (SELECT app_id, count(*) AS total, count(*) FILTER (WHERE result = 'success') AS successes,
                      max(created_at) AS last_at
                 FROM device_events WHERE organization_id = $1 AND NOT debug GROUP BY app_id) e
         FULL JOIN (SELECT app_id, count(*) AS devices, avg(risk_score) AS avg_risk
                      FROM devices WHERE organization_id = $1 GROUP BY app_id) d ON d.app_id = e.app_id`,
      [organizationId],
    );
    return new Map(
      rows.map((row) => [
        row.app_id,
        {
          total: Number(row.total ?? 0),
          successes: Number(row.successes ?? 0),
          lastAt: row.last_at,
          devices: Number(row.devices ?? 0),
          avgRisk: row.avg_risk === null ? null : Number(row.avg_risk),
        },
      ]),
    );
  }

  /** Per UTC day of the last `days` days, newest first: attestations, distinct keys, average risk. */
  async dailyUsage(organizationId: OrganizationId, appId: string, days: number): Promise<DailyUsageRow[]> {
    const rows = await queryRows<{
      date: string;
      attestations: string;
      unique_devices: string;
      avg_risk_score: string | null;
    }>(
      this.runner,
      `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'utc'), 'YYYY-MM-DD') AS date,
              count(*) AS attestations, count(DISTINCT key_id) AS unique_devices, avg(risk_score) AS avg_risk_score
         FROM device_events
        WHERE app_id = $2 AND created_at >= now() - make_interval(days => $3) AND NOT debug AND organization_id = $1
        GROUP BY 1 ORDER BY 1 DESC`,
      [organizationId, appId, days],
    );
    return rows.map((row) => ({
      date: row.date,
      attestations: Number(row.attestations),
      uniqueDevices: Number(row.unique_devices),
      avgRiskScore: row.avg_risk_score === null ? null : Number(row.avg_risk_score),
    }));
  }

  /** The app's devices that attested most. */
  topDevices(organizationId: OrganizationId, appId: string, limit: number): Promise<TopDeviceRow[]> {
    return queryRows<TopDeviceRow>(
      this.runner,
      `SELECT key_id, attestation_count, risk_score, last_seen_at, device_model
         FROM devices WHERE app_id = $2 AND organization_id = $1
        ORDER BY attestation_count DESC, last_seen_at DESC LIMIT $3`,
      [organizationId, appId, limit],
    );
  }

  /** The app's latest failures. */
  recentFailures(organizationId: OrganizationId, appId: string, limit: number): Promise<RecentFailureRow[]> {
    return queryRows<RecentFailureRow>(
      this.runner,
      `SELECT created_at, error_code, key_id FROM device_events
        WHERE app_id = $2 AND result = 'failure' AND organization_id = $1 ORDER BY created_at DESC LIMIT $3`,
      [organizationId, appId, limit],
    );
  }

  /**
   * Failed attestation events by code over the last `days` days, of an app or of one device (its
   * key id in that app). One grouped query on the `(app_id, created_at)` failure index; debug
   * exchanges never fail into it.
   */
  async failureTrend(
    organizationId: OrganizationId,
    scope: { appId: string; keyId?: string; days: number },
  ): Promise<FailureTrend> {
    const rows = await queryRows<FailureTrendRow>(
      this.runner,
      `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'utc'), 'YYYY-MM-DD') AS date,
              COALESCE(error_code, 'unknown') AS code, count(*)::int AS count, max(created_at) AS last_seen
         FROM device_events
        WHERE app_id = $2 AND result = 'failure' AND created_at >= now() - make_interval(days => $3)
          AND ($4::text IS NULL OR key_id = $4::text) AND organization_id = $1
        GROUP BY 1, 2
        ORDER BY 1 DESC, 3 DESC, 2`,
      [organizationId, scope.appId, scope.days, scope.keyId ?? null],
    );
    return toFailureTrend(rows);
  }

  /** The most recently seen device of the key (in `appId` when given), for its details; null when none. */
  async profile(organizationId: OrganizationId, keyId: string, appId: string | null): Promise<DeviceProfileRow | null> {
    const rows = await this.runner.query<DeviceProfileRow[]>(
      `SELECT id, app_id, key_id, platform, device_model, os_version, app_version, country, risk_score, jailbreak_detected,
              attestation_count, is_blocked, first_seen_at, last_seen_at, updated_at
         FROM devices
        WHERE organization_id = $1 AND key_id = $2 AND ($3::uuid IS NULL OR app_id = $3::uuid)
        ORDER BY last_seen_at DESC, id DESC LIMIT 1`,
      [organizationId, keyId, appId],
    );
    return rows[0] ?? null;
  }

  /** The key's latest events within the app (failures recorded before the key was known included). */
  recentEventsOfKey(
    organizationId: OrganizationId,
    appId: string,
    keyId: string,
    limit: number,
  ): Promise<Pick<EventRow, 'event_type' | 'result' | 'risk_score' | 'created_at'>[]> {
    return this.runner.query(
      `SELECT event_type, result, risk_score, created_at FROM device_events
        WHERE organization_id = $1 AND app_id = $2 AND key_id = $3
        ORDER BY created_at DESC, id DESC LIMIT $4`,
      [organizationId, appId, keyId, limit],
    );
  }

  /** One page of the organization's device events, newest first, and how many match. */
  async events(
    organizationId: OrganizationId,
    filter: {
      appId: string | null;
      keyId: string | null;
      result: string | null;
      type: string | null;
      from: Date | null;
      to: Date | null;
    },
    window: { limit: number; offset: number },
  ): Promise<{ rows: EventRow[]; total: number }> {
    const where = `organization_id = $1
       AND ($2::uuid IS NULL OR app_id = $2::uuid)
       AND ($3::text IS NULL OR key_id = $3::text)
       AND ($4::text IS NULL OR result = $4::text)
       AND ($5::text IS NULL OR event_type = $5::text)
       AND ($6::timestamptz IS NULL OR created_at >= $6::timestamptz)
       AND ($7::timestamptz IS NULL OR created_at <= $7::timestamptz)`;
    const params = [organizationId, filter.appId, filter.keyId, filter.result, filter.type, filter.from, filter.to];
    const [rows, counted] = await Promise.all([
      this.runner.query<EventRow[]>(
        `SELECT id, app_id, key_id, event_type, result, error_code, risk_score, debug, created_at
           FROM device_events WHERE ${where}
          ORDER BY created_at DESC, id DESC LIMIT $8 OFFSET $9`,
        [...params, window.limit, window.offset],
      ),
      this.runner.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM device_events WHERE ${where}`, params),
    ]);
    return { rows, total: counted[0].total };
  }

  /** One page of the organization's devices, most recently seen first, and how many match. */
  async page(
    organizationId: OrganizationId,
    filter: { appId: string | null; search: string | null; minRisk: number | null; platform: DevicePlatform | null },
    window: { limit: number; offset: number },
  ): Promise<{ rows: DeviceItemRow[]; total: number }> {
    const where = `organization_id = $1
       AND ($2::uuid IS NULL OR app_id = $2::uuid)
       AND ($3::text IS NULL OR strpos(lower(key_id), $3) > 0 OR strpos(lower(coalesce(device_model, '')), $3) > 0
            OR strpos(lower(client_device_id), $3) > 0)
       AND ($4::int IS NULL OR risk_score >= $4::int)
       AND ($5::text IS NULL OR platform = $5::text)`;
    const params = [organizationId, filter.appId, filter.search, filter.minRisk, filter.platform];
    const [rows, counted] = await Promise.all([
      this.runner.query<DeviceItemRow[]>(
        `SELECT ${DEVICE_ITEM_COLUMNS} FROM devices WHERE ${where}
          ORDER BY last_seen_at DESC, id DESC LIMIT $6 OFFSET $7`,
        [...params, window.limit, window.offset],
      ),
      this.runner.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM devices WHERE ${where}`, params),
    ]);
    return { rows, total: counted[0].total };
  }

  /** The key's devices in every app of the organization, most recently seen first, locked FOR UPDATE. */
  lockRiskSignalsByKey(organizationId: OrganizationId, keyId: string): Promise<RiskSignalRow[]> {
    return this.runner.query<RiskSignalRow[]>(
      `SELECT id, environment, jailbreak_detected, failure_count, counter_anomalies,
              CASE WHEN velocity_window_start >= now() - interval '1 hour' THEN velocity_count ELSE 0 END
                AS attestations_this_hour
         FROM devices WHERE organization_id = $1 AND key_id = $2 ORDER BY last_seen_at DESC FOR UPDATE`,
      [organizationId, keyId],
    );
  }

  /** Blocks or unblocks the device with its new score: the device as listed, or null. */
  async setBlocked(
    organizationId: OrganizationId,
    deviceId: string,
    blocked: boolean,
    reason: string | null,
    riskScore: number,
  ): Promise<DeviceItemRow | null> {
    const rows = await queryRows<DeviceItemRow>(
      this.runner,
      `UPDATE devices SET is_blocked = $2, blocked_reason = $3, risk_score = $4, updated_at = now()
        WHERE id = $1 AND organization_id = $5 RETURNING ${DEVICE_ITEM_COLUMNS}`,
      [deviceId, blocked, reason, riskScore, organizationId],
    );
    return rows[0] ?? null;
  }

  /** Whether the key's device in the app is blocked, read now (any organization: the deny set's exact check). */
  async isBlocked(appId: AppId, keyId: string): Promise<boolean> {
    const rows: unknown[] = await this.runner.query(
      `SELECT 1 FROM devices WHERE app_id = $1 AND key_id = $2 AND is_blocked`,
      [appId, keyId],
    );
    return rows.length > 0;
  }

  /**
   * Devices blocked now (first read, `since` null), or whose block changed since `since`
   * (`block_xid`, set by a trigger), across every organization: the deny set's part devices own
   * (decision 0065), with the cursor of the next read.
   */
  async blockChanges(since: string | null): Promise<DenySetDelta<BlockChange>> {
    const { cursor, rows } = await readChanges<{ app_id: string; key_id: string; is_blocked: boolean }>(
      this.runner,
      {
        columns: 't.app_id, t.key_id, t.is_blocked',
        table: 'devices t',
        whole: 't.is_blocked',
        changedSince: (cursor) => `t.block_xid >= ${cursor}::xid8`,
        key: 'key_id',
      },
      since,
    );
    return { cursor, rows: rows.map((row) => ({ appId: row.app_id, keyId: row.key_id, blocked: row.is_blocked })) };
  }

  private async count(sql: string, parameters: unknown[]): Promise<number> {
    const [row] = await queryRows<{ observed: number }>(this.runner, sql, parameters);
    return row?.observed ?? 0;
  }
}

/** The parameters $1-$11 of `TOUCH`. */
function touchParameters(
  deviceId: string,
  report: DeviceReport,
  attested: boolean,
  advanceCounterTo: number | null,
  subjectVerified: boolean,
): unknown[] {
  return [
    deviceId,
    report.deviceModel ?? null,
    report.osVersion ?? null,
    report.appVersion ?? null,
    report.country ?? null,
    report.subjectId ?? null,
    report.deviceId ?? null,
    report.jailbreakDetected ?? null,
    attested,
    advanceCounterTo,
    subjectVerified,
  ];
}

/** The parameters of `ATTESTED_VALUES`. */
function attestedParameters(organizationId: OrganizationId, appId: string, key: AttestedKey): unknown[] {
  const report = key.report;
  return [
    organizationId,
    appId,
    key.keyId,
    key.publicKeyPem,
    key.environment,
    key.receipt,
    report.deviceId ?? null,
    report.subjectId ?? null,
    report.deviceModel ?? null,
    report.osVersion ?? null,
    report.appVersion ?? null,
    report.country ?? null,
    report.jailbreakDetected ?? null,
    key.subjectVerified,
    key.platform ?? 'ios',
  ];
}
