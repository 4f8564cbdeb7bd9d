import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { hasRole, type AuthContext, type OrgAuthContext } from '../common/access/auth-context.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { forbidden, notFound } from '../common/errors/app-exception.js';
import { changeRequestNotApplicable, selfApproval } from './flags.exceptions.js';
import { AuditService } from '../audit/audit.service.js';
import { ENVIRONMENTS, type Environment } from './evaluation/flag-types.js';
import type { FeatureFlag, FlagOverride } from './flag.entity.js';
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
import { ChangeRequestsRepository, type ChangeRequestRow, type Kind } from './change-requests.repository.js';
import { FlagsRepository } from './flags.repository.js';
import { SavepointsRepository } from './savepoints.repository.js';

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
 * Change approvals (Enterprise) and the one gate of protected environments (`gate`): every write
 * that can change what a device is served in an environment requiring approval becomes a change
 * request; an Admin who is not the author approves or rejects; the author or an Admin applies an
 * approved one, which then does exactly what the direct change does.
 */
@Injectable()
export class ChangeRequestsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly requests: ChangeRequestsRepository,
    private readonly flagRows: FlagsRepository,
    private readonly savepoints: SavepointsRepository,
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
    const passed = await this.uow.run(() => this.gate(writer, write, null));
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
    return this.schedules.applyDue(now, async (schedule): Promise<ScheduleOutcome> => {
      const actor: FlagActor = { organizationId: schedule.organization_id, email: schedule.created_by, auth: null };
      const approval = schedule.change_request_id ? { changeRequestId: schedule.change_request_id } : null;
      const write = { kind: 'scheduled', flagId: schedule.flag_id, schedule } as const;
      const passed = await this.gate({ actor, auth: null }, write, approval);
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
    writer: Writer,
    write: FlagWrite & { kind: K },
    approval: { changeRequestId: string } | null,
  ): Promise<Passed<K>> {
    const organizationId = writer.actor.organizationId;
    const creation = write.kind === 'creation' ? (write as Extract<FlagWrite, { kind: 'creation' }>) : null;
    const tier = await this.plans.planOf(organizationId, { lock: true });
    const flag = creation ? null : await this.flagRows.find(organizationId, write.flagId!);
    if (!creation && !flag) throw notFound('Flag');
    const appId = creation ? creation.appId : flag!.appId;
    const key = creation ? creation.input.key : flag!.key;
    const touched = environmentsTouched(write, flag);
    const reach = touched.length ? await this.flags.protectedEnvironmentsOf(organizationId, appId, key) : [];
    const guarded = tier.features.approvalWorkflows && touched.some((env) => reach.includes(env));
    if (!guarded || approval) {
      const actor = approval ? { ...writer.actor, via: { ...writer.actor.via, ...approval } } : writer.actor;
      return this.perform({ ...writer, actor }, write, approval) as Promise<Passed<K>>;
    }
    // Checked at once as the direct write would be (422/403/404/409), then undone.
    await this.savepoints.undone(() => this.perform(writer, write, null));
    return { proposed: await this.propose(writer, write, flag) };
  }

  /** Does the write, in the gate's unit of work; `after` is what follows its commit. Only `gate` calls it. */
  private async perform(
    { actor, auth }: Writer,
    write: FlagWrite,
    approval: { changeRequestId: string } | null,
  ): Promise<{ applied: Applied[FlagWrite['kind']]; after: () => void }> {
    const committed = (changed: ChangedFlag) => ({ applied: changed, after: () => this.flags.committed(changed) });
    const invalidates = <T>(applied: T, appId: string) => ({ applied, after: () => this.flags.invalidate(appId) });
    switch (write.kind) {
      case 'environment':
        return committed(await this.flags.putEnvironmentAs(actor, write.flagId, write.environment, write.input));
      case 'rollback':
        return committed(await this.flags.rollbackAs(actor, write.flagId, write.version));
      case 'update':
        return committed(await this.flags.updateAs(actor, write.flagId, write.input));
      case 'deletion':
        return { ...committed(await this.flags.removeAs(actor, write.flagId)), applied: null };
      case 'creation':
        return committed(await this.flags.createAs(actor, write.appId, write.input, write.flagId));
      case 'scheduled':
        return committed(await this.schedules.applyScheduled(write.schedule));
      case 'override': {
        const { value, appId } = await this.flags.createOverrideAs(actor, write.flagId, write.input);
        return invalidates(value, appId);
      }
      case 'override_removal': {
        const { appId } = await this.flags.deleteOverrideAs(actor, write.flagId, write.overrideId);
        return invalidates(null, appId);
      }
      case 'schedule': {
        if (!auth) throw new Error('A schedule is created by a dashboard caller');
        const input = { ...write.input, runAt: new Date(write.input.runAt) };
        const row = await this.schedules.create(auth, write.flagId, input, approval?.changeRequestId ?? null);
        return { applied: row, after: () => undefined };
      }
    }
  }

  async list(auth: OrgAuthContext, query: ListChangeRequestsQuery) {
    await this.assertPlan(auth);
    const rows = await this.requests.list(auth.organizationId, { flagId: query.flagId, state: query.state });
    return rows.map(toChangeRequestResponse);
  }

  /** One request with the diff it would apply: what it changes as it was and as it would leave it. */
  async get(auth: OrgAuthContext, id: string) {
    await this.assertPlan(auth);
    const row = await this.find(auth, id);
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
    await this.uow.run(async () => {
      const { author_user_id: author } = await this.find(auth, id, { lock: true });
      if (author !== auth.caller.userId && !hasRole(auth.caller.role, 'admin')) {
        throw forbidden('Only the author or an Admin applies a change request');
      }
      // Every change of a flag takes the organization's lock first: the state read under it holds.
      await this.plans.planOf(auth.organizationId, { lock: true });
      const row = await this.find(auth, id);
      if (row.current_state !== 'approved') throw changeRequestNotApplicable(row.current_state);
      const passed = await this.gate({ actor: actorFromAuth(auth), auth }, writeOf(row), {
        changeRequestId: row.id,
      });
      if ('proposed' in passed) throw new Error('An approved change request passes the gate');
      after = passed.after;
      const applied = passed.applied as Partial<ChangedFlag> | null;
      const appliedVersion = typeof applied?.version === 'number' && row.kind !== 'deletion' ? applied.version : null;
      await this.requests.markApplied(
        auth.organizationId,
        row.id,
        auth.caller.email,
        appliedVersion ?? row.base_version,
      );
      await this.record(auth, row, 'flag_change_request.applied');
    });
    after();
    return this.get(auth, id);
  }

  private async decide(auth: OrgAuthContext, id: string, state: 'approved' | 'rejected') {
    await this.assertPlan(auth);
    await this.uow.run(async () => {
      const row = await this.find(auth, id, { lock: true });
      if (isAuthor(row, auth.caller)) throw selfApproval();
      if (row.current_state !== 'pending') throw changeRequestNotApplicable(row.current_state);
      await this.requests.decide(auth.organizationId, row.id, state, auth.caller.email);
      await this.record(auth, row, `flag_change_request.${state}`);
    });
    return this.get(auth, id);
  }

  /** Records `write` as a pending change request (a due schedule's becomes the environment change it makes). */
  private async propose(
    { actor, auth }: Writer,
    write: FlagWrite,
    flag: FeatureFlag | null,
  ): Promise<ChangeRequestRow> {
    const request = await this.requestOf(write, flag);
    const created = await this.requests.insert(actor.organizationId, {
      appId: flag?.appId ?? (write.kind === 'creation' ? write.appId : null),
      flagId: request.flagId,
      flagKey: flag?.key ?? (write.kind === 'creation' ? write.input.key : null),
      kind: request.kind,
      environment: request.environment,
      payload: request.payload,
      before: request.before,
      baseVersion: flag?.version ?? 0,
      authorUserId: auth?.caller.userId ?? null,
      authorEmail: actor.email,
    });
    await this.record(auth, created, 'flag_change_request.created');
    return created;
  }

  /** What a change request carries for each write: its kind, the write as made, and what it changes as it is now. */
  private async requestOf(write: FlagWrite, flag: FeatureFlag | null) {
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
        const override = await this.flags.findOverride(current.organizationId, current.id, write.overrideId);
        return request('override_removal', { overrideId: write.overrideId }, override);
      }
    }
  }

  private async assertPlan(auth: OrgAuthContext): Promise<void> {
    await this.plans.requireFeature(auth.organizationId, 'approvalWorkflows', {
      message: 'Change approvals are available on the Enterprise plan',
    });
  }

  /** The organization's request with its state as it stands; `lock` holds its row for a decision or an application. */
  private async find(auth: OrgAuthContext, id: string, options: { lock?: boolean } = {}): Promise<ChangeRequestRow> {
    const row = await this.requests.find(auth.organizationId, id, options);
    if (!row) throw notFound('Change request');
    return row;
  }

  private record(auth: AuthContext | null, row: ChangeRequestRow, action: string) {
    return this.audit.record(auth, {
      organizationId: row.organization_id,
      action,
      resourceType: 'flag',
      resourceId: row.flag_id,
      metadata: { changeRequestId: row.id, kind: row.kind, environment: row.environment },
    });
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
