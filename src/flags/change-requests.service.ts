import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { hasRole, type OrgAuthContext } from '../common/access/auth-context.js';
import { forbidden, notFound } from '../common/errors/app-exception.js';
import { changeRequestNotApplicable, selfApproval } from './flags.exceptions.js';
import { type TierDefinition } from '../common/tiers.js';
import { AuditService } from '../audit/audit.service.js';
import { ENVIRONMENTS, type Environment } from './evaluation/flag-types.js';
import type { FeatureFlag } from './flag.entity.js';
import { FlagSchedulesService, type ScheduleRow } from './flag-schedules.service.js';
import type { CreateScheduleDto, EnvironmentConfigDto, ListChangeRequestsQuery } from './flags.dto.js';
import { FlagsService, checkEnvironment, type ChangedFlag, type ChangeScope, type FlagActor } from './flags.service.js';
import { featureUnavailable } from '../organizations/organizations.exceptions.js';
import { PlanService } from '../organizations/plan.service.js';
import type { ChangeRequestState } from './change-request-state.js';

type Kind = 'environment' | 'rollback' | 'schedule';

interface ChangeRequestRow {
  id: string;
  organization_id: string;
  app_id: string;
  flag_id: string;
  flag_key: string;
  kind: Kind;
  environment: Environment | null;
  payload: Record<string, unknown>;
  before: unknown;
  base_version: number;
  /** As stored; `current_state` is the state as it stands (see STATE). */
  state: ChangeRequestState;
  current_state: ChangeRequestState;
  author_user_id: string | null;
  author_email: string | null;
  decided_by: string | null;
  decided_at: Date | null;
  applied_by: string | null;
  applied_at: Date | null;
  applied_version: number | null;
  created_at: Date;
}

export function toChangeRequestResponse(row: ChangeRequestRow) {
  return {
    id: row.id,
    flagId: row.flag_id,
    flagKey: row.flag_key,
    appId: row.app_id,
    kind: row.kind,
    environment: row.environment,
    change: row.payload,
    state: row.current_state ?? row.state,
    baseVersion: row.base_version,
    author: row.author_email,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at,
    appliedBy: row.applied_by,
    appliedAt: row.applied_at,
    appliedVersion: row.applied_version,
    createdAt: row.created_at,
  };
}

/** A change answered either at once or as a change request awaiting approval (202). */
export type Outcome<T> = { applied: T } | { proposed: ReturnType<typeof toChangeRequestResponse> };

/**
 * The state as it stands: a pending or approved request whose flag has changed since (or is gone)
 * is stale. Derived on every read, so it can never lag behind the flag.
 */
const STATE = `CASE WHEN r.state IN ('pending', 'approved') AND NOT EXISTS (
    SELECT 1 FROM feature_flags f WHERE f.id = r.flag_id AND f.version = r.base_version) THEN 'stale' ELSE r.state END`;
const SELECT = `SELECT r.*, ${STATE} AS current_state FROM feature_flag_change_requests r`;

/**
 * Change approvals (Enterprise): changes to an environment marked `requireApproval` become change
 * requests; an Admin who is not the author approves or rejects; the author or an Admin applies an
 * approved one, which then does exactly what the direct change does.
 */
