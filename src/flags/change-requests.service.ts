import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { hasRole, type AuthContext, type OrgAuthContext } from '../common/access/auth-context.js';
import { forbidden, notFound } from '../common/errors/app-exception.js';
import { changeRequestNotApplicable, selfApproval } from './flags.exceptions.js';
import { AuditService } from '../audit/audit.service.js';
import { ENVIRONMENTS, type Environment } from './evaluation/flag-types.js';
import { FeatureFlag, type FlagOverride } from './flag.entity.js';
import { FlagSchedulesService, mergedInput, type ScheduleOutcome, type ScheduleRow } from './flag-schedules.service.js';
import type {
  CreateFlagDto,
  CreateOverrideDto,
  CreateScheduleDto,
  EnvironmentConfigDto,
  ListChangeRequestsQuery,
  UpdateFlagDto,
} from './flags.dto.js';
import {
  FlagsService,
  actorFromAuth,
  checkEnvironment,
  type ChangedFlag,
  type EnvironmentInput,
  type FlagActor,
} from './flags.service.js';
import { PlanService } from '../organizations/plan.service.js';
import type { ChangeRequestState } from './change-request-state.js';

/** What a change request carries: one kind per write that can change what a protected environment serves. */
type Kind =
  'environment' | 'rollback' | 'schedule' | 'update' | 'deletion' | 'creation' | 'override' | 'override_removal';

/**
 * Every write that can change what a device is served (decision 0064). `scheduled` is a due
 * schedule the schedule job applies; the others are the dashboard routes (by id or by key, from a
 * session, a personal key or the CLI) and, once approved, the change requests made of them.
 */
export type FlagWrite =
  | { kind: 'environment'; flagId: string; environment: Environment; input: EnvironmentInput }
  | { kind: 'rollback'; flagId: string; version: number }
  | { kind: 'schedule'; flagId: string; input: CreateScheduleDto }
  | { kind: 'update'; flagId: string; input: UpdateFlagDto }
  | { kind: 'deletion'; flagId: string }
  | { kind: 'creation'; appId: string; input: CreateFlagDto; flagId?: string }
  | { kind: 'override'; flagId: string; input: CreateOverrideDto }
  | { kind: 'override_removal'; flagId: string; overrideId: string }
  | { kind: 'scheduled'; flagId: string; schedule: ScheduleRow };

/** What each write answers when it applies. */
interface Applied {
  environment: ChangedFlag;
  rollback: ChangedFlag;
  schedule: ScheduleRow;
  update: ChangedFlag;
  deletion: null;
  creation: ChangedFlag;
  override: FlagOverride;
  override_removal: null;
  scheduled: ChangedFlag;
}

/** The environments whose served values a write can change, `flag` being the flag it targets as it is. */
export function environmentsTouched(write: FlagWrite, flag: FeatureFlag | null): readonly Environment[] {
  switch (write.kind) {
    case 'environment':
      return [write.environment];
    case 'schedule':
      return [write.input.environment];
    case 'scheduled':
      return [write.schedule.environment];
    case 'update':
      // The default is what a disabled environment (or a failed prerequisite) serves, anywhere;
      // a name or a description serves nothing.
      return write.input.defaultValue !== undefined && write.input.defaultValue !== flag?.defaultValue
        ? ENVIRONMENTS
        : [];
    // Overrides beat every environment; a rollback, a deletion and a creation change them all.
    case 'rollback':
    case 'deletion':
    case 'creation':
    case 'override':
    case 'override_removal':
      return ENVIRONMENTS;
  }
}

/** Who writes: the dashboard caller, or (for a due schedule) its author with no request behind it. */
interface Writer {
  readonly actor: FlagActor;
  readonly auth: OrgAuthContext | null;
}

type Passed<K extends FlagWrite['kind']> = { applied: Applied[K]; after: () => void } | { proposed: ChangeRequestRow };

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
 * is stale; so is a creation whose key has a flag again. Derived on every read, so it can never
 * lag behind the flag.
 */
const STATE = `CASE WHEN r.state IN ('pending', 'approved') AND CASE WHEN r.kind = 'creation'
    THEN EXISTS (SELECT 1 FROM feature_flags f WHERE f.app_id = r.app_id AND f.key = r.flag_key)
    ELSE NOT EXISTS (SELECT 1 FROM feature_flags f WHERE f.id = r.flag_id AND f.version = r.base_version) END
  THEN 'stale' ELSE r.state END`;
const SELECT = `SELECT r.*, ${STATE} AS current_state FROM feature_flag_change_requests r`;

