import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { complianceStatus } from '../compliance/compliance-checks.js';
import { complianceSettingsOf } from '../compliance/compliance-settings.js';
import { PlanService } from '../organizations/plan.service.js';
import { ValidationFailedException, notFound } from '../common/errors/app-exception.js';
import type { DeviceDetailsQuery, ListEventsQuery } from './devices.dto.js';
import { DevicesRepository } from './devices.repository.js';
import { pageEnvelope, pageWindow } from '../common/pagination.js';

/** How many events the device details show. */
export const RECENT_EVENTS = 20;

interface DeviceProfileRow {
  id: string;
  app_id: string;
  key_id: string;
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

interface EventRow {
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

/**
 * Read models over the devices and device events the attestation endpoints record, for the
 * dashboard and for server-to-server API key callers.
 */
@Injectable()
export class DeviceAnalyticsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly devices: DevicesRepository,
    private readonly plans: PlanService,
  ) {}

  /**
   * The interface document's Device details. With the key id known in several apps, the most
   * recently seen device answers unless `appId` picks one. `complianceStatus` applies the
   * organization's compliance settings in force (docs/risk.md).
   */
  async deviceDetails(auth: OrgAuthContext, keyId: string, query: DeviceDetailsQuery) {
    const devices: DeviceProfileRow[] = await this.dataSource.query(
      `SELECT id, app_id, key_id, device_model, os_version, app_version, country, risk_score, jailbreak_detected,
              attestation_count, is_blocked, first_seen_at, last_seen_at, updated_at
         FROM devices
        WHERE organization_id = $1 AND key_id = $2 AND ($3::uuid IS NULL OR app_id = $3::uuid)
        ORDER BY last_seen_at DESC, id DESC LIMIT 1`,
      [auth.organizationId, keyId, query.appId ?? null],
    );
    const device = devices[0];
    if (!device) throw notFound('Device');
    // Events by key id within the device's app: failures recorded before the key was known count too.
    const events: Pick<EventRow, 'event_type' | 'result' | 'risk_score' | 'created_at'>[] = await this.dataSource.query(
      `SELECT event_type, result, risk_score, created_at FROM device_events
        WHERE organization_id = $1 AND app_id = $2 AND key_id = $3
        ORDER BY created_at DESC, id DESC LIMIT ${RECENT_EVENTS}`,
      [auth.organizationId, device.app_id, keyId],
    );
    const [compliance, failures] = await Promise.all([
      this.plans
        .planOf(auth.organizationId)
        .then((plan) => complianceSettingsOf(this.dataSource, auth.organizationId, plan)),
      this.devices.failureTrend(auth.organizationId, { appId: device.app_id, keyId, days: query.days ?? 30 }),
    ]);
    const times = [device.updated_at, device.last_seen_at, events[0]?.created_at].filter(
      (time): time is Date => !!time,
    );
    return {
      keyId: device.key_id,
      deviceProfile: {
        deviceModel: device.device_model,
        osVersion: device.os_version,
        appVersion: device.app_version,
        riskScore: device.risk_score,
        jailbreakDetected: device.jailbreak_detected,
        attestationCount: device.attestation_count,
        firstSeenAt: device.first_seen_at,
        lastSeenAt: device.last_seen_at,
      },
      recentEvents: events.map((event) => ({
        type: event.event_type,
        result: event.result,
        riskScore: event.risk_score,
        timestamp: event.created_at,
      })),
      complianceStatus: complianceStatus(compliance, {
        riskScore: device.risk_score,
        osVersion: device.os_version,
        appVersion: device.app_version,
        jailbreakDetected: device.jailbreak_detected,
        country: device.country,
        isBlocked: device.is_blocked,
      }),
      lastUpdated: new Date(Math.max(...times.map((time) => time.getTime()))),
      ...failures,
    };
  }

  /** Device events, newest first, as `data` + `meta`. */
  async events(auth: OrgAuthContext, query: ListEventsQuery) {
    const from = query.from ? new Date(query.from) : null;
    const to = query.to ? new Date(query.to) : null;
    if (from && to && from > to) {
      throw new ValidationFailedException([{ field: 'to', message: 'to must not be before from' }]);
    }
    const filter = `organization_id = $1
       AND ($2::uuid IS NULL OR app_id = $2::uuid)
       AND ($3::text IS NULL OR key_id = $3::text)
       AND ($4::text IS NULL OR result = $4::text)
       AND ($5::text IS NULL OR event_type = $5::text)
       AND ($6::timestamptz IS NULL OR created_at >= $6::timestamptz)
       AND ($7::timestamptz IS NULL OR created_at <= $7::timestamptz)`;
    const params = [
      auth.organizationId,
      query.appId ?? null,
      query.keyId ?? null,
      query.result ?? null,
      query.type ?? null,
      from,
      to,
    ];
    const { limit, offset } = pageWindow(query);
    const [rows, counted] = await Promise.all([
      this.dataSource.query<EventRow[]>(
        `SELECT id, app_id, key_id, event_type, result, error_code, risk_score, debug, created_at
           FROM device_events WHERE ${filter}
          ORDER BY created_at DESC, id DESC LIMIT $8 OFFSET $9`,
        [...params, limit, offset],
      ),
      this.dataSource.query<{ total: number }[]>(
        `SELECT count(*)::int AS total FROM device_events WHERE ${filter}`,
        params,
      ),
    ]);
    return pageEnvelope(
      'data-meta',
      query,
      rows.map((row) => ({
        id: row.id,
        appId: row.app_id,
        keyId: row.key_id,
        type: row.event_type,
        result: row.result,
        errorCode: row.error_code,
        riskScore: row.risk_score,
        debug: row.debug,
        createdAt: row.created_at,
      })),
      counted[0].total,
    );
  }
}
