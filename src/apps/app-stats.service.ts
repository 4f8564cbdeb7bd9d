import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { App } from './app.entity.js';
import { DevicesRepository } from '../devices/devices.repository.js';
import { AppsRepository } from './apps.repository.js';

const round = (value: number, places = 2) => Math.round(value * 10 ** places) / 10 ** places;

/**
 * Per-app figures computed from the device events the attestation endpoints record. Debug-token
 * exchanges (Simulator, CI) are left out: they are not devices in the field.
 */
@Injectable()
export class AppStatsService {
  constructor(
    private readonly apps: AppsRepository,
    private readonly devices: DevicesRepository,
  ) {}

  /** The organization's apps with their attestation figures: the apps and the devices' totals, at once. */
  async stats(auth: OrgAuthContext) {
    const [apps, totals] = await Promise.all([
      this.apps.names(auth.organizationId),
      this.devices.totalsByApp(auth.organizationId),
    ]);
    return apps.map((app) => {
      const figures = totals.get(app.id);
      const total = figures?.total ?? 0;
      return {
        appId: app.id,
        appName: app.appName,
        totalAttestations: total,
        uniqueDevices: figures?.devices ?? 0,
        avgRiskScore: figures?.avgRisk == null ? 0 : round(figures.avgRisk),
        successRate: total === 0 ? 0 : round((figures?.successes ?? 0) / total, 4),
        lastAttestation: figures?.lastAt ?? null,
      };
    });
  }

  /** Usage figures of `app`, one of `auth`'s organization's apps. */
  async usage(auth: OrgAuthContext, app: App, days: number) {
    const [daily, top, errors, failures] = await Promise.all([
      this.devices.dailyUsage(auth.organizationId, app.id, days),
      this.devices.topDevices(auth.organizationId, app.id, 10),
      this.devices.recentFailures(auth.organizationId, app.id, 10),
      this.devices.failureTrend(auth.organizationId, { appId: app.id, days }),
    ]);
    return {
      appId: app.id,
      appName: app.appName,
      dailyUsage: daily.map((row) => ({
        date: row.date,
        attestations: row.attestations,
        unique_devices: row.uniqueDevices,
        avg_risk_score: row.avgRiskScore === null ? 0 : round(row.avgRiskScore),
      })),
      topDevices: top.map((row) => ({
        keyId: row.key_id,
        attestationCount: row.attestation_count,
        riskScore: row.risk_score,
        lastSeen: row.last_seen_at,
        deviceModel: row.device_model,
      })),
      recentErrors: errors.map((row) => ({
        timestamp: row.created_at,
        errorReason: row.error_code,
        keyId: row.key_id,
      })),
      ...failures,
    };
  }
}
