import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { UnitOfWork } from '../database/unit-of-work.js';
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
import { FlagSchedulesRepository, type ScheduleRow } from './flag-schedules.repository.js';
import { SavepointsRepository } from './savepoints.repository.js';

export type { ScheduleRow } from './flag-schedules.repository.js';

/** What the gate made of a due schedule: applied as a flag version, or a change request awaiting approval. */
export type ScheduleOutcome = { appliedVersion: number; after: () => void } | { changeRequestId: string };

/** Pending schedules one flag may hold at a time. */
export const MAX_PENDING_SCHEDULES = 50;

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
    private readonly uow: UnitOfWork,
    private readonly schedules: FlagSchedulesRepository,
    private readonly savepoints: SavepointsRepository,
    private readonly flags: FlagsService,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  async list(auth: OrgAuthContext, flagId: string): Promise<ScheduleRow[]> {
    await this.assertPlan(auth);
    await this.flags.get(auth, flagId);
    return this.schedules.list(auth.organizationId, flagId);
  }

  /** In the caller's unit of work (its own when none is open); `changeRequestId`: the approved change request applying. */
  async create(
    auth: OrgAuthContext,
    flagId: string,
    input: CreateScheduleDto,
    changeRequestId: string | null = null,
  ): Promise<ScheduleRow> {
    const change = changeOf(input.change);
    return this.uow.run(async () => {
      const tier = await this.assertPlan(auth);
      const flag = await this.flags.get(auth, flagId);
      // Checked now against the flag as it is, so a mistake is answered at once; checked again
      // when it runs, since the flag and the plan may change in between.
      await this.flags.applyEnvironment(
        structuredClone(flag),
        tier,
        input.environment,
        mergedInput(flag, input.environment, change),
      );
      if ((await this.schedules.countPending(auth.organizationId, flagId)) >= MAX_PENDING_SCHEDULES) {
        throw scheduleLimitReached(MAX_PENDING_SCHEDULES);
      }
      const row = await this.schedules.insert(auth.organizationId, {
        appId: flag.appId,
        flagId,
        environment: input.environment,
        runAt: input.runAt,
        change,
        createdBy: auth.caller.email,
        changeRequestId,
      });
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'flag_schedule.created',
        resourceType: 'flag',
        resourceId: flagId,
        metadata: { scheduleId: row.id, environment: row.environment, runAt: row.run_at },
      });
      return row;
    });
  }

  /** Cancels a pending schedule; one already applied, failed or cancelled answers 409. */
  async cancel(auth: OrgAuthContext, flagId: string, scheduleId: string): Promise<void> {
    await this.assertPlan(auth);
    await this.flags.get(auth, flagId);
    await this.uow.run(async () => {
      // Waits for a job applying this schedule right now, then sees its outcome.
      const status = await this.schedules.lockedStatus(auth.organizationId, flagId, scheduleId);
      if (!status) throw notFound('Schedule');
      if (status !== 'pending') throw conflict(`The schedule is ${status} and can no longer be cancelled`);
      await this.schedules.cancel(auth.organizationId, scheduleId);
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'flag_schedule.cancelled',
        resourceType: 'flag',
        resourceId: flagId,
        metadata: { scheduleId },
      });
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
  async applyDue(now: Date, through: (schedule: ScheduleRow) => Promise<ScheduleOutcome>): Promise<boolean> {
    let after: (() => void) | null = null;
    const found = await this.uow.run(async () => {
      const schedule = await this.schedules.claimDue(now);
      if (!schedule) return false;
      let reason: string;
      try {
        const outcome = await this.savepoints.attempt(() => through(schedule));
        if ('appliedVersion' in outcome) {
          await this.schedules.markApplied(schedule.organization_id, schedule.id, outcome.appliedVersion);
          after = outcome.after;
          return true;
        }
        reason =
          `approval_required: ${schedule.environment} requires approval since this schedule was made; ` +
          `change request ${outcome.changeRequestId} carries its change`;
      } catch (error) {
        if (!(error instanceof AppException)) throw error;
        reason = reasonOf(error);
      }
      await this.schedules.markFailed(schedule.organization_id, schedule.id, reason);
      await this.audit.record(null, {
        organizationId: schedule.organization_id,
        action: 'flag_schedule.failed',
        resourceType: 'flag',
        resourceId: schedule.flag_id,
        metadata: { scheduleId: schedule.id, reason },
      });
      return true;
    });
    (after as (() => void) | null)?.();
    return found;
  }

  /** A due schedule's change, in the caller's unit of work (only ever through the gate, ChangeRequestsService). */
  applyScheduled(schedule: ScheduleRow): Promise<ChangedFlag> {
    const actor = {
      organizationId: schedule.organization_id,
      email: schedule.created_by,
      auth: null,
      via: { scheduleId: schedule.id, scheduledBy: schedule.created_by ?? '' },
    };
    return this.flags.modify(actor, schedule.flag_id, 'flag.updated', async (flag, tier) => {
      const unavailable = schedulingUnavailable(tier);
      if (unavailable) throw unavailable;
      const rules = flag.environments[schedule.environment].rules;
      const change = await this.flags.applyEnvironment(
        flag,
        tier,
        schedule.environment,
        mergedInput(flag, schedule.environment, schedule.change),
      );
      // Rules the change leaves out stay exactly as they are, ids included.
      if (schedule.change.rules === undefined) {
        flag.environments = {
          ...flag.environments,
          [schedule.environment]: { ...flag.environments[schedule.environment], rules },
        };
      }
      return `scheduled: ${change}`;
    });
  }

  /** The plan, in the open unit of work when there is one; 403 unless it schedules. */
  private async assertPlan(auth: OrgAuthContext) {
    const tier = await this.plans.planOf(auth.organizationId);
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
