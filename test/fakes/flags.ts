import { randomUUID } from 'node:crypto';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { ChangeRequestState } from '../../src/flags/change-request-state.js';
import type {
  ChangeRequestRow,
  ChangeRequestsRepository,
  NewChangeRequest,
} from '../../src/flags/change-requests.repository.js';
import type { Protection } from '../../src/flags/evaluation/protection.js';
import { FeatureFlag, FlagOverride } from '../../src/flags/flag.entity.js';
import type {
  FlagSchedulesRepository,
  NewSchedule,
  ScheduleRow,
  ScheduleStatus,
} from '../../src/flags/flag-schedules.repository.js';
import type { FlagStoreRepository } from '../../src/flags/flag-store.repository.js';
import type {
  FlagSnapshot,
  FlagsRepository,
  FlagVersionRow,
  NewFlag,
  NewOverride,
} from '../../src/flags/flags.repository.js';
import type { SavepointsRepository } from '../../src/flags/savepoints.repository.js';

/** A fake whose state a savepoint can take back: `saveState()` answers the function that restores it. */
export interface Restorable {
  saveState(): () => void;
}

const copyFlag = (flag: FeatureFlag): FeatureFlag => Object.assign(new FeatureFlag(), structuredClone(flag));

/** `feature_flags`, their versions, overrides and protections in memory. */
export class FakeFlagsRepository implements Pick<FlagsRepository, keyof FlagsRepository>, Restorable {
  flags = new Map<string, FeatureFlag>();
  versionRows: (FlagVersionRow & { flagId: string; organizationId: string; snapshot: FlagSnapshot })[] = [];
  protectionRows: (Protection & { organizationId: string; appId: string })[] = [];
  overrideRows = new Map<string, FlagOverride>();

  saveState(): () => void {
    const flags = new Map([...this.flags].map(([id, flag]) => [id, copyFlag(flag)]));
    const versions = structuredClone(this.versionRows);
    const protections = structuredClone(this.protectionRows);
    const overrides = new Map(this.overrideRows);
    return () => {
      this.flags = flags;
      this.versionRows = versions;
      this.protectionRows = protections;
      this.overrideRows = overrides;
    };
  }

  probe() {
    return Promise.resolve();
  }

  listByApp(organizationId: OrganizationId, appId: string) {
    return Promise.resolve(
      this.owned(organizationId)
        .filter((flag) => flag.appId === appId)
        .sort((a, b) => a.key.localeCompare(b.key))
        .map(copyFlag),
    );
  }

  find(organizationId: OrganizationId, flagId: string) {
    const flag = this.flags.get(flagId);
    return Promise.resolve(flag && flag.organizationId === organizationId ? copyFlag(flag) : null);
  }

  async appOf(organizationId: OrganizationId, flagId: string) {
    return (await this.find(organizationId, flagId))?.appId ?? null;
  }

  idByKey(organizationId: OrganizationId, appId: string, flagKey: string, asId: string | null) {
    const flags = this.owned(organizationId).filter((flag) => flag.appId === appId);
    return Promise.resolve(
      (flags.find((flag) => flag.key === flagKey) ?? flags.find((flag) => flag.id === asId))?.id ?? null,
    );
  }

  appFlags(organizationId: OrganizationId, appId: string) {
    return Promise.resolve(
      this.owned(organizationId)
        .filter((flag) => flag.appId === appId)
        .map(copyFlag),
    );
  }

  count(organizationId: OrganizationId, appId?: string) {
    return Promise.resolve(
      this.owned(organizationId).filter((flag) => appId === undefined || flag.appId === appId).length,
    );
  }

