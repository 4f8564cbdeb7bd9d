import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { sqlReference } from '../database/sql.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/** A period's counter after a device was counted in it. */
export interface MadCounter {
  activeDevices: number;
  /** When the organization first went over its limit this period. */
  overLimitSince: Date | null;
}

/**
 * @deprecated (decision 0070) the monthly-active-device tables' part of the device refresh: true
 * when `deviceId` is in `mad_devices` of the organization for every period start in `periodStarts`.
 * Kept until devices.repository.ts calls the SQL function `mad_device_counted(organization,
 * period_starts, device)` (migration MadDeviceCounted) instead; then removed.
 */
export function madDeviceCounted(organizationId: string, periodStarts: string, deviceId: string): string {
  const periods = `${sqlReference(periodStarts)}::date[]`;
  return `((SELECT count(*) FROM mad_devices
             WHERE organization_id = ${sqlReference(organizationId)} AND device_id = ${sqlReference(deviceId)}
               AND period_start = ANY (${periods})) = cardinality(${periods}))`;
}

/**
 * The owner of `mad_devices` (which device counted in which period) and `mad_counters` (one row
 * per organization and period). Statements run in the open unit of work; `manager` is for the
 * attestation, which still opens its transaction by hand (deprecated). Organization ids are plain
 * strings where the attesting tenant does not carry a branded one yet.
 */
@Injectable()
export class MadRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * Counts the device in the period: one upsert that adds the device and increments the counter
   * only when the device is new to the period (null then: nothing changed), and serialises
   * concurrent new devices of one organization on the counter row.
   */
  async count(
    organizationId: OrganizationId | string,
    periodStart: string,
    deviceId: string,
    manager: EntityManager = this.uow.manager(),
  ): Promise<MadCounter | null> {
    const [row] = await queryRows<{ active_devices: number; over_limit_since: Date | null }>(
      manager,
      `WITH fresh AS (
         INSERT INTO mad_devices (organization_id, period_start, device_id) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING 1
       )
       INSERT INTO mad_counters (organization_id, period_start, active_devices)
       SELECT $1, $2, 1 FROM fresh
       ON CONFLICT (organization_id, period_start)
       DO UPDATE SET active_devices = mad_counters.active_devices + 1
       RETURNING active_devices, over_limit_since`,
      [organizationId, periodStart, deviceId],
    );
    return row ? { activeDevices: row.active_devices, overLimitSince: row.over_limit_since } : null;
  }

  /** Remembers when the organization went over its limit in the period. */
  async markOverLimit(
    organizationId: OrganizationId | string,
    periodStart: string,
    since: Date,
    manager: EntityManager = this.uow.manager(),
  ): Promise<void> {
    await manager.query(
      `UPDATE mad_counters SET over_limit_since = $3 WHERE organization_id = $1 AND period_start = $2`,
      [organizationId, periodStart, since],
    );
  }

  /** The devices counted in the period starting `periodStart` (0 before the first). */
  async activeDevices(organizationId: OrganizationId, periodStart: string): Promise<number> {
    const rows: { active_devices: number }[] = await this.uow
      .manager()
      .query(`SELECT active_devices FROM mad_counters WHERE organization_id = $1 AND period_start = $2`, [
        organizationId,
        periodStart,
      ]);
    return rows[0]?.active_devices ?? 0;
  }

  /** The devices counted since the start of the current calendar month (UTC). */
  async calendarMonthActiveDevices(organizationId: OrganizationId | string): Promise<number> {
    const rows: { active_devices: number }[] = await this.uow.manager().query(
      `SELECT active_devices FROM mad_counters
        WHERE organization_id = $1 AND period_start = date_trunc('month', now() AT TIME ZONE 'utc')::date`,
      [organizationId],
    );
    return rows[0]?.active_devices ?? 0;
  }

  /** Claims the alert `level` of the period; false when it was claimed before (of many, one wins). */
  async claimAlert(organizationId: OrganizationId | string, periodStart: string, level: number): Promise<boolean> {
    const claimed = await queryRows(
      this.uow.manager(),
      `UPDATE mad_counters SET alerts_sent = array_append(alerts_sent, $3)
        WHERE organization_id = $1 AND period_start = $2 AND NOT ($3 = ANY(alerts_sent)) RETURNING 1`,
      [organizationId, periodStart, String(level)],
    );
    return claimed.length > 0;
  }
}