@Injectable()
export class ChangeRequestsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly flags: FlagsService,
    private readonly schedules: FlagSchedulesService,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  async putEnvironment(
    auth: OrgAuthContext,
    flagId: string,
    environment: string,
    input: EnvironmentConfigDto,
  ): Promise<Outcome<FeatureFlag>> {
    const checked = checkEnvironment(environment);
    const { flag, tier } = await this.load(auth, flagId);
    if (!this.guarded(flag, tier, [checked])) {
      return { applied: await this.flags.putEnvironment(auth, flagId, checked, input) };
    }
    // Checked now on a copy, so a request that could never apply is refused at once.
    await this.dataSource.transaction((manager) =>
      this.flags.applyEnvironment(structuredClone(flag), tier, checked, input, manager),
    );
    return this.propose(auth, flag, 'environment', checked, { ...input }, flag.environments[checked]);
  }

  async rollback(auth: OrgAuthContext, flagId: string, version: number): Promise<Outcome<FeatureFlag>> {
    const { flag, tier } = await this.load(auth, flagId);
    if (!this.guarded(flag, tier, ENVIRONMENTS)) return { applied: await this.flags.rollback(auth, flagId, version) };
    if (!tier.features.rollback) {
      throw featureUnavailable('Rollback is available from the Pro plan');
    }
    if (!(await this.flags.versionEnvironments(auth.organizationId, flagId, version))) {
      throw notFound(`Version ${version} of this flag`);
    }
    return this.propose(auth, flag, 'rollback', null, { version }, flag.environments);
  }

  async createSchedule(auth: OrgAuthContext, flagId: string, input: CreateScheduleDto): Promise<Outcome<ScheduleRow>> {
    const { flag, tier } = await this.load(auth, flagId);
    if (!this.guarded(flag, tier, [input.environment])) {
      return { applied: await this.schedules.create(auth, flagId, input) };
    }
    const payload = { environment: input.environment, runAt: input.runAt, change: input.change };
    return this.propose(auth, flag, 'schedule', input.environment, payload, flag.environments[input.environment]);
  }

  async list(auth: OrgAuthContext, query: ListChangeRequestsQuery) {
    await this.assertPlan(auth);
    const rows = await this.dataSource.query<ChangeRequestRow[]>(
      `SELECT * FROM (${SELECT} WHERE r.organization_id = $1 AND ($2::uuid IS NULL OR r.flag_id = $2::uuid)) c
        WHERE ($3::text IS NULL OR c.current_state = $3) ORDER BY c.created_at DESC, c.id LIMIT 500`,
      [auth.organizationId, query.flagId ?? null, query.state ?? null],
    );
    return rows.map(toChangeRequestResponse);
  }

  /** One request with the diff it would apply: the environment(s) as they were and as it would leave them. */
  async get(auth: OrgAuthContext, id: string) {
    await this.assertPlan(auth);
    const row = await this.find(this.dataSource.manager, auth, id);
    let after: unknown;
    if (row.kind === 'rollback') {
      after = await this.flags.versionEnvironments(auth.organizationId, row.flag_id, row.payload.version as number);
    } else if (row.kind === 'environment') {
      const { requireApproval: _protection, ...before } = row.before as Record<string, unknown>;
      after = { ...before, ...row.payload };
    } else {
      after = { schedule: row.payload };
    }
    return { ...toChangeRequestResponse(row), diff: { before: row.before, after } };
  }

  approve(auth: OrgAuthContext, id: string) {
    return this.decide(auth, id, 'approved');
  }

  reject(auth: OrgAuthContext, id: string) {
    return this.decide(auth, id, 'rejected');
  }

  /** The author or an Admin applies an approved request: what the direct change does, in one transaction. */
  async apply(auth: OrgAuthContext, id: string) {
    await this.assertPlan(auth);
    let changed: ChangedFlag | null = null;
    const result = await this.dataSource.transaction(async (manager) => {
      const row = await this.locked(manager, auth, id);
      if (row.author_user_id !== auth.caller.userId && !hasRole(auth.caller.role, 'admin')) {
        throw forbidden('Only the author or an Admin applies a change request');
      }
      if (row.current_state !== 'approved') throw changeRequestNotApplicable(row.current_state);
      const actor: FlagActor = {
        organizationId: auth.organizationId,
        email: auth.caller.email,
        auth,
        via: { changeRequestId: row.id },
      };
      // Locked by the change with its organization row: the flag must still be the one approved.
      const scope: ChangeScope = {
        within: manager,
        check: (flag) => {
          if (flag.version !== row.base_version) throw changeRequestNotApplicable('stale');
        },
      };
      let appliedVersion: number;
      if (row.kind === 'environment') {
        const input = row.payload as unknown as EnvironmentConfigDto;
        changed = await this.flags.putEnvironmentAs(actor, row.flag_id, row.environment!, input, scope);
        appliedVersion = changed.version;
      } else if (row.kind === 'rollback') {
        changed = await this.flags.rollbackAs(actor, row.flag_id, row.payload.version as number, scope);
        appliedVersion = changed.version;
      } else {
        const payload = row.payload as unknown as CreateScheduleDto;
        await this.schedules.create(auth, row.flag_id, { ...payload, runAt: new Date(payload.runAt) }, manager);
        appliedVersion = row.base_version;
      }
      await manager.query(
        `UPDATE feature_flag_change_requests
            SET state = 'applied', applied_by = $2, applied_at = now(), applied_version = $3, updated_at = now()
          WHERE id = $1`,
        [row.id, auth.caller.email, appliedVersion],
      );
      await this.record(manager, auth, row, 'flag_change_request.applied');
      return row.id;
    });
    if (changed) this.flags.committed(changed);
    return this.get(auth, result);
  }

  private async decide(auth: OrgAuthContext, id: string, state: 'approved' | 'rejected') {
    await this.assertPlan(auth);
    await this.dataSource.transaction(async (manager) => {
      const row = await this.locked(manager, auth, id);
      if (row.author_user_id !== null && row.author_user_id === auth.caller.userId) {
        throw selfApproval();
      }
      if (row.current_state !== 'pending') throw changeRequestNotApplicable(row.current_state);
      await manager.query(
        `UPDATE feature_flag_change_requests SET state = $2, decided_by = $3, decided_at = now(), updated_at = now()
          WHERE id = $1`,
        [row.id, state, auth.caller.email],
      );
      await this.record(manager, auth, row, `flag_change_request.${state}`);
    });
    return this.get(auth, id);
  }

  private async propose(
    auth: OrgAuthContext,
    flag: FeatureFlag,
    kind: Kind,
    environment: Environment | null,
    payload: Record<string, unknown>,
    before: unknown,
  ): Promise<Outcome<never>> {
    const row = await this.dataSource.transaction(async (manager) => {
      const [created] = await manager.query<ChangeRequestRow[]>(
        `INSERT INTO feature_flag_change_requests
           (organization_id, app_id, flag_id, flag_key, kind, environment, payload, before, base_version,
            author_user_id, author_email)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        [
          auth.organizationId,
          flag.appId,
          flag.id,
          flag.key,
          kind,
          environment,
          JSON.stringify(payload),
          JSON.stringify(before),
          flag.version,
          auth.caller.userId,
          auth.caller.email,
        ],
      );
      await this.record(manager, auth, created, 'flag_change_request.created');
      return created;
    });
    return { proposed: toChangeRequestResponse(row) };
  }

  /** Whether a change of `environments` needs approval: the plan has approvals and one of them asks for it. */
  private guarded(flag: FeatureFlag, tier: TierDefinition, environments: readonly Environment[]): boolean {
    return tier.features.approvalWorkflows && environments.some((env) => flag.environments[env].requireApproval);
  }

  private async load(auth: OrgAuthContext, flagId: string) {
    const flag = await this.flags.get(auth, flagId);
    return { flag, tier: await this.plans.planOf(auth.organizationId) };
  }

  private async assertPlan(auth: OrgAuthContext): Promise<void> {
    await this.plans.requireFeature(auth.organizationId, 'approvalWorkflows', {
      message: 'Change approvals are available on the Enterprise plan',
    });
  }

  private async find(manager: EntityManager, auth: OrgAuthContext, id: string): Promise<ChangeRequestRow> {
    const rows = await manager.query<ChangeRequestRow[]>(`${SELECT} WHERE r.id = $1 AND r.organization_id = $2`, [
      id,
      auth.organizationId,
    ]);
    if (!rows[0]) throw notFound('Change request');
    return rows[0];
  }

  /** The row locked for a decision (or an application), with its state as it stands. */
  private async locked(manager: EntityManager, auth: OrgAuthContext, id: string): Promise<ChangeRequestRow> {
    const rows = await manager.query<{ id: string }[]>(
      `SELECT id FROM feature_flag_change_requests WHERE id = $1 AND organization_id = $2 FOR UPDATE`,
      [id, auth.organizationId],
    );
    if (!rows[0]) throw notFound('Change request');
    return this.find(manager, auth, id);
  }

  private record(manager: EntityManager, auth: OrgAuthContext, row: ChangeRequestRow, action: string) {
    return this.audit.record(
      auth,
      {
        organizationId: auth.organizationId,
        action,
        resourceType: 'flag',
        resourceId: row.flag_id,
        metadata: { changeRequestId: row.id, kind: row.kind, environment: row.environment },
      },
      manager,
    );
  }
}
