import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { Inject } from '@nestjs/common';
import type { AuthContext, OrgAuthContext } from '../common/access/auth-context.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { Logger } from 'pino';
import { createLogger } from '../common/logging/logger.js';
import { renderMail } from '../mail/mail-templates.js';
import { MailService } from '../mail/mail.service.js';
import { ValidationFailedException, badRequest, conflict, notFound } from '../common/errors/app-exception.js';
import {
  flagHasDependents,
  flagLimitReached,
  flagTypeUnavailable,
  invalidPrerequisites,
  ruleLimitReached,
} from './flags.exceptions.js';
import { type TierDefinition } from '../common/tiers.js';
import { AuditService } from '../audit/audit.service.js';
import { WebhookEvents } from '../webhooks/webhook-events.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import {
  ENVIRONMENTS,
  isEnvironment,
  type Environment,
  type FlagEnvironmentConfig,
  type FlagRule,
} from './evaluation/flag-types.js';
import { parseFlagValue } from './evaluation/flag-values.js';
import { validateEnvironmentConfig } from './evaluation/validate-rule.js';
import { dependentsOf, prerequisiteGraphProblem } from './evaluation/validate-prerequisites.js';
import { protectedEnvironments, type Protection } from './evaluation/protection.js';
import { FeatureFlag, FlagOverride } from './flag.entity.js';
import { isUuid } from './flag-key-param.js';
import { FLAG_CHANGES_CHANNEL, FlagStore } from './flag-store.js';
import type { CreateFlagDto, CreateOverrideDto, EnvironmentConfigDto, UpdateFlagDto } from './flags.dto.js';
import { featureUnavailable } from '../organizations/organizations.exceptions.js';
import { PlanService } from '../organizations/plan.service.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { NotificationPreferencesService } from '../organizations/notification-preferences.service.js';
import { OrganizationsService } from '../organizations/organizations.service.js';

type FlagChange = 'flag.created' | 'flag.updated' | 'flag.deleted';

/**
 * Who makes a change: a dashboard caller, or the service acting for one (a schedule applying,
 * an approved change request). `auth` is null when no request is behind it; `email` is recorded
 * as the version's author.
 */
export interface FlagActor {
  readonly organizationId: string;
  readonly email: string | null;
  readonly auth: AuthContext | null;
  /** Extra audit metadata (the schedule or change request applied). */
  readonly via?: Record<string, string>;
}

export function actorFromAuth(auth: OrgAuthContext): FlagActor {
  return { organizationId: auth.organizationId, email: auth.caller.email, auth };
}

/** A saved change and what it switched on or off, for the notices sent once it committed. */
export type ChangedFlag = FeatureFlag & { change?: string; toggled?: { environment: Environment; enabled: boolean }[] };

/**
 * Where a change runs when the gate of protected environments makes it (ChangeRequestsService):
 * `within` its transaction, which then calls `committed()` (or `invalidate`) once it commits.
 */
export interface ChangeScope {
  readonly within?: EntityManager;
}

/** An environment's new state as the PUT route and scheduled changes give it. */
export interface EnvironmentInput {
  readonly enabled: boolean;
  readonly value: string;
  readonly rules: EnvironmentConfigDto['rules'];
  /** Undefined: the environment keeps the prerequisites it has. */
  readonly prerequisites?: EnvironmentConfigDto['prerequisites'];
}

const FLAG_EVENT_KIND = { 'flag.created': 'created', 'flag.updated': 'updated', 'flag.deleted': 'deleted' } as const;

/** Attributes that target a device rather than a user or a custom attribute. */
const DEVICE_ATTRIBUTES = new Set([
  'device_model',
  'os_version',
  'app_version',
  'device_id',
  'risk_score',
  'attestation_status',
]);