  insert(organizationId: OrganizationId, fields: NewFlag) {
    if ([...this.flags.values()].some((flag) => flag.appId === fields.appId && flag.key === fields.key)) {
      return Promise.resolve(null);
    }
    const now = new Date();
    const flag = Object.assign(new FeatureFlag(), {
      id: randomUUID(),
      ...structuredClone(fields),
      organizationId,
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    this.flags.set(flag.id, flag);
    return Promise.resolve(copyFlag(flag));
  }

  save(organizationId: OrganizationId, flag: FeatureFlag) {
    if (flag.organizationId !== organizationId) throw new Error('a flag is saved by its own organization');
    this.flags.set(flag.id, copyFlag(Object.assign(flag, { updatedAt: new Date() })));
    return Promise.resolve();
  }

  remove(organizationId: OrganizationId, flagId: string) {
    if (this.flags.get(flagId)?.organizationId === organizationId) this.flags.delete(flagId);
    for (const [id, override] of this.overrideRows) if (override.flagId === flagId) this.overrideRows.delete(id);
    return Promise.resolve();
  }

  recordVersion(organizationId: OrganizationId, flag: FeatureFlag, change: string, changedBy: string | null) {
    this.versionRows.push({
      flagId: flag.id,
      organizationId,
      version: flag.version,
      change,
      changed_by: changedBy,
      created_at: new Date(),
      snapshot: structuredClone({
        name: flag.name,
        description: flag.description,
        defaultValue: flag.defaultValue,
        environments: flag.environments,
      }),
    });
    return Promise.resolve();
  }

  versions(organizationId: OrganizationId, flagId: string) {
    return Promise.resolve(
      this.versionRows
        .filter((row) => row.flagId === flagId && row.organizationId === organizationId)
        .sort((a, b) => b.version - a.version)
        .map(({ version, change, changed_by, created_at, snapshot }) => ({
          version,
          change,
          changed_by,
          created_at,
          snapshot,
        })),
    );
  }

  snapshot(organizationId: OrganizationId, flagId: string, version: number) {
    const row = this.versionRows.find(
      (candidate) =>
        candidate.flagId === flagId && candidate.organizationId === organizationId && candidate.version === version,
    );
    return Promise.resolve(row ? structuredClone(row.snapshot) : null);
  }

  protections(organizationId: OrganizationId, appId: string) {
    return Promise.resolve(
      this.protectionRows
        .filter((row) => row.organizationId === organizationId && row.appId === appId)
        .map(({ flagKey, environment }) => ({ flagKey, environment })),
    );
  }

  setProtection(
    organizationId: OrganizationId,
    protection: Protection & { appId: string },
    protect: { createdBy: string | null } | null,
  ) {
    const same = (row: (typeof this.protectionRows)[number]) =>
      row.organizationId === organizationId &&
      row.appId === protection.appId &&
      row.flagKey === protection.flagKey &&
      row.environment === protection.environment;
    this.protectionRows = this.protectionRows.filter((row) => !same(row));
    if (protect) this.protectionRows.push({ organizationId, ...protection });
    return Promise.resolve();
  }

  overrides(organizationId: OrganizationId, flagId: string) {
    return Promise.resolve(
      [...this.overrideRows.values()].filter((row) => row.flagId === flagId && row.organizationId === organizationId),
    );
  }

  findOverride(organizationId: OrganizationId, flagId: string, overrideId: string) {
    const row = this.overrideRows.get(overrideId);
    return Promise.resolve(row && row.flagId === flagId && row.organizationId === organizationId ? row : null);
  }

  insertOverride(organizationId: OrganizationId, fields: NewOverride) {
    const row = Object.assign(new FlagOverride(), {
      id: randomUUID(),
      ...fields,
      organizationId,
      createdAt: new Date(),
    });
    this.overrideRows.set(row.id, row);
    return Promise.resolve(row);
  }

  async removeOverride(organizationId: OrganizationId, flagId: string, overrideId: string) {
    const row = await this.findOverride(organizationId, flagId, overrideId);
    if (row) this.overrideRows.delete(overrideId);
    return row !== null;
  }

  private owned(organizationId: string): FeatureFlag[] {
    return [...this.flags.values()].filter((flag) => flag.organizationId === organizationId);
  }
}

/** `feature_flag_schedules` in memory. */
export class FakeFlagSchedulesRepository
  implements Pick<FlagSchedulesRepository, keyof FlagSchedulesRepository>, Restorable
{
  rows: ScheduleRow[] = [];

  saveState(): () => void {
    const rows = structuredClone(this.rows);
    return () => (this.rows = rows);
  }

  list(organizationId: OrganizationId, flagId: string) {
    return Promise.resolve(this.rows.filter((row) => row.organization_id === organizationId && row.flag_id === flagId));
  }

  countPending(organizationId: OrganizationId, flagId: string) {
    return Promise.resolve(
      this.rows.filter(
        (row) => row.organization_id === organizationId && row.flag_id === flagId && row.status === 'pending',
      ).length,
    );
  }

  insert(organizationId: OrganizationId, schedule: NewSchedule) {
    const row: ScheduleRow = {
      id: randomUUID(),
      organization_id: organizationId,
      app_id: schedule.appId,
      flag_id: schedule.flagId,
      environment: schedule.environment,
      run_at: schedule.runAt,
      change: structuredClone(schedule.change),
      status: 'pending',
      failure_reason: null,
      applied_version: null,
      created_by: schedule.createdBy,
      created_at: new Date(),
      applied_at: null,
      change_request_id: schedule.changeRequestId,
    };
    this.rows.push(row);
    return Promise.resolve(structuredClone(row));
  }

  lockedStatus(organizationId: OrganizationId, flagId: string, scheduleId: string) {
    const row = this.rows.find(
      (candidate) =>
        candidate.id === scheduleId && candidate.flag_id === flagId && candidate.organization_id === organizationId,
    );
    return Promise.resolve(row?.status ?? null);
  }

  cancel(organizationId: OrganizationId, scheduleId: string) {
    this.set(organizationId, scheduleId, { status: 'cancelled' });
    return Promise.resolve();
  }

  claimDue(now: Date) {
    const due = this.rows
      .filter((row) => row.status === 'pending' && row.run_at <= now)
      .sort((a, b) => a.run_at.getTime() - b.run_at.getTime() || a.created_at.getTime() - b.created_at.getTime());
    return Promise.resolve(due[0] ? structuredClone(due[0]) : null);
  }

  markApplied(organizationId: OrganizationId, scheduleId: string, version: number) {
    this.set(organizationId, scheduleId, { status: 'applied', applied_version: version, applied_at: new Date() });
    return Promise.resolve();
  }

  markFailed(organizationId: OrganizationId, scheduleId: string, reason: string) {
    this.set(organizationId, scheduleId, { status: 'failed', failure_reason: reason });
    return Promise.resolve();
  }

  failPending(organizationId: OrganizationId, flagId: string, reason: string) {
    for (const row of this.rows) {
      if (row.organization_id === organizationId && row.flag_id === flagId && row.status === 'pending') {
        Object.assign(row, { status: 'failed' satisfies ScheduleStatus, failure_reason: reason });
      }
    }
    return Promise.resolve();
  }

  private set(organizationId: string, scheduleId: string, change: Partial<ScheduleRow>): void {
    const row = this.rows.find(
      (candidate) => candidate.id === scheduleId && candidate.organization_id === organizationId,
    );
    if (row) Object.assign(row, change);
  }
}

/** `feature_flag_change_requests` in memory; the state as it stands is derived from the flags, as the SQL does. */
export class FakeChangeRequestsRepository
  implements Pick<ChangeRequestsRepository, keyof ChangeRequestsRepository>, Restorable
{
  rows: Omit<ChangeRequestRow, 'current_state'>[] = [];

  constructor(private readonly flags: FakeFlagsRepository) {}

  saveState(): () => void {
    const rows = structuredClone(this.rows);
    return () => (this.rows = rows);
  }

  list(organizationId: OrganizationId, filter: { flagId?: string; state?: string }) {
    return Promise.resolve(
      this.rows
        .filter((row) => row.organization_id === organizationId && (!filter.flagId || row.flag_id === filter.flagId))
        .map((row) => this.asItStands(row))
        .filter((row) => !filter.state || row.current_state === filter.state)
        .reverse(),
    );
  }

  find(organizationId: OrganizationId, id: string) {
    const row = this.rows.find((candidate) => candidate.id === id && candidate.organization_id === organizationId);
    return Promise.resolve(row ? this.asItStands(row) : null);
  }

  insert(organizationId: OrganizationId, request: NewChangeRequest) {
    const row: Omit<ChangeRequestRow, 'current_state'> = {
      id: randomUUID(),
      organization_id: organizationId,
      app_id: request.appId ?? '',
      flag_id: request.flagId,
      flag_key: request.flagKey ?? '',
      kind: request.kind,
      environment: request.environment,
      payload: structuredClone(request.payload),
      before: structuredClone(request.before),
      base_version: request.baseVersion,
      state: 'pending',
      author_user_id: request.authorUserId,
      author_email: request.authorEmail,
      decided_by: null,
      decided_at: null,
      applied_by: null,
      applied_at: null,
      applied_version: null,
      created_at: new Date(),
    };
    this.rows.push(row);
    return Promise.resolve({ ...structuredClone(row), current_state: row.state });
  }

  decide(organizationId: OrganizationId, id: string, state: 'approved' | 'rejected', decidedBy: string | null) {
    this.set(organizationId, id, { state, decided_by: decidedBy, decided_at: new Date() });
    return Promise.resolve();
  }

  markApplied(organizationId: OrganizationId, id: string, appliedBy: string | null, version: number) {
    this.set(organizationId, id, {
      state: 'applied',
      applied_by: appliedBy,
      applied_at: new Date(),
      applied_version: version,
    });
    return Promise.resolve();
  }

  private asItStands(row: Omit<ChangeRequestRow, 'current_state'>): ChangeRequestRow {
    const flags = [...this.flags.flags.values()];
    const stale =
      (row.state === 'pending' || row.state === 'approved') &&
      (row.kind === 'creation'
        ? flags.some((flag) => flag.appId === row.app_id && flag.key === row.flag_key)
        : !flags.some((flag) => flag.id === row.flag_id && flag.version === row.base_version));
    const current_state: ChangeRequestState = stale ? 'stale' : row.state;
    return { ...structuredClone(row), current_state };
  }

  private set(organizationId: string, id: string, change: Partial<ChangeRequestRow>): void {
    const row = this.rows.find((candidate) => candidate.id === id && candidate.organization_id === organizationId);
    if (row) Object.assign(row, change);
  }
}

/** The store's change channel: which apps a change announced. */
export class FakeFlagStoreRepository implements Pick<FlagStoreRepository, 'notifyChanged' | 'load'> {
  notified: string[] = [];

  notifyChanged(appId: string) {
    this.notified.push(appId);
    return Promise.resolve();
  }

  load() {
    return Promise.resolve({ flags: [], overrides: [] });
  }
}

/** Savepoints over fakes: an undone write puts every listed fake back as it was. */
export class FakeSavepoints implements Pick<SavepointsRepository, keyof SavepointsRepository> {
  constructor(private readonly fakes: readonly Restorable[]) {}

  async undone<T>(work: () => Promise<T>): Promise<T> {
    const restore = this.fakes.map((fake) => fake.saveState());
    try {
      return await work();
    } finally {
      for (const back of restore) back();
    }
  }

  async attempt<T>(work: () => Promise<T>): Promise<T> {
    const restore = this.fakes.map((fake) => fake.saveState());
    try {
      return await work();
    } catch (error) {
      for (const back of restore) back();
      throw error;
    }
  }
}