/**
 * Change approvals (Enterprise) and the one gate of protected environments (`gate`): every write
 * that can change what a device is served in an environment requiring approval becomes a change
 * request; an Admin who is not the author approves or rejects; the author or an Admin applies an
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

  /**
   * A dashboard write (every flag write route, by id or by key, whoever calls it): through the
   * gate in one transaction, then what follows its commit (caches, notices).
   */
  async submit<W extends Exclude<FlagWrite, { kind: 'scheduled' }>>(
    auth: OrgAuthContext,
    write: W,
  ): Promise<Outcome<Applied[W['kind']]>> {
    const writer: Writer = { actor: actorFromAuth(auth), auth };
    const passed = await this.dataSource.transaction((manager) => this.gate(manager, writer, write, null));
    if ('proposed' in passed) return { proposed: toChangeRequestResponse(passed.proposed) };
    passed.after();
    return { applied: passed.applied as Applied[W['kind']] };
  }

  /** The environment PUT (also how a flag is toggled). */
  putEnvironment(auth: OrgAuthContext, flagId: string, environment: string, input: EnvironmentConfigDto) {
    return this.submit(auth, { kind: 'environment', flagId, environment: checkEnvironment(environment), input });
  }

  /** The schedule job's step: a due schedule through the gate (ScheduleOutcome for applyDue). */
  applyDueSchedule(now: Date): Promise<boolean> {
    return this.schedules.applyDue(now, async (manager, schedule): Promise<ScheduleOutcome> => {
      const actor: FlagActor = { organizationId: schedule.organization_id, email: schedule.created_by, auth: null };
      const approval = schedule.change_request_id ? { changeRequestId: schedule.change_request_id } : null;
      const write = { kind: 'scheduled', flagId: schedule.flag_id, schedule } as const;
      const passed = await this.gate(manager, { actor, auth: null }, write, approval);
      if ('proposed' in passed) return { changeRequestId: passed.proposed.id };
      return { appliedVersion: passed.applied.version, after: passed.after };
    });
  }

  /**
   * THE gate of protected environments, the one function every write that can change what a
   * device is served passes (the dashboard routes through `submit`, approved change requests
   * through `apply`, due schedules through `applyDueSchedule`). Under the organization's lock,
   * which every flag change, protection included, takes first: applies `write` when it touches
   * no environment in which the key's protection reaches it (its own, or a protected dependent's
   * through prerequisites), or when an approved change request (or a schedule one made) carries
   * it; otherwise checks it as the direct write would be, leaves everything as it was and records
   * it as a pending change request instead.
   */
  private async gate<K extends FlagWrite['kind']>(
    manager: EntityManager,
    writer: Writer,
    write: FlagWrite & { kind: K },
    approval: { changeRequestId: string } | null,
  ): Promise<Passed<K>> {
    const organizationId = writer.actor.organizationId;
    const creation = write.kind === 'creation' ? (write as Extract<FlagWrite, { kind: 'creation' }>) : null;
    const tier = await this.plans.planOf(organizationId, { manager, lock: true });
    const flag = creation
      ? null
      : await manager.getRepository(FeatureFlag).findOneBy({ id: write.flagId!, organizationId });
    if (!creation && !flag) throw notFound('Flag');
    const appId = creation ? creation.appId : flag!.appId;
    const key = creation ? creation.input.key : flag!.key;
    const touched = environmentsTouched(write, flag);
    const reach = touched.length ? await this.flags.protectedEnvironmentsOf(manager, organizationId, appId, key) : [];
    const guarded = tier.features.approvalWorkflows && touched.some((env) => reach.includes(env));
    if (!guarded || approval) {
      const actor = approval ? { ...writer.actor, via: { ...writer.actor.via, ...approval } } : writer.actor;
      return this.perform(manager, { ...writer, actor }, write, approval) as Promise<Passed<K>>;
    }
    // Checked at once as the direct write would be (422/403/404/409), then undone.
    await manager.query('SAVEPOINT protected_write');
    try {
      await this.perform(manager, writer, write, null);
    } finally {
      await manager.query('ROLLBACK TO SAVEPOINT protected_write');
    }
    return { proposed: await this.propose(manager, writer, write, flag) };
  }

  /** Does the write, in `manager`; `after` is what follows its commit. Only `gate` calls it. */
  private async perform(
    manager: EntityManager,
    { actor, auth }: Writer,
    write: FlagWrite,
    approval: { changeRequestId: string } | null,
  ): Promise<{ applied: Applied[FlagWrite['kind']]; after: () => void }> {
    const scope = { within: manager };
    const committed = (changed: ChangedFlag) => ({ applied: changed, after: () => this.flags.committed(changed) });
    const invalidates = <T>(applied: T, appId: string) => ({ applied, after: () => this.flags.invalidate(appId) });
    switch (write.kind) {
      case 'environment':
        return committed(await this.flags.putEnvironmentAs(actor, write.flagId, write.environment, write.input, scope));
      case 'rollback':
        return committed(await this.flags.rollbackAs(actor, write.flagId, write.version, scope));
      case 'update':
        return committed(await this.flags.updateAs(actor, write.flagId, write.input, scope));
      case 'deletion':
        return { ...committed(await this.flags.removeAs(actor, write.flagId, scope)), applied: null };
      case 'creation':
        return committed(await this.flags.createAs(actor, write.appId, write.input, scope, write.flagId));
      case 'scheduled':
        return committed(await this.schedules.applyScheduled(manager, write.schedule));
      case 'override': {
        const { value, appId } = await this.flags.createOverrideAs(actor, write.flagId, write.input, scope);
        return invalidates(value, appId);
      }
      case 'override_removal': {
        const { appId } = await this.flags.deleteOverrideAs(actor, write.flagId, write.overrideId, scope);
        return invalidates(null, appId);
      }
      case 'schedule': {
        if (!auth) throw new Error('A schedule is created by a dashboard caller');
        const input = { ...write.input, runAt: new Date(write.input.runAt) };
        const row = await this.schedules.create(auth, write.flagId, input, manager, approval?.changeRequestId ?? null);
        return { applied: row, after: () => undefined };
      }
    }
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

  /** One request with the diff it would apply: what it changes as it was and as it would leave it. */
  async get(auth: OrgAuthContext, id: string) {
    await this.assertPlan(auth);
    const row = await this.find(this.dataSource.manager, auth.organizationId, id);
    return { ...toChangeRequestResponse(row), diff: { before: row.before, after: await this.after(auth, row) } };
  }

  private async after(auth: OrgAuthContext, row: ChangeRequestRow): Promise<unknown> {
    switch (row.kind) {
      case 'rollback':
        return this.flags.versionEnvironments(auth.organizationId, row.flag_id, row.payload.version as number);
      case 'environment': {
        const { requireApproval: _protection, ...before } = row.before as Record<string, unknown>;
        return { ...before, ...row.payload };
      }
      case 'update':
        return { ...(row.before as Record<string, unknown>), ...row.payload };
      case 'schedule':
        return { schedule: row.payload };
      case 'creation':
      case 'override':
        return row.payload;
      case 'deletion':
      case 'override_removal':
        return null;
    }
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
    let after: () => void = () => undefined;
    await this.dataSource.transaction(async (manager) => {
      const { author_user_id: author } = await this.locked(manager, auth, id);
      if (author !== auth.caller.userId && !hasRole(auth.caller.role, 'admin')) {
        throw forbidden('Only the author or an Admin applies a change request');
      }
      // Every change of a flag takes the organization's lock first: the state read under it holds.
      await this.plans.planOf(auth.organizationId, { manager, lock: true });
      const row = await this.find(manager, auth.organizationId, id);
      if (row.current_state !== 'approved') throw changeRequestNotApplicable(row.current_state);
      const passed = await this.gate(manager, { actor: actorFromAuth(auth), auth }, writeOf(row), {
        changeRequestId: row.id,
      });
      if ('proposed' in passed) throw new Error('An approved change request passes the gate');
      after = passed.after;
      const applied = passed.applied as Partial<ChangedFlag> | null;
      const appliedVersion = typeof applied?.version === 'number' && row.kind !== 'deletion' ? applied.version : null;
      await manager.query(
        `UPDATE feature_flag_change_requests
            SET state = 'applied', applied_by = $2, applied_at = now(), applied_version = $3, updated_at = now()
          WHERE id = $1`,
        [row.id, auth.caller.email, appliedVersion ?? row.base_version],
      );
      await this.record(manager, auth, row, 'flag_change_request.applied');
    });
    after();
    return this.get(auth, id);
  }

  private async decide(auth: OrgAuthContext, id: string, state: 'approved' | 'rejected') {
    await this.assertPlan(auth);
    await this.dataSource.transaction(async (manager) => {
      const row = await this.locked(manager, auth, id);
      if (isAuthor(row, auth.caller)) throw selfApproval();
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

  /** Records `write` as a pending change request (a due schedule's becomes the environment change it makes). */
  private async propose(
    manager: EntityManager,
    { actor, auth }: Writer,
    write: FlagWrite,
    flag: FeatureFlag | null,
  ): Promise<ChangeRequestRow> {
    const request = await this.requestOf(manager, write, flag);
    const [created] = await manager.query<ChangeRequestRow[]>(
      `INSERT INTO feature_flag_change_requests
         (organization_id, app_id, flag_id, flag_key, kind, environment, payload, before, base_version,
          author_user_id, author_email)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *, state AS current_state`,
      [
        actor.organizationId,
        flag?.appId ?? (write.kind === 'creation' ? write.appId : null),
        request.flagId,
        flag?.key ?? (write.kind === 'creation' ? write.input.key : null),
        request.kind,
        request.environment,
        JSON.stringify(request.payload),
        JSON.stringify(request.before),
        flag?.version ?? 0,
        auth?.caller.userId ?? null,
        actor.email,
      ],
    );
    await this.record(manager, auth, created, 'flag_change_request.created');
    return created;
  }

  /** What a change request carries for each write: its kind, the write as made, and what it changes as it is now. */
  private async requestOf(manager: EntityManager, write: FlagWrite, flag: FeatureFlag | null) {
    const request = (kind: Kind, payload: unknown, before: unknown, environment: Environment | null = null) => ({
      kind,
      flagId: flag?.id ?? randomUUID(),
      environment,
      payload: payload as Record<string, unknown>,
      before,
    });
    const current = flag!;
    switch (write.kind) {
      case 'environment':
        return request('environment', write.input, current.environments[write.environment], write.environment);
      case 'scheduled': {
        const { schedule } = write;
        const input = mergedInput(current, schedule.environment, schedule.change);
        const rules = input.rules.map((rule) => {
          const { id: _id, ...rest } = rule as typeof rule & { id?: string };
          return rest;
        });
        const payload = { ...input, rules };
        return request('environment', payload, current.environments[schedule.environment], schedule.environment);
      }
      case 'rollback':
        return request('rollback', { version: write.version }, current.environments);
      case 'schedule': {
        const { environment, runAt, change } = write.input;
        return request('schedule', { environment, runAt, change }, current.environments[environment], environment);
      }
      case 'update':
        return request('update', write.input, {
          name: current.name,
          description: current.description,
          defaultValue: current.defaultValue,
        });
      case 'deletion':
        return request('deletion', {}, { defaultValue: current.defaultValue, environments: current.environments });
      case 'creation':
        return { ...request('creation', write.input, null), flagId: write.flagId ?? randomUUID() };
      case 'override':
        return request('override', write.input, null);
      case 'override_removal': {
        const override = await this.flags.findOverride(manager, current.organizationId, current.id, write.overrideId);
        return request('override_removal', { overrideId: write.overrideId }, override);
      }
    }
  }

  private async assertPlan(auth: OrgAuthContext): Promise<void> {
    await this.plans.requireFeature(auth.organizationId, 'approvalWorkflows', {
      message: 'Change approvals are available on the Enterprise plan',
    });
  }

  private async find(manager: EntityManager, organizationId: string, id: string): Promise<ChangeRequestRow> {
    const rows = await manager.query<ChangeRequestRow[]>(`${SELECT} WHERE r.id = $1 AND r.organization_id = $2`, [
      id,
      organizationId,
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
    return this.find(manager, auth.organizationId, id);
  }

  private record(manager: EntityManager, auth: AuthContext | null, row: ChangeRequestRow, action: string) {
    return this.audit.record(
      auth,
      {
        organizationId: row.organization_id,
        action,
        resourceType: 'flag',
        resourceId: row.flag_id,
        metadata: { changeRequestId: row.id, kind: row.kind, environment: row.environment },
      },
      manager,
    );
  }
}

/** The write an approved change request carries, as its route would have made it. */
function writeOf(row: ChangeRequestRow): Exclude<FlagWrite, { kind: 'scheduled' }> {
  const payload = row.payload as never;
  switch (row.kind) {
    case 'environment':
      return { kind: 'environment', flagId: row.flag_id, environment: row.environment!, input: payload };
    case 'rollback':
      return { kind: 'rollback', flagId: row.flag_id, version: row.payload.version as number };
    case 'schedule':
      return { kind: 'schedule', flagId: row.flag_id, input: payload };
    case 'update':
      return { kind: 'update', flagId: row.flag_id, input: payload };
    case 'deletion':
      return { kind: 'deletion', flagId: row.flag_id };
    case 'creation':
      return { kind: 'creation', appId: row.app_id, input: payload, flagId: row.flag_id };
    case 'override': {
      const { expiresAt, ...input } = row.payload as { expiresAt?: string | null };
      return {
        kind: 'override',
        flagId: row.flag_id,
        input: { ...(input as CreateOverrideDto), ...(expiresAt ? { expiresAt: new Date(expiresAt) } : {}) },
      };
    }
    case 'override_removal':
      return { kind: 'override_removal', flagId: row.flag_id, overrideId: row.payload.overrideId as string };
  }
}

/**
 * Whether `caller` wrote the request: the same user, or, for a request a due schedule made (no
 * user recorded, the schedule's creator as its author address), the same address. Four eyes hold
 * for schedules too: their creator does not approve what they turn into.
 */
function isAuthor(
  row: Pick<ChangeRequestRow, 'author_user_id' | 'author_email'>,
  caller: { userId: string | null; email: string | null },
): boolean {
  if (row.author_user_id !== null) return row.author_user_id === caller.userId;
  return (
    row.author_email !== null && caller.email !== null && row.author_email.toLowerCase() === caller.email.toLowerCase()
  );
}
