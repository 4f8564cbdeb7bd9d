import { Injectable } from '@nestjs/common';
import { trustOrganizationId, type OrganizationId } from '../common/access/tenant-id.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Environment } from './evaluation/flag-types.js';
import type { ScheduledChangeDto } from './flags.dto.js';

export const SCHEDULE_STATUSES = ['pending', 'applied', 'failed', 'cancelled'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

export interface ScheduleRow {
  id: string;
  organization_id: OrganizationId;
  app_id: string;
  flag_id: string;
  environment: Environment;
  run_at: Date;
  change: ScheduledChangeDto;
  status: ScheduleStatus;
  failure_reason: string | null;
  applied_version: number | null;
  created_by: string | null;
  created_at: Date;
  applied_at: Date | null;
  /** The approved change request that made it: it stays valid in a protected environment. */
  change_request_id: string | null;
}

/** A new schedule's fields. */
export interface NewSchedule {
  appId: string;
  flagId: string;
  environment: Environment;
  runAt: Date;
  change: ScheduledChangeDto;
  createdBy: string | null;
  changeRequestId: string | null;
}

const branded = (row: ScheduleRow): ScheduleRow => ({
  ...row,
  organization_id: trustOrganizationId(row.organization_id),
});

/** The owner of `feature_flag_schedules`. */
@Injectable()
export class FlagSchedulesRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The flag's schedules, newest first. */
  async list(organizationId: OrganizationId, flagId: string): Promise<ScheduleRow[]> {
    const rows = await this.uow.manager().query<ScheduleRow[]>(
      `SELECT * FROM feature_flag_schedules WHERE flag_id = $1 AND organization_id = $2
        ORDER BY created_at DESC, id`,
      [flagId, organizationId],
    );
    return rows.map(branded);
  }

  /** How many schedules of the flag are pending. */
  async countPending(organizationId: OrganizationId, flagId: string): Promise<number> {
    const [{ pending }] = await this.uow.manager().query<{ pending: number }[]>(
      `SELECT count(*)::int AS pending FROM feature_flag_schedules
        WHERE flag_id = $1 AND organization_id = $2 AND status = 'pending'`,
      [flagId, organizationId],
    );
    return pending;
  }

  async insert(organizationId: OrganizationId, schedule: NewSchedule): Promise<ScheduleRow> {
    const [row] = await this.uow.manager().query<ScheduleRow[]>(
      `INSERT INTO feature_flag_schedules
         (organization_id, app_id, flag_id, environment, run_at, change, created_by, change_request_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        organizationId,
        schedule.appId,
        schedule.flagId,
        schedule.environment,
        schedule.runAt,
        JSON.stringify(schedule.change),
        schedule.createdBy,
        schedule.changeRequestId,
      ],
    );
    return branded(row);
  }

  /**
   * The schedule's status, locked FOR UPDATE until the unit of work ends (waiting for a job
   * applying it right now, then seeing its outcome); null when the flag has no such schedule.
   */
  async lockedStatus(
    organizationId: OrganizationId,
    flagId: string,
    scheduleId: string,
  ): Promise<ScheduleStatus | null> {
    const rows = await this.uow
      .manager()
      .query<{ status: ScheduleStatus }[]>(
        `SELECT status FROM feature_flag_schedules WHERE id = $1 AND flag_id = $2 AND organization_id = $3 FOR UPDATE`,
        [scheduleId, flagId, organizationId],
      );
    return rows[0]?.status ?? null;
  }

  async cancel(organizationId: OrganizationId, scheduleId: string): Promise<void> {
    await this.uow
      .manager()
      .query(`UPDATE feature_flag_schedules SET status = 'cancelled' WHERE id = $1 AND organization_id = $2`, [
        scheduleId,
        organizationId,
      ]);
  }

  /**
   * Claims the earliest due schedule of any organization no other instance holds (`FOR UPDATE
   * SKIP LOCKED`: instances share the due schedules, never the same one), until the unit of work
   * ends. A schedule waits while an earlier one of the same flag and environment is pending, so
   * they apply in order. Null when nothing is due.
   */
  async claimDue(now: Date): Promise<ScheduleRow | null> {
    const rows = await this.uow.manager().query<ScheduleRow[]>(
      `SELECT * FROM feature_flag_schedules s
        WHERE s.status = 'pending' AND s.run_at <= $1
          AND NOT EXISTS (SELECT 1 FROM feature_flag_schedules e
                           WHERE e.flag_id = s.flag_id AND e.environment = s.environment AND e.status = 'pending'
                             AND (e.run_at, e.created_at, e.id) < (s.run_at, s.created_at, s.id))
        ORDER BY s.run_at, s.created_at, s.id
        LIMIT 1
          FOR UPDATE SKIP LOCKED`,
      [now],
    );
    return rows[0] ? branded(rows[0]) : null;
  }

  async markApplied(organizationId: OrganizationId, scheduleId: string, version: number): Promise<void> {
    await this.uow.manager().query(
      `UPDATE feature_flag_schedules SET status = 'applied', applied_at = now(), applied_version = $3
        WHERE id = $1 AND organization_id = $2`,
      [scheduleId, organizationId, version],
    );
  }

  async markFailed(organizationId: OrganizationId, scheduleId: string, reason: string): Promise<void> {
    await this.uow
      .manager()
      .query(
        `UPDATE feature_flag_schedules SET status = 'failed', failure_reason = $3 WHERE id = $1 AND organization_id = $2`,
        [scheduleId, organizationId, reason],
      );
  }

  /** Fails the flag's pending schedules (the flag was deleted). */
  async failPending(organizationId: OrganizationId, flagId: string, reason: string): Promise<void> {
    await queryRows(
      this.uow.manager(),
      `UPDATE feature_flag_schedules SET status = 'failed', failure_reason = $3
        WHERE flag_id = $1 AND organization_id = $2 AND status = 'pending'`,
      [flagId, organizationId, reason],
    );
  }
}