@Injectable()
export class FlagsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly store: FlagStore,
    private readonly webhooks: WebhookEvents,
    private readonly mail: MailService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly plans: PlanService,
    private readonly apps: AppsRepository,
    private readonly preferences: NotificationPreferencesService,
    private readonly organizations: OrganizationsService,
  ) {
    this.logger = createLogger(config).child({ component: 'flags' });
  }

  private readonly logger: Logger;

  /** Throws unless the flag table answers a read (the health check of the flag store). */
  async probe(): Promise<void> {
    await this.dataSource.query('SELECT 1 FROM feature_flags LIMIT 1');
  }

  async list(auth: OrgAuthContext, appId: string): Promise<FeatureFlag[]> {
    await this.apps.assertExists(auth.organizationId, appId);
    return this.dataSource.getRepository(FeatureFlag).find({
      where: { organizationId: auth.organizationId, appId },
      order: { key: 'ASC' },
    });
  }

  async get(auth: OrgAuthContext, flagId: string): Promise<FeatureFlag> {
    const flag = await this.dataSource
      .getRepository(FeatureFlag)
      .findOneBy({ id: flagId, organizationId: auth.organizationId });
    if (!flag) throw notFound('Flag');
    return flag;
  }

  /**
   * The id of the flag of `appId` whose key is `flagKey`; a UUID that is no key of the app is
   * taken as the flag's id. 404 when the app or the flag is not the caller's.
   */
  async resolveKey(auth: OrgAuthContext, appId: string, flagKey: string): Promise<string> {
    const rows: { id: string }[] = await this.dataSource.query(
      `SELECT id FROM feature_flags
        WHERE organization_id = $1 AND app_id = $2 AND (key = $3 OR ($4::uuid IS NOT NULL AND id = $4::uuid))
        ORDER BY key = $3 DESC LIMIT 1`,
      [auth.organizationId, appId, flagKey, isUuid(flagKey) ? flagKey : null],
    );
    if (!rows[0]) throw notFound('Flag');
    return rows[0].id;
  }

  /**
   * The creation for `actor`, in `scope`; `id` gives the new flag its id (a change request of a
   * creation names the flag it will make). The environments of the key that are protected
   * (decision 0064: protection belongs to the key, and outlives a deleted flag) say so at once.
   */
  async createAs(
    actor: FlagActor,
    appId: string,
    input: CreateFlagDto,
    scope: ChangeScope = {},
    id?: string,
  ): Promise<ChangedFlag> {
    const parsed = parseFlagValue(input.valueType, input.defaultValue);
    if (!parsed.ok) throw new ValidationFailedException([{ field: 'defaultValue', message: parsed.message }]);
    return this.change(
      actor,
      appId,
      'flag.created',
      async (manager, tier) => {
        await this.apps.assertExists(actor.organizationId, appId, { manager });
        if (!tier.features.percentRollout && input.valueType !== 'boolean') {
          throw flagTypeUnavailable(tier);
        }
        await this.assertFlagLimit(manager, actor.organizationId, appId, tier);
        const guarded = new Set(
          (await this.protections(manager, actor.organizationId, appId))
            .filter((p) => p.flagKey === input.key)
            .map((p) => p.environment),
        );
        const initial = (env: Environment): FlagEnvironmentConfig => ({
          ...(guarded.has(env) ? { requireApproval: true } : {}),
          enabled: false,
          value: input.defaultValue,
          rules: [],
        });
        const environments = {
          production: initial('production'),
          staging: initial('staging'),
          development: initial('development'),
        };
        const flag = manager.create(FeatureFlag, {
          ...(id ? { id } : {}),
          organizationId: actor.organizationId,
          appId,
          key: input.key,
          name: input.name,
          description: input.description ?? '',
          valueType: input.valueType,
          defaultValue: input.defaultValue,
          environments,
          version: 1,
          createdBy: actor.email,
        });
        try {
          await manager.save(flag);
        } catch (error) {
          if (isUniqueViolation(error)) throw conflict(`A flag with the key "${input.key}" already exists in this app`);
          throw error;
        }
        return flag;
      },
      scope.within,
    );
  }

  /** The protected environments of the app's flag keys, flag or not (decision 0064). */
  private async protections(manager: EntityManager, organizationId: string, appId: string): Promise<Protection[]> {
    const rows = await manager.query<{ flag_key: string; environment: Environment }[]>(
      `SELECT flag_key, environment FROM feature_flag_protections WHERE organization_id = $1 AND app_id = $2`,
      [organizationId, appId],
    );
    return rows.map((row) => ({ flagKey: row.flag_key, environment: row.environment }));
  }

  /**
   * The environments in which what the key `key` of the app serves reaches a protected
   * environment (its own protection, or a protected dependent's), as the plan has it now.
   */
  async protectedEnvironmentsOf(
    manager: EntityManager,
    organizationId: string,
    appId: string,
    key: string,
  ): Promise<Environment[]> {
    const protections = await this.protections(manager, organizationId, appId);
    if (!protections.length) return [];
    return protectedEnvironments(key, await this.appFlags(manager, appId), protections);
  }

  /** The PATCH for `actor`, in `scope`. */
  updateAs(actor: FlagActor, flagId: string, input: UpdateFlagDto, scope: ChangeScope = {}): Promise<ChangedFlag> {
    return this.modify(
      actor,
      flagId,
      'flag.updated',
      (flag) => {
        if (input.defaultValue !== undefined) {
          const parsed = parseFlagValue(flag.valueType, input.defaultValue);
          if (!parsed.ok) throw new ValidationFailedException([{ field: 'defaultValue', message: parsed.message }]);
          flag.defaultValue = input.defaultValue;
        }
        if (input.name !== undefined) flag.name = input.name;
        if (input.description !== undefined) flag.description = input.description;
        return 'updated';
      },
      scope,
    );
  }

  /** Replaces one environment's state, value and rules, within the plan's targeting features (through the gate). */
  putEnvironmentAs(
    actor: FlagActor,
    flagId: string,
    environment: Environment,
    input: EnvironmentInput,
    scope: ChangeScope = {},
  ): Promise<ChangedFlag> {
    const edit = (flag: FeatureFlag, tier: TierDefinition, manager: EntityManager) =>
      this.applyEnvironment(flag, tier, environment, input, manager);
    return this.modify(actor, flagId, 'flag.updated', edit, scope);
  }

  /** Marks an environment as requiring approved change requests (Enterprise), or clears it. */
  async setApproval(auth: OrgAuthContext, flagId: string, environment: string, requireApproval: boolean) {
    const checked = checkEnvironment(environment);
    return this.modify(actorFromAuth(auth), flagId, 'flag.updated', async (flag, tier, manager) => {
      if (!tier.features.approvalWorkflows) {
        throw featureUnavailable('Change approvals are available on the Enterprise plan');
      }
      // The key's protection (decision 0064) decides; the environment's JSON mirrors it for readers.
      await manager.query(
        requireApproval
          ? `INSERT INTO feature_flag_protections (organization_id, app_id, flag_key, environment, created_by)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`
          : `DELETE FROM feature_flag_protections
              WHERE organization_id = $1 AND app_id = $2 AND flag_key = $3 AND environment = $4`,
        requireApproval
          ? [flag.organizationId, flag.appId, flag.key, checked, auth.caller.email]
          : [flag.organizationId, flag.appId, flag.key, checked],
      );
      const { requireApproval: _previous, ...rest } = flag.environments[checked];
      flag.environments = {
        ...flag.environments,
        [checked]: requireApproval ? { ...rest, requireApproval: true } : rest,
      };
      return `${checked} ${requireApproval ? 'requires' : 'no longer requires'} approval`;
    });
  }

  /**
   * Checks `input` against the flag's type and the plan, and puts it in place of the environment's
   * configuration; throws what the PUT route answers. Returns the version's change text.
   */
  async applyEnvironment(
    flag: FeatureFlag,
    tier: TierDefinition,
    environment: Environment,
    input: EnvironmentInput,
    manager: EntityManager,
  ): Promise<string> {
    const rules = input.rules.map((rule, index) => ({
      name: rule.name,
      priority: rule.priority ?? index,
      conditions: rule.conditions,
      rolloutPercentage: rule.rolloutPercentage ?? null,
      value: rule.value,
    }));
    const problems = validateEnvironmentConfig({ value: input.value, rules }, flag.valueType);
    if (problems.length) throw new ValidationFailedException(problems);
    this.assertTargetingAllowed(tier, input);
    const prerequisites = input.prerequisites ?? flag.environments[environment].prerequisites ?? [];
    if (input.prerequisites?.length && !tier.features.flagDependencies) {
      throw featureUnavailable('Flag prerequisites are available from the Business plan');
    }
    flag.environments = {
      ...flag.environments,
      [environment]: {
        ...(flag.environments[environment].requireApproval ? { requireApproval: true } : {}),
        enabled: input.enabled,
        value: input.value,
        prerequisites: prerequisites.map((p) => ({ flagKey: p.flagKey, value: p.value })),
        rules: input.rules.map((rule, index): FlagRule => ({
          id: randomUUID(),
          name: rule.name,
          priority: rule.priority ?? index,
          isActive: rule.isActive ?? true,
          conditions: rule.conditions.map((c) => ({ attribute: c.attribute, operator: c.operator, value: c.value })),
          rolloutPercentage: rule.rolloutPercentage ?? null,
          value: rule.value,
        })),
      },
    };
    if (input.prerequisites !== undefined) await this.assertPrerequisites(manager, flag);
    return `${environment} ${input.enabled ? 'enabled' : 'disabled'}, ${input.rules.length} rules`;
  }

  /**
   * The flag's prerequisites (as `flag` now holds them) against the app's other flags: each value
   * typed for its flag (422), no unknown key, no cycle, no chain deeper than 5 (400). The
   * organization row is locked by the change, so no concurrent change builds a cycle alongside.
   */
  private async assertPrerequisites(manager: EntityManager, flag: FeatureFlag): Promise<void> {
    const others = await this.appFlags(manager, flag.appId);
    const types = new Map(others.map((other) => [other.key, other.valueType]));
    const problems = ENVIRONMENTS.flatMap((environment) =>
      (flag.environments[environment].prerequisites ?? []).flatMap((prerequisite, index) => {
        const type = prerequisite.flagKey === flag.key ? flag.valueType : types.get(prerequisite.flagKey);
        const parsed = type ? parseFlagValue(type, prerequisite.value) : { ok: true as const };
        return parsed.ok
          ? []
          : [
              {
                field: `prerequisites[${index}].value`,
                message: `${parsed.message} (${prerequisite.flagKey} is ${type})`,
              },
            ];
      }),
    );
    const problem = prerequisiteGraphProblem([...others.filter((other) => other.id !== flag.id), flag]);
    if (problem) {
      throw invalidPrerequisites(problem);
    }
    if (problems.length) throw new ValidationFailedException(problems);
  }

  private appFlags(manager: EntityManager, appId: string): Promise<FeatureFlag[]> {
    return manager.getRepository(FeatureFlag).find({ where: { appId } });
  }

  /** The deletion for `actor`, in `scope`; the flag as it was. */
  async removeAs(actor: FlagActor, flagId: string, scope: ChangeScope = {}): Promise<ChangedFlag> {
    const manager = scope.within ?? this.dataSource.manager;
    const flag = await manager
      .getRepository(FeatureFlag)
      .findOneBy({ id: flagId, organizationId: actor.organizationId });
    if (!flag) throw notFound('Flag');
    return this.change(
      actor,
      flag.appId,
      'flag.deleted',
      async (transaction) => {
        const locked = await this.lockedFlag(transaction, actor.organizationId, flagId);
        if (!locked) throw notFound('Flag');
        const dependents = dependentsOf(await this.appFlags(transaction, flag.appId), flag.key);
        if (dependents.length) {
          throw flagHasDependents(flag.key, dependents);
        }
        await transaction.delete(FeatureFlag, { id: flagId, organizationId: actor.organizationId });
        return locked;
      },
      scope.within,
    );
  }

  async history(auth: OrgAuthContext, flagId: string) {
    await this.get(auth, flagId);
    const rows: { version: number; change: string; changed_by: string | null; created_at: Date; snapshot: unknown }[] =
      await this.dataSource.query(
        `SELECT version, change, changed_by, created_at, snapshot FROM feature_flag_versions
          WHERE flag_id = $1 AND organization_id = $2 ORDER BY version DESC`,
        [flagId, auth.organizationId],
      );
    return rows.map((row) => ({
      version: row.version,
      change: row.change,
      changedBy: row.changed_by,
      createdAt: row.created_at,
      snapshot: row.snapshot,
    }));
  }

  /** Restores an earlier version's settings as a new version (plans with `rollback`; through the gate). */
  rollbackAs(actor: FlagActor, flagId: string, version: number, scope: ChangeScope = {}): Promise<ChangedFlag> {
    return this.modify(
      actor,
      flagId,
      'flag.updated',
      async (flag, tier, manager) => {
        if (!tier.features.rollback) {
          throw featureUnavailable('Rollback is available from the Pro plan');
        }
        const rows: { snapshot: Snapshot }[] = await manager.query(
          `SELECT snapshot FROM feature_flag_versions WHERE flag_id = $1 AND version = $2`,
          [flagId, version],
        );
        if (!rows[0]) throw notFound(`Version ${version} of this flag`);
        const snapshot = rows[0].snapshot;
        flag.name = snapshot.name;
        flag.description = snapshot.description;
        flag.defaultValue = snapshot.defaultValue;
        // Which environments require approval is protection, not content: a rollback keeps it as it is now.
        const current = flag.environments;
        flag.environments = Object.fromEntries(
          ENVIRONMENTS.map((env) => {
            const { requireApproval: _old, ...restored } = snapshot.environments[env];
            return [env, current[env].requireApproval ? { ...restored, requireApproval: true } : restored];
          }),
        ) as FeatureFlag['environments'];
        const restored = ENVIRONMENTS.some((env) => snapshot.environments[env].prerequisites?.length);
        if (restored && !tier.features.flagDependencies) {
          throw featureUnavailable('Flag prerequisites are available from the Business plan');
        }
        // The app's flags may have changed since: the restored prerequisites must still hold.
        if (restored) await this.assertPrerequisites(manager, flag);
        return `rolled back to version ${version}`;
      },
      scope,
    );
  }

  /** The environments of version `version` of a flag, or null when there is no such version. */
  async versionEnvironments(organizationId: string, flagId: string, version: number) {
    const rows: { snapshot: Snapshot }[] = await this.dataSource.query(
      `SELECT snapshot FROM feature_flag_versions WHERE flag_id = $1 AND organization_id = $2 AND version = $3`,
      [flagId, organizationId, version],
    );
    return rows[0]?.snapshot.environments ?? null;
  }

  async listOverrides(auth: OrgAuthContext, flagId: string): Promise<FlagOverride[]> {
    await this.get(auth, flagId);
    return this.dataSource.getRepository(FlagOverride).find({
      where: { flagId, organizationId: auth.organizationId },
      order: { createdAt: 'DESC' },
    });
  }

  /** The override for `actor`, in `scope` (the caller invalidates the app's flags once it commits). */
  async createOverrideAs(
    actor: FlagActor,
    flagId: string,
    input: CreateOverrideDto,
    scope: ChangeScope = {},
  ): Promise<{ value: FlagOverride; appId: string }> {
    const flag = await (scope.within ?? this.dataSource.manager)
      .getRepository(FeatureFlag)
      .findOneBy({ id: flagId, organizationId: actor.organizationId });
    if (!flag) throw notFound('Flag');
    const parsed = parseFlagValue(flag.valueType, input.forcedValue);
    if (!parsed.ok) {
      throw badRequest(`forcedValue: ${parsed.message} (the flag's type is ${flag.valueType})`, {
        hint: 'Check the "forcedValue" field',
      });
    }
    const run = async (manager: EntityManager) => {
      const created = manager.create(FlagOverride, {
        organizationId: actor.organizationId,
        flagId,
        deviceKeyId: input.deviceKeyId,
        forcedValue: input.forcedValue,
        expiresAt: input.expiresAt ?? null,
        createdBy: actor.email,
      });
      await manager.save(created);
      await this.audit.record(
        actor.auth,
        {
          organizationId: actor.organizationId,
          action: 'flag_override.created',
          resourceType: 'flag',
          resourceId: flagId,
          metadata: { deviceKeyId: input.deviceKeyId, ...actor.via },
        },
        manager,
      );
      await notify(manager, flag.appId);
      return created;
    };
    const value = scope.within ? await run(scope.within) : await this.dataSource.transaction(run);
    return { value, appId: flag.appId };
  }

  /** One override of the flag, or null. */
  async findOverride(manager: EntityManager, organizationId: string, flagId: string, overrideId: string) {
    return manager.getRepository(FlagOverride).findOneBy({ id: overrideId, flagId, organizationId });
  }

  /** The removal for `actor`, in `scope` (the caller invalidates the app's flags once it commits). */
  async deleteOverrideAs(
    actor: FlagActor,
    flagId: string,
    overrideId: string,
    scope: ChangeScope = {},
  ): Promise<{ appId: string }> {
    const flag = await (scope.within ?? this.dataSource.manager)
      .getRepository(FeatureFlag)
      .findOneBy({ id: flagId, organizationId: actor.organizationId });
    if (!flag) throw notFound('Flag');
    const run = async (manager: EntityManager) => {
      const result = await manager.delete(FlagOverride, {
        id: overrideId,
        flagId,
        organizationId: actor.organizationId,
      });
      if (!result.affected) throw notFound('Override');
      await this.audit.record(
        actor.auth,
        {
          organizationId: actor.organizationId,
          action: 'flag_override.deleted',
          resourceType: 'flag',
          resourceId: flagId,
          metadata: { overrideId, ...actor.via },
        },
        manager,
      );
      await notify(manager, flag.appId);
    };
    if (scope.within) await run(scope.within);
    else await this.dataSource.transaction(run);
    return { appId: flag.appId };
  }

  /** Forgets the app's flags on this instance at once (the notification does it everywhere). */
  invalidate(appId: string): void {
    this.store.invalidate(appId);
  }

  /**
   * Loads the flag locked, applies `edit`, and saves it as the next version, in `scope` (the
   * request's own transaction when it has none).
   */
  async modify(
    actor: FlagActor,
    flagId: string,
    event: FlagChange,
    edit: (flag: FeatureFlag, tier: TierDefinition, manager: EntityManager) => string | Promise<string>,
    { within }: ChangeScope = {},
  ): Promise<ChangedFlag> {
    // Not locked here: the organization row is locked first, then the flag (in `change`), on every path.
    const rows: { app_id: string }[] = await (within ?? this.dataSource.manager).query(
      `SELECT app_id FROM feature_flags WHERE id = $1 AND organization_id = $2`,
      [flagId, actor.organizationId],
    );
    const appId = rows[0]?.app_id;
    if (!appId) throw notFound('Flag');
    return this.change(
      actor,
      appId,
      event,
      async (manager, tier) => {
        const flag = await this.lockedFlag(manager, actor.organizationId, flagId);
        if (!flag) throw notFound('Flag');
        const before = Object.fromEntries(ENVIRONMENTS.map((env) => [env, flag.environments[env].enabled]));
        const change = await edit(flag, tier, manager);
        flag.version += 1;
        await manager.save(flag);
        const toggled = ENVIRONMENTS.filter((env) => flag.environments[env].enabled !== before[env]).map(
          (environment) => ({ environment, enabled: flag.environments[environment].enabled }),
        );
        return Object.assign(flag, { change, toggled });
      },
      within,
    );
  }

  private lockedFlag(manager: EntityManager, organizationId: string, flagId: string): Promise<FeatureFlag | null> {
    return manager
      .createQueryBuilder(FeatureFlag, 'f')
      .setLock('pessimistic_write')
      .where('f.id = :flagId AND f.organization_id = :org', { flagId, org: organizationId })
      .getOne();
  }

  /**
   * One transaction per change: the change, its version snapshot, its audit entry, the webhook
   * event and the notification every instance's flag cache listens for commit together.
   */
  private async change(
    actor: FlagActor,
    appId: string,
    event: FlagChange,
    work: (manager: EntityManager, tier: TierDefinition) => Promise<ChangedFlag>,
    within?: EntityManager,
  ): Promise<ChangedFlag> {
    const run = async (manager: EntityManager) => {
      const plan = await this.plans.planOf(actor.organizationId, { manager, lock: true });
      const result = await work(manager, plan);
      if (event !== 'flag.deleted') {
        await manager.query(
          `INSERT INTO feature_flag_versions (flag_id, organization_id, version, snapshot, change, changed_by)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            result.id,
            actor.organizationId,
            result.version,
            JSON.stringify(snapshotOf(result)),
            result.change ?? 'created',
            actor.email,
          ],
        );
      } else {
        await manager.query(
          `UPDATE feature_flag_schedules SET status = 'failed', failure_reason = 'The flag was deleted'
            WHERE flag_id = $1 AND organization_id = $2 AND status = 'pending'`,
          [result.id, actor.organizationId],
        );
      }
      await this.audit.record(
        actor.auth,
        {
          organizationId: actor.organizationId,
          action: event,
          resourceType: 'flag',
          resourceId: result.id,
          metadata: { key: result.key, version: result.version, ...actor.via },
        },
        manager,
      );
      await this.webhooks.flagChanged(manager, actor.organizationId, FLAG_EVENT_KIND[event], {
        flag_id: result.id,
        flag_key: result.key,
        app_id: appId,
        version: result.version,
        value_type: result.valueType,
        change: result.change ?? FLAG_EVENT_KIND[event],
        changed_by: actor.email,
      });
      await notify(manager, appId);
      return result;
    };
    if (within) return run(within);
    const flag = await this.dataSource.transaction(run);
    this.committed(flag);
    return flag;
  }

  /** What follows a committed change: this instance's cache at once, and the flagToggle notice. */
  committed(flag: ChangedFlag): void {
    this.store.invalidate(flag.appId);
    if (flag.toggled?.length) {
      this.noticeToggle(flag, flag.toggled).catch((error: unknown) =>
        this.logger.error({ err: error, flagId: flag.id }, 'flag toggle notice failed'),
      );
    }
  }

  /** Mails the organization's Admins and Owners that a flag was switched, unless they opted out (flagToggle). */
  private async noticeToggle(flag: FeatureFlag, toggled: { environment: Environment; enabled: boolean }[]) {
    if (!(await this.preferences.get(flag.organizationId)).flagToggle) return;
    const states = toggled.map((t) => `${t.enabled ? 'on' : 'off'} in ${t.environment}`).join(', ');
    const message = renderMail({
      subject: `Flag ${flag.key} switched ${states}`,
      heading: `Flag ${flag.key} switched ${states}`,
      paragraphs: [`Version ${flag.version} of the flag "${flag.name}" (${flag.key}) switched it ${states}.`],
      action: {
        label: 'Open the flag',
        url: `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/apps/${flag.appId}/flags/${flag.key}`,
      },
      footer: 'You receive this because flag toggle notices are on for your organization.',
    });
    for (const to of await this.organizations.adminAddresses(flag.organizationId))
      this.mail.sendLater({ to, ...message });
  }

  /** Free counts flags per organization; paid plans per app (DESIGN.md section 10). */
  private async assertFlagLimit(
    manager: EntityManager,
    organizationId: string,
    appId: string,
    tier: TierDefinition,
  ): Promise<void> {
    const limit = tier.limits.maxFeatureFlags;
    if (limit === null) return;
    const perOrganization = tier.flagLimitScope === 'organization';
    const rows: { count: string }[] = await manager.query(
      `SELECT count(*) FROM feature_flags WHERE ${perOrganization ? 'organization_id' : 'app_id'} = $1`,
      [perOrganization ? organizationId : appId],
    );
    if (Number(rows[0].count) >= limit) {
      throw flagLimitReached(tier, limit);
    }
  }

  /** Features before limits: a rule the plan cannot have at all says which feature it lacks. */
  private assertTargetingAllowed(tier: TierDefinition, input: EnvironmentInput): void {
    const partialRollout = input.rules.some(
      (r) => r.rolloutPercentage != null && r.rolloutPercentage > 0 && r.rolloutPercentage < 100,
    );
    if (partialRollout && !tier.features.percentRollout) {
      throw featureUnavailable('Percentage rollout is not available on your plan');
    }
    const targetsDevices = input.rules.some((r) => r.conditions.some((c) => DEVICE_ATTRIBUTES.has(c.attribute)));
    if (targetsDevices && !tier.features.deviceTargeting) {
      throw featureUnavailable('Device targeting is not available on your plan');
    }
    const maxRules = tier.limits.maxRulesPerFlag;
    if (maxRules !== null && input.rules.length > maxRules) {
      throw ruleLimitReached(maxRules);
    }
  }
}

interface Snapshot {
  name: string;
  description: string;
  defaultValue: string;
  environments: Record<Environment, FlagEnvironmentConfig>;
}

function snapshotOf(flag: FeatureFlag): Snapshot & { key: string; valueType: string } {
  return {
    key: flag.key,
    name: flag.name,
    description: flag.description,
    valueType: flag.valueType,
    defaultValue: flag.defaultValue,
    environments: flag.environments,
  };
}

/** Delivered to every listening instance when the transaction commits, and not before. */
async function notify(manager: EntityManager, appId: string): Promise<void> {
  await manager.query(`SELECT pg_notify($1, $2)`, [FLAG_CHANGES_CHANNEL, appId]);
}

export function checkEnvironment(environment: string): Environment {
  if (!isEnvironment(environment)) throw badRequest(`environment must be one of: ${ENVIRONMENTS.join(', ')}`);
  return environment;
}
