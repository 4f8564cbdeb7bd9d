import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { AppException, ValidationFailedException, conflict, notFound } from '../common/errors/app-exception.js';
import { scheduleLimitReached } from './flags.exceptions.js';
import { type TierDefinition } from '../common/tiers.js';
import { AuditService } from '../audit/audit.service.js';
import type { Environment, FlagRule } from './evaluation/flag-types.js';
import type { FeatureFlag } from './flag.entity.js';
import type { CreateScheduleDto, ScheduledChangeDto } from './flags.dto.js';
import { FlagsService, type ChangedFlag, type EnvironmentInput } from './flags.service.js';
import { featureUnavailable } from '../organizations/organizations.exceptions.js';
import { PlanService } from '../organizations/plan.service.js';

export const SCHEDULE_STATUSES = ['pending', 'applied', 'failed', 'cancelled'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/** What the gate made of a due schedule: applied as a flag version, or a change request awaiting approval. */
export type ScheduleOutcome = { appliedVersion: number; after: () => void } | { changeRequestId: string };

/** Pending schedules one flag may hold at a time. */
export const MAX_PENDING_SCHEDULES = 50;

export interface ScheduleRow {
  id: string;
  organization_id: string;
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

export function toScheduleResponse(row: ScheduleRow) {
  return {
    id: row.id,
    flagId: row.flag_id,
    environment: row.environment,
    runAt: row.run_at,
    change: row.change,
    status: row.status,
    failureReason: row.failure_reason,
    appliedVersion: row.applied_version,
    createdBy: row.created_by,
    createdAt: row.created_at,
    appliedAt: row.applied_at,
  };
}

export function schedulingUnavailable(tier: TierDefinition): AppException | null {
  return tier.features.flagScheduling
    ? null
    : featureUnavailable(
        'Scheduled flag changes are available from the Business plan',
        'Upgrade to Business to schedule flag changes',
      );
}

/**
 * Scheduled flag changes: created and cancelled here, applied by FlagScheduleJob through
 * `applyDue`, each as a new flag version with everything a dashboard change brings.
 */
@Injectable()
export class FlagSchedulesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly flags: FlagsService,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  async list(auth: OrgAuthContext, flagId: string): Promise<ScheduleRow[]> {
    await this.assertPlan(auth);
    await this.flags.get(auth, flagId);
    return this.dataSource.query(
      `SELECT * FROM feature_flag_schedules WHERE flag_id = $1 AND organization_id = $2
        ORDER BY created_at DESC, id`,
      [flagId, auth.organizationId],
    );
  }

  /** With `within`, in that transaction; `changeRequestId`: the approved change request applying. */
  async create(
    auth: OrgAuthContext,
    flagId: string,
    input: CreateScheduleDto,
    within?: EntityManager,
    changeRequestId: string | null = null,
  ): Promise<ScheduleRow> {
    const change = changeOf(input.change);
    const run = async (manager: EntityManager) => {
      const tier = await this.assertPlan(auth, manager);
      const flag = await this.flags.get(auth, flagId);
      // Checked now against the flag as it is, so a mistake is answered at once; checked again
      // when it runs, since the flag and the plan may change in between.
      await this.flags.applyEnvironment(
        structuredClone(flag),
        tier,
        input.environment,
        mergedInput(flag, input.environment, change),
        manager,
      );
      const [{ pending }] = await manager.query<{ pending: number }[]>(
        `SELECT count(*)::int AS pending FROM feature_flag_schedules
          WHERE flag_id = $1 AND status = 'pending'`,
        [flagId],
      );
      if (pending >= MAX_PENDING_SCHEDULES) {
        throw scheduleLimitReached(MAX_PENDING_SCHEDULES);
      }
      const [row] = await manager.query<ScheduleRow[]>(
        `INSERT INTO feature_flag_schedules
           (organization_id, app_id, flag_id, environment, run_at, change, created_by, change_request_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [
          auth.organizationId,
          flag.appId,
          flagId,
          input.environment,
          input.runAt,
          JSON.stringify(change),
          auth.caller.email,
          changeRequestId,
        ],
      );
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'flag_schedule.created',
          resourceType: 'flag',
          resourceId: flagId,
          metadata: { scheduleId: row.id, environment: row.environment, runAt: row.run_at },
        },
        manager,
      );
      return row;
    };
    return within ? run(within) : this.dataSource.transaction(run);
  }

  /** Cancels a pending schedule; one already applied, failed or cancelled answers 409. */
  async cancel(auth: OrgAuthContext, flagId: string, scheduleId: string): Promise<void> {
    await this.assertPlan(auth);
    await this.flags.get(auth, flagId);
    await this.dataSource.transaction(async (manager) => {
      // Waits for a job applying this schedule right now, then sees its outcome.
      const rows = await manager.query<{ status: ScheduleStatus }[]>(
        `SELECT status FROM feature_flag_schedules WHERE id = $1 AND flag_id = $2 AND organization_id = $3 FOR UPDATE`,
        [scheduleId, flagId, auth.organizationId],
      );
      if (!rows[0]) throw notFound('Schedule');
      if (rows[0].status !== 'pending')
        throw conflict(`The schedule is ${rows[0].status} and can no longer be cancelled`);
      await manager.query(`UPDATE feature_flag_schedules SET status = 'cancelled' WHERE id = $1`, [scheduleId]);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'flag_schedule.cancelled',
          resourceType: 'flag',
          resourceId: flagId,
          metadata: { scheduleId },
        },
        manager,
      );
    });
  }

  /**
   * Settles the earliest due schedule no other instance holds, in one transaction, through
   * `through` (the gate of protected environments, ChangeRequestsService): the flag's new version
   * (audit entry, webhook event, stream notification) and the schedule's `applied` commit
   * together, so a schedule applies exactly once. A change that can no longer apply leaves the flag
   * untouched and marks the schedule `failed` with the reason; so does one the gate turned into a
   * change request (its environment requires approval since the schedule was made). False when
   * nothing is due.
   */
  async applyDue(
    now: Date,
    through: (manager: EntityManager, schedule: ScheduleRow) => Promise<ScheduleOutcome>,
  ): Promise<boolean> {
    let after: (() => void) | null = null;
    const found = await this.dataSource.transaction(async (manager) => {
      // SKIP LOCKED: instances share the due schedules, never the same one. A schedule waits
      // while an earlier one of the same flag and environment is pending, so they apply in order.
      const rows = await manager.query<ScheduleRow[]>(
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
      const schedule = rows[0];
      if (!schedule) return false;
      await manager.query('SAVEPOINT scheduled_change');
      let reason: string;
      try {
        const outcome = await through(manager, schedule);
        await manager.query('RELEASE SAVEPOINT scheduled_change');
        if ('appliedVersion' in outcome) {
          await manager.query(
            `UPDATE feature_flag_schedules SET status = 'applied', applied_at = now(), applied_version = $2 WHERE id = $1`,
            [schedule.id, outcome.appliedVersion],
          );
          after = outcome.after;
          return true;
        }
        reason =
          `approval_required: ${schedule.environment} requires approval since this schedule was made; ` +
          `change request ${outcome.changeRequestId} carries its change`;
      } catch (error) {
        if (!(error instanceof AppException)) throw error;
        await manager.query('ROLLBACK TO SAVEPOINT scheduled_change');
        reason = reasonOf(error);
      }
      await manager.query(`UPDATE feature_flag_schedules SET status = 'failed', failure_reason = $2 WHERE id = $1`, [
        schedule.id,
        reason,
      ]);
      await this.audit.record(
        null,
        {
          organizationId: schedule.organization_id,
          action: 'flag_schedule.failed',
          resourceType: 'flag',
          resourceId: schedule.flag_id,
          metadata: { scheduleId: schedule.id, reason },
        },
        manager,
      );
      return true;
    });
    (after as (() => void) | null)?.();
    return found;
  }

  /** A due schedule's change, applied in `manager` (only ever through the gate, ChangeRequestsService). */
  applyScheduled(manager: EntityManager, schedule: ScheduleRow): Promise<ChangedFlag> {
    const actor = {
      organizationId: schedule.organization_id,
      email: schedule.created_by,
      auth: null,
      via: { scheduleId: schedule.id, scheduledBy: schedule.created_by ?? '' },
    };
    return this.flags.modify(
      actor,
      schedule.flag_id,
      'flag.updated',
      async (flag, tier, transaction) => {
        const unavailable = schedulingUnavailable(tier);
        if (unavailable) throw unavailable;
        const rules = flag.environments[schedule.environment].rules;
        const change = await this.flags.applyEnvironment(
          flag,
          tier,
          schedule.environment,
          mergedInput(flag, schedule.environment, schedule.change),
          transaction,
        );
        // Rules the change leaves out stay exactly as they are, ids included.
        if (schedule.change.rules === undefined) {
          flag.environments = {
            ...flag.environments,
            [schedule.environment]: { ...flag.environments[schedule.environment], rules },
          };
        }
        return `scheduled: ${change}`;
      },
      { within: manager },
    );
  }

  private async assertPlan(auth: OrgAuthContext, manager: EntityManager = this.dataSource.manager) {
    const tier = await this.plans.planOf(auth.organizationId, { manager });
    const unavailable = schedulingUnavailable(tier);
    if (unavailable) throw unavailable;
    return tier;
  }
}

/** The fields a change sets, and nothing else (stored as given). */
function changeOf(input: ScheduledChangeDto): ScheduledChangeDto {
  const change: ScheduledChangeDto = {};
  if (input.enabled !== undefined) change.enabled = input.enabled;
  if (input.value !== undefined) change.value = input.value;
  if (input.rules !== undefined) change.rules = input.rules;
  if (!Object.keys(change).length) {
    throw new ValidationFailedException([
      { field: 'change', message: 'must set at least one of enabled, value, rules' },
    ]);
  }
  return change;
}

/** The environment as the change would leave it: the change's fields over the current ones. */
export function mergedInput(flag: FeatureFlag, environment: Environment, change: ScheduledChangeDto): EnvironmentInput {
  const current = flag.environments[environment];
  return {
    enabled: change.enabled ?? current.enabled,
    value: change.value ?? current.value,
    rules: change.rules ?? current.rules.map((rule: FlagRule) => ({ ...rule, conditions: [...rule.conditions] })),
  };
}

function reasonOf(error: AppException): string {
  const fields = error.details.fields;
  return fields?.length
    ? `${error.code}: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`
    : `${error.code}: ${error.message}`;
}
