import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { complianceStatus } from '../compliance/compliance-checks.js';
import { ComplianceService } from '../compliance/compliance.service.js';
import { PlanService } from '../organizations/plan.service.js';
import { ValidationFailedException, notFound } from '../common/errors/app-exception.js';
import type { DeviceDetailsQuery, ListEventsQuery } from './devices.dto.js';
import { DevicesRepository } from './devices.repository.js';
import { pageEnvelope, pageWindow } from '../common/pagination.js';

/** How many events the device details show. */
export const RECENT_EVENTS = 20;

/**
 * Read models over the devices and device events the attestation endpoints record, for the
 * dashboard and for server-to-server API key callers.
 */
@Injectable()
export class DeviceAnalyticsService {
  constructor(
    private readonly devices: DevicesRepository,
    private readonly plans: PlanService,
    private readonly compliance: ComplianceService,
  ) {}

  /**
   * The interface document's Device details. With the key id known in several apps, the most
   * recently seen device answers unless `appId` picks one. `complianceStatus` applies the
   * organization's compliance settings in force (docs/risk.md).
   */
  async deviceDetails(auth: OrgAuthContext, keyId: string, query: DeviceDetailsQuery) {
    const device = await this.devices.profile(auth.organizationId, keyId, query.appId ?? null);
    if (!device) throw notFound('Device');
    // Events by key id within the device's app: failures recorded before the key was known count too.
    const events = await this.devices.recentEventsOfKey(auth.organizationId, device.app_id, keyId, RECENT_EVENTS);
    const [compliance, failures] = await Promise.all([
      this.plans.planOf(auth.organizationId).then((plan) => this.compliance.settingsInForce(auth.organizationId, plan)),
      this.devices.failureTrend(auth.organizationId, { appId: device.app_id, keyId, days: query.days ?? 30 }),
    ]);
    const times = [device.updated_at, device.last_seen_at, events[0]?.created_at].filter(
      (time): time is Date => !!time,
    );
    return {
      keyId: device.key_id,
      /** The platform that attested the device: App Attest (`ios`) or Play Integrity (`android`). */
      platform: device.platform,
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
    const { limit, offset } = pageWindow(query);
    const { rows, total } = await this.devices.events(
      auth.organizationId,
      {
        appId: query.appId ?? null,
        keyId: query.keyId ?? null,
        result: query.result ?? null,
        type: query.type ?? null,
        from,
        to,
      },
      { limit, offset },
    );
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
      total,
    );
  }
}
