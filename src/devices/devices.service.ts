import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import type { ListDevicesQuery } from './devices.dto.js';
import { scoreStoredDevice } from './risk-score.js';
import { DenySet } from './deny-set.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { DevicesRepository, type DeviceItemRow } from './devices.repository.js';
import { TokenRevocationsRepository } from './token-revocations.repository.js';

export type { DeviceItemRow };
import { pageEnvelope, pageWindow } from '../common/pagination.js';

/** An attested device. */
export interface DeviceResponse {
  /** The App Attest key id, standard base64: the device's identity here. */
  keyId: string;
  appId: string;
  /** The platform that attested the device: App Attest (`ios`) or Play Integrity (`android`). */
  platform: DeviceItemRow['platform'];
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
    platform: row.platform,
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

@Injectable()
export class DevicesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly devices: DevicesRepository,
    private readonly revocations: TokenRevocationsRepository,
    private readonly audit: AuditService,
    private readonly denySet: DenySet,
  ) {}

  async list(auth: OrgAuthContext, query: ListDevicesQuery) {
    const search = query.search ? query.search.toLowerCase() : null;
    const { limit, offset } = pageWindow(query);
    const { rows, total } = await this.devices.page(
      auth.organizationId,
      { appId: query.appId ?? null, search, minRisk: query.minRisk ?? null, platform: query.platform ?? null },
      { limit, offset },
    );
    return pageEnvelope('metadata', query, rows.map(toDeviceItem), total);
  }

  /**
   * Blocks or unblocks every device row of the key in the caller's organization, with its audit
   * entry. The stored risk score follows (`blocked` scores 100; unblocking rescores the device's
   * current signals). A blocked key's refresh gets 401 `reattest_required`, its validate 403.
   */
  async setBlocked(auth: OrgAuthContext, keyId: string, blocked: boolean, reason: string | null) {
    const result = await this.uow.run(async () => {
      const devices = await this.devices.lockRiskSignalsByKey(auth.organizationId, keyId);
      if (!devices.length) throw notFound('Device');
      const updated: DeviceItemRow[] = [];
      for (const device of devices) {
        const risk = scoreStoredDevice(device, device.attestations_this_hour, blocked);
        const row = await this.devices.setBlocked(
          auth.organizationId,
          device.id,
          blocked,
          blocked ? reason : null,
          risk.score,
        );
        if (row) updated.push(row);
      }
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: blocked ? 'device.blocked' : 'device.unblocked',
        resourceType: 'device',
        resourceId: keyId,
        metadata: { keyId, appIds: updated.map((row) => row.app_id), ...(blocked ? { reason } : {}) },
      });
      await this.revocations.announce({ kind: 'device', appIds: updated.map((row) => row.app_id), keyId, blocked });
      return { keyId, isBlocked: blocked, blockedReason: blocked ? reason : null, devices: updated.map(toDeviceItem) };
    });
    // Committed: the tokens the device holds stop (or start) working here at once.
    for (const device of result.devices) this.denySet.note(device.appId, keyId, blocked);
    return result;
  }
}
