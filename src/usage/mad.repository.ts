import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { preparedStatement, queryPrepared, queryRows } from '../database/sql.js';
import { hasSqlState } from '../database/sql-state.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/** A period's counter after a device was counted in it. */
export interface MadCounter {
  activeDevices: number;
  /** When the organization first went over its limit this period. */
  overLimitSince: Date | null;
}

/** `count`'s statement (prepared: it runs with every new device, decision 0077). */
const COUNT_DEVICE = preparedStatement(
  'mad_count_device',
  `WITH fresh AS (
     INSERT INTO mad_devices (organization_id, period_start, device_id) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING RETURNING 1
   )
   INSERT INTO mad_counters (organization_id, period_start, active_devices)
   SELECT $1, $2, 1 FROM fresh
   ON CONFLICT (organization_id, period_start)
   DO UPDATE SET active_devices = mad_counters.active_devices + 1
   RETURNING active_devices, over_limit_since`,
);

/** The SQLSTATE `mad_count_new_device` raises when a new device's count would pass the plan's limit. */
const MAD_LIMIT_REACHED = 'AT402';

/**
 * Whether a statement failed because the usage feature's `mad_count_new_device` refused to pass the
 * plan's limit (decision 0078): nothing of the statement was written, and the caller takes the
 * transactional path, where `MadService.count` decides.
 */
export function isMadLimitReached(error: unknown): boolean {
  return hasSqlState(error, MAD_LIMIT_REACHED);
}

/**
 * The owner of `mad_devices` (which device counted in which period) and `mad_counters` (one row
 * per organization and period). Statements run in the open unit of work. The device refresh of
 * decision 0062 reads the SQL function `mad_device_counted` (migration MadDeviceCounted); the
 * one-statement validate of decision 0078 counts through `mad_count_new_device` (MadCountNewDevice).
 */
@Injectable()
export class MadRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * Counts the device in the period: one upsert that adds the device and increments the counter
   * only when the device is new to the period (null then: nothing changed), and serialises
   * concurrent new devices of one organization on the counter row.
   */
  async count(organizationId: OrganizationId, periodStart: string, deviceId: string): Promise<MadCounter | null> {
    const [row] = await queryPrepared<{ active_devices: number; over_limit_since: Date | null }>(
      this.uow.manager(),
      COUNT_DEVICE,
      [organizationId, periodStart, deviceId],
    );
    return row ? { activeDevices: row.active_devices, overLimitSince: row.over_limit_since } : null;
  }

  /** Remembers when the organization went over its limit in the period. */
  async markOverLimit(organizationId: OrganizationId, periodStart: string, since: Date): Promise<void> {
    await this.uow
      .manager()
      .query(`UPDATE mad_counters SET over_limit_since = $3 WHERE organization_id = $1 AND period_start = $2`, [
        organizationId,
        periodStart,
        since,
      ]);
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
  async calendarMonthActiveDevices(organizationId: OrganizationId): Promise<number> {
    const rows: { active_devices: number }[] = await this.uow.manager().query(
      `SELECT active_devices FROM mad_counters
        WHERE organization_id = $1 AND period_start = date_trunc('month', now() AT TIME ZONE 'utc')::date`,
      [organizationId],
    );
    return rows[0]?.active_devices ?? 0;
  }

  /** Claims the alert `level` of the period; false when it was claimed before (of many, one wins). */
  async claimAlert(organizationId: OrganizationId, periodStart: string, level: number): Promise<boolean> {
    const claimed = await queryRows(
      this.uow.manager(),
      `UPDATE mad_counters SET alerts_sent = array_append(alerts_sent, $3)
        WHERE organization_id = $1 AND period_start = $2 AND NOT ($3 = ANY(alerts_sent)) RETURNING 1`,
      [organizationId, periodStart, String(level)],
    );
    return claimed.length > 0;
  }
}
