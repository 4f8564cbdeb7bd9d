import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { App } from './app.entity.js';
import { failuresByDayAndCode } from '../devices/failure-trend.js';

const round = (value: number, places = 2) => Math.round(value * 10 ** places) / 10 ** places;

/**
 * Per-app figures computed from the device events the attestation endpoints record. Debug-token
 * exchanges (Simulator, CI) are left out: they are not devices in the field.
 */
@Injectable()
export class AppStatsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async stats(auth: OrgAuthContext) {
    const rows: {
      id: string;
      app_name: string;
      total: string;
      successes: string;
      last_at: Date | null;
      devices: string;
      avg_risk: string | null;
    }[] = await this.dataSource.query(
      `SELECT a.id, a.app_name,
              COALESCE(e.total, 0) AS total, COALESCE(e.successes, 0) AS successes, e.last_at,
              COALESCE(d.devices, 0) AS devices, d.avg_risk
         FROM apps a
         LEFT JOIN (SELECT app_id, count(*) AS total, count(*) FILTER (WHERE result = 'success') AS successes,
                           max(created_at) AS last_at
                      FROM device_events WHERE organization_id = $1 AND NOT debug GROUP BY app_id) e ON e.app_id = a.id
         LEFT JOIN (SELECT app_id, count(*) AS devices, avg(risk_score) AS avg_risk
                      FROM devices WHERE organization_id = $1 GROUP BY app_id) d ON d.app_id = a.id
        WHERE a.organization_id = $1
        ORDER BY a.is_primary DESC, a.app_name`,
      [auth.organizationId],
    );
    return rows.map((row) => ({
      appId: row.id,
      appName: row.app_name,
      totalAttestations: Number(row.total),
      uniqueDevices: Number(row.devices),
      avgRiskScore: row.avg_risk === null ? 0 : round(Number(row.avg_risk)),
      successRate: Number(row.total) === 0 ? 0 : round(Number(row.successes) / Number(row.total), 4),
      lastAttestation: row.last_at,
    }));
  }

  async usage(app: App, days: number) {
    const [daily, top, errors, failures] = await Promise.all([
      this.dataSource.query<
        { date: string; attestations: string; unique_devices: string; avg_risk_score: string | null }[]
      >(
        `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'utc'), 'YYYY-MM-DD') AS date,
                count(*) AS attestations, count(DISTINCT key_id) AS unique_devices, avg(risk_score) AS avg_risk_score
           FROM device_events
          WHERE app_id = $1 AND created_at >= now() - make_interval(days => $2) AND NOT debug
          GROUP BY 1 ORDER BY 1 DESC`,
        [app.id, days],
      ),
      this.dataSource.query<
        {
          key_id: string;
          attestation_count: number;
          risk_score: number;
          last_seen_at: Date;
          device_model: string | null;
        }[]
      >(
        `SELECT key_id, attestation_count, risk_score, last_seen_at, device_model
           FROM devices WHERE app_id = $1 ORDER BY attestation_count DESC, last_seen_at DESC LIMIT 10`,
        [app.id],
      ),
      this.dataSource.query<{ created_at: Date; error_code: string | null; key_id: string }[]>(
        `SELECT created_at, error_code, key_id FROM device_events
          WHERE app_id = $1 AND result = 'failure' ORDER BY created_at DESC LIMIT 10`,
        [app.id],
      ),
      failuresByDayAndCode(this.dataSource, { appId: app.id, days }),
    ]);
    return {
      appId: app.id,
      appName: app.appName,
      dailyUsage: daily.map((row) => ({
        date: row.date,
        attestations: Number(row.attestations),
        unique_devices: Number(row.unique_devices),
        avg_risk_score: row.avg_risk_score === null ? 0 : round(Number(row.avg_risk_score)),
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
