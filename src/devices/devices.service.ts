import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import type { ListDevicesQuery } from './devices.dto.js';
import { scoreStoredDevice } from './risk-score.js';
import { announceRevocation, DenySet } from './deny-set.js';
import { pageEnvelope, pageWindow } from '../common/pagination.js';

/** The columns of a device list item, as `toDeviceItem` reads them. */
export const DEVICE_ITEM_COLUMNS = `key_id, app_id, client_device_id, device_model, os_version, app_version, country,
  risk_score, jailbreak_detected, attestation_count, environment, is_blocked, blocked_reason, first_seen_at, last_seen_at`;

export interface DeviceItemRow {
  key_id: string;
  app_id: string;
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

/** An attested device. */
export interface DeviceResponse {
  /** The App Attest key id, standard base64: the device's identity here. */
  keyId: string;
  appId: string;
  deviceId: string;
  deviceModel: string | null;
  osVersion: string | null;
  appVersion: string | null;
  country: string | null;
  riskScore: number;
  jailbreakDetected: boolean;
  attestationCount: number;
  environment: DeviceItemRow['environment'];
  isBlocked: boolean;
  blockedReason: string | null;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

export function toDeviceItem(row: DeviceItemRow): DeviceResponse {
  return {
    keyId: row.key_id,
    appId: row.app_id,
    deviceId: row.client_device_id,
    deviceModel: row.device_model,
    osVersion: row.os_version,
    appVersion: row.app_version,
    country: row.country,
    riskScore: row.risk_score,
    jailbreakDetected: row.jailbreak_detected,
    attestationCount: row.attestation_count,
    environment: row.environment,
    isBlocked: row.is_blocked,
    blockedReason: row.blocked_reason,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
  };
}

interface RiskSignalRow {
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
@Injectable()
export class DevicesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly denySet: DenySet,
  ) {}

  async list(auth: OrgAuthContext, query: ListDevicesQuery) {
    const search = query.search ? query.search.toLowerCase() : null;
    const filter = `organization_id = $1
       AND ($2::uuid IS NULL OR app_id = $2::uuid)
       AND ($3::text IS NULL OR strpos(lower(key_id), $3) > 0 OR strpos(lower(coalesce(device_model, '')), $3) > 0
            OR strpos(lower(client_device_id), $3) > 0)
       AND ($4::int IS NULL OR risk_score >= $4::int)`;
    const params = [auth.organizationId, query.appId ?? null, search, query.minRisk ?? null];
    const { limit, offset } = pageWindow(query);
    const [rows, counted] = await Promise.all([
      this.dataSource.query<DeviceItemRow[]>(
        `SELECT ${DEVICE_ITEM_COLUMNS} FROM devices WHERE ${filter}
          ORDER BY last_seen_at DESC, id DESC LIMIT $5 OFFSET $6`,
        [...params, limit, offset],
      ),
      this.dataSource.query<{ total: number }[]>(`SELECT count(*)::int AS total FROM devices WHERE ${filter}`, params),
    ]);
    return pageEnvelope('metadata', query, rows.map(toDeviceItem), counted[0].total);
  }

  /**
   * Blocks or unblocks every device row of the key in the caller's organization, with its audit
   * entry. The stored risk score follows (`blocked` scores 100; unblocking rescores the device's
   * current signals). A blocked key's refresh gets 401 `reattest_required`, its validate 403.
   */
  async setBlocked(auth: OrgAuthContext, keyId: string, blocked: boolean, reason: string | null) {
    const result = await this.dataSource.transaction(async (manager) => {
      const devices: RiskSignalRow[] = await manager.query(
        `SELECT id, environment, jailbreak_detected, failure_count, counter_anomalies,
                CASE WHEN velocity_window_start >= now() - interval '1 hour' THEN velocity_count ELSE 0 END
                  AS attestations_this_hour
           FROM devices WHERE organization_id = $1 AND key_id = $2 ORDER BY last_seen_at DESC FOR UPDATE`,
        [auth.organizationId, keyId],
      );
      if (!devices.length) throw notFound('Device');
      const updated: DeviceItemRow[] = [];
      for (const device of devices) {
        const risk = scoreStoredDevice(device, device.attestations_this_hour, blocked);
        // TypeORM answers an UPDATE on PostgreSQL with [rows, affectedCount].
        const [rows]: [DeviceItemRow[], number] = await manager.query(
          `UPDATE devices SET is_blocked = $2, blocked_reason = $3, risk_score = $4, updated_at = now()
            WHERE id = $1 RETURNING ${DEVICE_ITEM_COLUMNS}`,
          [device.id, blocked, blocked ? reason : null, risk.score],
        );
        updated.push(...rows);
      }
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: blocked ? 'device.blocked' : 'device.unblocked',
          resourceType: 'device',
          resourceId: keyId,
          metadata: { keyId, appIds: updated.map((row) => row.app_id), ...(blocked ? { reason } : {}) },
        },
        manager,
      );
      await announceRevocation(manager, { kind: 'device', appIds: updated.map((row) => row.app_id), keyId, blocked });
      return { keyId, isBlocked: blocked, blockedReason: blocked ? reason : null, devices: updated.map(toDeviceItem) };
    });
    // Committed: the tokens the device holds stop (or start) working here at once.
    for (const device of result.devices) this.denySet.note(device.appId, keyId, blocked);
    return result;
  }
}
