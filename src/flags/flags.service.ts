import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Inject } from '@nestjs/common';
import type { AuthContext, OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';
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
import { isUuid, type FlagAddress } from './flag-key-param.js';
import { FlagStore } from './flag-store.js';
import { FlagStoreRepository } from './flag-store.repository.js';
import { FlagSchedulesRepository } from './flag-schedules.repository.js';
import { FlagsRepository } from './flags.repository.js';
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
  readonly organizationId: OrganizationId;
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
    private readonly uow: UnitOfWork,
    private readonly flags: FlagsRepository,
    private readonly schedules: FlagSchedulesRepository,
    private readonly storeChanges: FlagStoreRepository,
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
  probe(): Promise<void> {
    return this.flags.probe();
  }

  async list(auth: OrgAuthContext, appId: string): Promise<FeatureFlag[]> {
    await this.apps.assertExists(auth.organizationId, appId);
    return this.flags.listByApp(auth.organizationId, appId);
  }

  async get(auth: OrgAuthContext, flagId: string): Promise<FeatureFlag> {
    const flag = await this.flags.find(auth.organizationId, flagId);
    if (!flag) throw notFound('Flag');
    return flag;
  }

  /**
   * The id of the flag a dashboard route names (`FlagAddress`): the id of the path as it is (the
   * route's own lookup answers 404 for a flag that is not the caller's), or the key resolved by
   * `resolveKey`.
   */
  async idOf(auth: OrgAuthContext, address: FlagAddress): Promise<string> {
    return 'flagId' in address ? address.flagId : this.resolveKey(auth, address.appId, address.flagKey);
  }

  /**
   * The id of the flag of `appId` whose key is `flagKey`; a UUID that is no key of the app is
   * taken as the flag's id. 404 when the app or the flag is not the caller's.
   */
  private async resolveKey(auth: OrgAuthContext, appId: string, flagKey: string): Promise<string> {
    const id = await this.flags.idByKey(auth.organizationId, appId, flagKey, isUuid(flagKey) ? flagKey : null);
    if (!id) throw notFound('Flag');
    return id;
  }

  /**
   * The creation for `actor`, in the caller's unit of work; `id` gives the new flag its id (a change request of a
   * creation names the flag it will make). The environments of the key that are protected
   * (decision 0064: protection belongs to the key, and outlives a deleted flag) say so at once.
   */
  async createAs(actor: FlagActor, appId: string, input: CreateFlagDto, id?: string): Promise<ChangedFlag> {
    const parsed = parseFlagValue(input.valueType, input.defaultValue);
    if (!parsed.ok) throw new ValidationFailedException([{ field: 'defaultValue', message: parsed.message }]);
    return this.change(actor, appId, 'flag.created', async (tier) => {
      await this.apps.assertExists(actor.organizationId, appId);
      if (!tier.features.percentRollout && input.valueType !== 'boolean') {
        throw flagTypeUnavailable(tier);
      }
      await this.assertFlagLimit(actor.organizationId, appId, tier);
      const guarded = new Set(
        (await this.flags.protections(actor.organizationId, appId))
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
      const flag = await this.flags.insert(actor.organizationId, {
        ...(id ? { id } : {}),
        appId,
        key: input.key,
        name: input.name,
        description: input.description ?? '',
        valueType: input.valueType,
        defaultValue: input.defaultValue,
        environments,
        createdBy: actor.email,
      });
      if (!flag) throw conflict(`A flag with the key "${input.key}" already exists in this app`);
      return flag;
    });
  }

  /**
   * The environments in which what the key `key` of the app serves reaches a protected
   * environment (its own protection, or a protected dependent's), as the plan has it now.
   */
  async protectedEnvironmentsOf(organizationId: OrganizationId, appId: string, key: string): Promise<Environment[]> {
    const protections: Protection[] = await this.flags.protections(organizationId, appId);
    if (!protections.length) return [];
    return protectedEnvironments(key, await this.flags.appFlags(organizationId, appId), protections);
  }

  /** The PATCH for `actor`, in the caller's unit of work. */
  updateAs(actor: FlagActor, flagId: string, input: UpdateFlagDto): Promise<ChangedFlag> {
    return this.modify(actor, flagId, 'flag.updated', (flag) => {
      if (input.defaultValue !== undefined) {
        const parsed = parseFlagValue(flag.valueType, input.defaultValue);
        if (!parsed.ok) throw new ValidationFailedException([{ field: 'defaultValue', message: parsed.message }]);
        flag.defaultValue = input.defaultValue;
      }
      if (input.name !== undefined) flag.name = input.name;
      if (input.description !== undefined) flag.description = input.description;
      return 'updated';
    });
  }

  /** Replaces one environment's state, value and rules, within the plan's targeting features (through the gate). */
  putEnvironmentAs(
    actor: FlagActor,
    flagId: string,
    environment: Environment,
    input: EnvironmentInput,
  ): Promise<ChangedFlag> {
    const edit = (flag: FeatureFlag, tier: TierDefinition) => this.applyEnvironment(flag, tier, environment, input);
    return this.modify(actor, flagId, 'flag.updated', edit);
  }

  /**
   * Marks an environment as requiring approved change requests (Enterprise), or clears it; then
   * what follows the commit (caches, notices).
   */
  async setApproval(auth: OrgAuthContext, flagId: string, environment: string, requireApproval: boolean) {
    const checked = checkEnvironment(environment);
    const changed = await this.modify(actorFromAuth(auth), flagId, 'flag.updated', async (flag, tier) => {
      if (!tier.features.approvalWorkflows) {
        throw featureUnavailable('Change approvals are available on the Enterprise plan');
      }
      // The key's protection (decision 0064) decides; the environment's JSON mirrors it for readers.
      await this.flags.setProtection(
        auth.organizationId,
        { appId: flag.appId, flagKey: flag.key, environment: checked },
        requireApproval ? { createdBy: auth.caller.email } : null,
      );
      const { requireApproval: _previous, ...rest } = flag.environments[checked];
      flag.environments = {
        ...flag.environments,
        [checked]: requireApproval ? { ...rest, requireApproval: true } : rest,
      };
      return `${checked} ${requireApproval ? 'requires' : 'no longer requires'} approval`;
    });
    await this.uow.afterCommit(() => this.committed(changed));
    return changed;
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
    if (input.prerequisites !== undefined) await this.assertPrerequisites(flag);
    return `${environment} ${input.enabled ? 'enabled' : 'disabled'}, ${input.rules.length} rules`;
  }

  /**
   * The flag's prerequisites (as `flag` now holds them) against the app's other flags: each value
   * typed for its flag (422), no unknown key, no cycle, no chain deeper than 5 (400). The
   * organization row is locked by the change, so no concurrent change builds a cycle alongside.
   */
  private async assertPrerequisites(flag: FeatureFlag): Promise<void> {
    const others = await this.flags.appFlags(flag.organizationId, flag.appId);
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

  /** The deletion for `actor`, in the caller's unit of work; the flag as it was. */
  async removeAs(actor: FlagActor, flagId: string): Promise<ChangedFlag> {
    const flag = await this.flags.find(actor.organizationId, flagId);
    if (!flag) throw notFound('Flag');
    return this.change(actor, flag.appId, 'flag.deleted', async () => {
      const locked = await this.flags.find(actor.organizationId, flagId, { lock: true });
      if (!locked) throw notFound('Flag');
      const dependents = dependentsOf(await this.flags.appFlags(actor.organizationId, flag.appId), flag.key);
      if (dependents.length) {
        throw flagHasDependents(flag.key, dependents);
      }
      await this.flags.remove(actor.organizationId, flagId);
      return locked;
    });
  }

  async history(auth: OrgAuthContext, flagId: string) {
    await this.get(auth, flagId);
    const rows = await this.flags.versions(auth.organizationId, flagId);
    return rows.map((row) => ({
      version: row.version,
      change: row.change,
      changedBy: row.changed_by,
      createdAt: row.created_at,
      snapshot: row.snapshot,
    }));
  }

  /** Restores an earlier version's settings as a new version (plans with `rollback`; through the gate). */
  rollbackAs(actor: FlagActor, flagId: string, version: number): Promise<ChangedFlag> {
    return this.modify(actor, flagId, 'flag.updated', async (flag, tier) => {
      if (!tier.features.rollback) {
        throw featureUnavailable('Rollback is available from the Pro plan');
      }
      const snapshot = await this.flags.snapshot(actor.organizationId, flagId, version);
      if (!snapshot) throw notFound(`Version ${version} of this flag`);
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
      if (restored) await this.assertPrerequisites(flag);
      return `rolled back to version ${version}`;
    });
  }

  /** The environments of version `version` of a flag, or null when there is no such version. */
  async versionEnvironments(organizationId: OrganizationId, flagId: string, version: number) {
    return (await this.flags.snapshot(organizationId, flagId, version))?.environments ?? null;
  }

  async listOverrides(auth: OrgAuthContext, flagId: string): Promise<FlagOverride[]> {
    await this.get(auth, flagId);
    return this.flags.overrides(auth.organizationId, flagId);
  }

  /** The override for `actor`, in the caller's unit of work (which invalidates the app's flags once it commits). */
  async createOverrideAs(
    actor: FlagActor,
    flagId: string,
    input: CreateOverrideDto,
  ): Promise<{ value: FlagOverride; appId: string }> {
    return this.uow.run(async () => {
      const flag = await this.flags.find(actor.organizationId, flagId);
      if (!flag) throw notFound('Flag');
      const parsed = parseFlagValue(flag.valueType, input.forcedValue);
      if (!parsed.ok) {
        throw badRequest(`forcedValue: ${parsed.message} (the flag's type is ${flag.valueType})`, {
          hint: 'Check the "forcedValue" field',
        });
      }
      const value = await this.flags.insertOverride(actor.organizationId, {
        flagId,
        deviceKeyId: input.deviceKeyId,
        forcedValue: input.forcedValue,
        expiresAt: input.expiresAt ?? null,
        createdBy: actor.email,
      });
      await this.audit.record(actor.auth, {
        organizationId: actor.organizationId,
        action: 'flag_override.created',
        resourceType: 'flag',
        resourceId: flagId,
        metadata: { deviceKeyId: input.deviceKeyId, ...actor.via },
      });
      await this.storeChanges.notifyChanged(flag.appId);
      return { value, appId: flag.appId };
    });
  }

  /** One override of the flag, or null. */
  findOverride(organizationId: OrganizationId, flagId: string, overrideId: string): Promise<FlagOverride | null> {
    return this.flags.findOverride(organizationId, flagId, overrideId);
  }

  /** The removal for `actor`, in the caller's unit of work (which invalidates the app's flags once it commits). */
  async deleteOverrideAs(actor: FlagActor, flagId: string, overrideId: string): Promise<{ appId: string }> {
    return this.uow.run(async () => {
      const flag = await this.flags.find(actor.organizationId, flagId);
      if (!flag) throw notFound('Flag');
      if (!(await this.flags.removeOverride(actor.organizationId, flagId, overrideId))) throw notFound('Override');
      await this.audit.record(actor.auth, {
        organizationId: actor.organizationId,
        action: 'flag_override.deleted',
        resourceType: 'flag',
        resourceId: flagId,
        metadata: { overrideId, ...actor.via },
      });
      await this.storeChanges.notifyChanged(flag.appId);
      return { appId: flag.appId };
    });
  }

  /** Forgets the app's flags on this instance at once (the notification does it everywhere). */
  invalidate(appId: string): void {
    this.store.invalidate(appId);
  }

  /**
   * Loads the flag locked, applies `edit`, and saves it as the next version, in the caller's unit
   * of work (its own when none is open).
   */
  async modify(
    actor: FlagActor,
    flagId: string,
    event: FlagChange,
    edit: (flag: FeatureFlag, tier: TierDefinition) => string | Promise<string>,
  ): Promise<ChangedFlag> {
    return this.uow.run(async () => {
      // Not locked here: the organization row is locked first, then the flag (in `change`), on every path.
      const appId = await this.flags.appOf(actor.organizationId, flagId);
      if (!appId) throw notFound('Flag');
      return this.change(actor, appId, event, async (tier) => {
        const flag = await this.flags.find(actor.organizationId, flagId, { lock: true });
        if (!flag) throw notFound('Flag');
        const before = Object.fromEntries(ENVIRONMENTS.map((env) => [env, flag.environments[env].enabled]));
        const change = await edit(flag, tier);
        flag.version += 1;
        await this.flags.save(actor.organizationId, flag);
        const toggled = ENVIRONMENTS.filter((env) => flag.environments[env].enabled !== before[env]).map(
          (environment) => ({ environment, enabled: flag.environments[environment].enabled }),
        );
        return Object.assign(flag, { change, toggled });
      });
    });
  }

  /**
   * One unit of work per change (the caller's when one is open): the change, its version
   * snapshot, its audit entry, the webhook event and the notification every instance's flag cache
   * listens for commit together. What follows the commit (`committed`) is the caller's.
   */
  private change(
    actor: FlagActor,
    appId: string,
    event: FlagChange,
    work: (tier: TierDefinition) => Promise<ChangedFlag>,
  ): Promise<ChangedFlag> {
    return this.uow.run(async () => {
      const plan = await this.plans.planOf(actor.organizationId, { lock: true });
      const result = await work(plan);
      if (event !== 'flag.deleted') {
        await this.flags.recordVersion(actor.organizationId, result, result.change ?? 'created', actor.email);
      } else {
        await this.schedules.failPending(actor.organizationId, result.id, 'The flag was deleted');
      }
      await this.audit.record(actor.auth, {
        organizationId: actor.organizationId,
        action: event,
        resourceType: 'flag',
        resourceId: result.id,
        metadata: { key: result.key, version: result.version, ...actor.via },
      });
      await this.webhooks.announceFlagChange(actor.organizationId, FLAG_EVENT_KIND[event], {
        flag_id: result.id,
        flag_key: result.key,
        app_id: appId,
        version: result.version,
        value_type: result.valueType,
        change: result.change ?? FLAG_EVENT_KIND[event],
        changed_by: actor.email,
      });
      await this.storeChanges.notifyChanged(appId);
      return result;
    });
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
  private async assertFlagLimit(organizationId: OrganizationId, appId: string, tier: TierDefinition): Promise<void> {
    const limit = tier.limits.maxFeatureFlags;
    if (limit === null) return;
    const perOrganization = tier.flagLimitScope === 'organization';
    const count = await this.flags.count(organizationId, perOrganization ? undefined : appId);
    if (count >= limit) {
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

export function checkEnvironment(environment: string): Environment {
  if (!isEnvironment(environment)) throw badRequest(`environment must be one of: ${ENVIRONMENTS.join(', ')}`);
  return environment;
}
