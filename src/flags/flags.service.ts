import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import {
  AppException,
  ValidationFailedException,
  badRequest,
  conflict,
  notFound,
} from '../common/errors/app-exception.js';
import { tierDefinition, type TierDefinition } from '../common/tiers.js';
import { AuditService } from '../audit/audit.service.js';
import { WebhookEvents } from '../webhooks/webhook-events.js';
import { isUniqueViolation } from '../auth/auth.service.js';
import {
  ENVIRONMENTS,
  isEnvironment,
  type Environment,
  type FlagEnvironmentConfig,
  type FlagRule,
} from './evaluation/flag-types.js';
import { parseFlagValue } from './evaluation/flag-values.js';
import { validateEnvironmentConfig } from './evaluation/validate-rule.js';
import { FeatureFlag, FlagOverride } from './flag.entity.js';
import { isUuid } from './flag-key-param.js';
import { FLAG_CHANGES_CHANNEL, FlagStore } from './flag-store.js';
import type { CreateFlagDto, CreateOverrideDto, EnvironmentConfigDto, UpdateFlagDto } from './flags.dto.js';

type FlagChange = 'flag.created' | 'flag.updated' | 'flag.deleted';

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
  ) {}

  async list(auth: OrgAuthContext, appId: string): Promise<FeatureFlag[]> {
    await this.assertApp(this.dataSource.manager, auth, appId);
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

  async create(auth: OrgAuthContext, appId: string, input: CreateFlagDto): Promise<FeatureFlag> {
    const parsed = parseFlagValue(input.valueType, input.defaultValue);
    if (!parsed.ok) throw new ValidationFailedException([{ field: 'defaultValue', message: parsed.message }]);
    return this.change(auth, appId, 'flag.created', async (manager, tier) => {
      await this.assertApp(manager, auth, appId);
      if (!tier.features.percentRollout && input.valueType !== 'boolean') {
        throw new AppException(
          403,
          'flag_type_unavailable',
          `The ${tier.display} plan offers on/off (boolean) flags only`,
          {
            hint: 'Upgrade to Pro for integer, double, string and JSON flags',
          },
        );
      }
      await this.assertFlagLimit(manager, auth, appId, tier);
      const initial = (): FlagEnvironmentConfig => ({ enabled: false, value: input.defaultValue, rules: [] });
      const environments = { production: initial(), staging: initial(), development: initial() };
      const flag = manager.create(FeatureFlag, {
        organizationId: auth.organizationId,
        appId,
        key: input.key,
        name: input.name,
        description: input.description ?? '',
        valueType: input.valueType,
        defaultValue: input.defaultValue,
        environments,
        version: 1,
        createdBy: auth.caller.email,
      });
      try {
        await manager.save(flag);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict(`A flag with the key "${input.key}" already exists in this app`);
        throw error;
      }
      return flag;
    });
  }

  async update(auth: OrgAuthContext, flagId: string, input: UpdateFlagDto): Promise<FeatureFlag> {
    return this.modify(auth, flagId, 'flag.updated', (flag) => {
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

  /** Replaces one environment's state, value and rules, within the plan's targeting features. */
  async putEnvironment(auth: OrgAuthContext, flagId: string, environment: string, input: EnvironmentConfigDto) {
    if (!isEnvironment(environment)) {
      throw badRequest(`environment must be one of: ${ENVIRONMENTS.join(', ')}`);
    }
    return this.modify(auth, flagId, 'flag.updated', (flag, tier) => {
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
      flag.environments = {
        ...flag.environments,
        [environment]: {
          enabled: input.enabled,
          value: input.value,
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
      return `${environment} ${input.enabled ? 'enabled' : 'disabled'}, ${input.rules.length} rules`;
    });
  }

  async remove(auth: OrgAuthContext, flagId: string): Promise<void> {
    const flag = await this.get(auth, flagId);
    await this.change(auth, flag.appId, 'flag.deleted', async (manager) => {
      await manager.delete(FeatureFlag, { id: flagId, organizationId: auth.organizationId });
      return flag;
    });
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

  /** Restores an earlier version's settings as a new version (plans with `rollback`). */
  async rollback(auth: OrgAuthContext, flagId: string, version: number): Promise<FeatureFlag> {
    return this.modify(auth, flagId, 'flag.updated', async (flag, tier, manager) => {
      if (!tier.features.rollback) {
        throw new AppException(403, 'feature_unavailable', 'Rollback is available from the Pro plan');
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
      flag.environments = snapshot.environments;
      return `rolled back to version ${version}`;
    });
  }

  async listOverrides(auth: OrgAuthContext, flagId: string): Promise<FlagOverride[]> {
    await this.get(auth, flagId);
    return this.dataSource.getRepository(FlagOverride).find({
      where: { flagId, organizationId: auth.organizationId },
      order: { createdAt: 'DESC' },
    });
  }

  async createOverride(auth: OrgAuthContext, flagId: string, input: CreateOverrideDto): Promise<FlagOverride> {
    const flag = await this.get(auth, flagId);
    const parsed = parseFlagValue(flag.valueType, input.forcedValue);
    if (!parsed.ok) {
      throw badRequest(`forcedValue: ${parsed.message} (the flag's type is ${flag.valueType})`, {
        hint: 'Check the "forcedValue" field',
      });
    }
    const override = await this.dataSource.transaction(async (manager) => {
      const created = manager.create(FlagOverride, {
        organizationId: auth.organizationId,
        flagId,
        deviceKeyId: input.deviceKeyId,
        forcedValue: input.forcedValue,
        expiresAt: input.expiresAt ?? null,
        createdBy: auth.caller.email,
      });
      await manager.save(created);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'flag_override.created',
          resourceType: 'flag',
          resourceId: flagId,
          metadata: { deviceKeyId: input.deviceKeyId },
        },
        manager,
      );
      await notify(manager, flag.appId);
      return created;
    });
    this.store.invalidate(flag.appId);
    return override;
  }

  async deleteOverride(auth: OrgAuthContext, flagId: string, overrideId: string): Promise<void> {
    const flag = await this.get(auth, flagId);
    await this.dataSource.transaction(async (manager) => {
      const result = await manager.delete(FlagOverride, {
        id: overrideId,
        flagId,
        organizationId: auth.organizationId,
      });
      if (!result.affected) throw notFound('Override');
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'flag_override.deleted',
          resourceType: 'flag',
          resourceId: flagId,
          metadata: { overrideId },
        },
        manager,
      );
      await notify(manager, flag.appId);
    });
    this.store.invalidate(flag.appId);
  }

  /** Loads the flag locked, applies `edit`, and saves it as the next version. */
  private async modify(
    auth: OrgAuthContext,
    flagId: string,
    event: FlagChange,
    edit: (flag: FeatureFlag, tier: TierDefinition, manager: EntityManager) => string | Promise<string>,
  ): Promise<FeatureFlag> {
    const { appId } = await this.get(auth, flagId);
    return this.change(auth, appId, event, async (manager, tier) => {
      const flag = await manager
        .createQueryBuilder(FeatureFlag, 'f')
        .setLock('pessimistic_write')
        .where('f.id = :flagId AND f.organization_id = :org', { flagId, org: auth.organizationId })
        .getOne();
      if (!flag) throw notFound('Flag');
      const change = await edit(flag, tier, manager);
      flag.version += 1;
      await manager.save(flag);
      return Object.assign(flag, { change });
    });
  }

  /**
   * One transaction per change: the change, its version snapshot, its audit entry and the
   * notification every instance's flag cache listens for commit together.
   */
  private async change(
    auth: OrgAuthContext,
    appId: string,
    event: FlagChange,
    work: (manager: EntityManager, tier: TierDefinition) => Promise<FeatureFlag & { change?: string }>,
  ): Promise<FeatureFlag> {
    const flag = await this.dataSource.transaction(async (manager) => {
      const rows: { service_tier: string }[] = await manager.query(
        `SELECT service_tier FROM organizations WHERE id = $1 FOR UPDATE`,
        [auth.organizationId],
      );
      const result = await work(manager, tierDefinition(rows[0].service_tier));
      if (event !== 'flag.deleted') {
        await manager.query(
          `INSERT INTO feature_flag_versions (flag_id, organization_id, version, snapshot, change, changed_by)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [
            result.id,
            auth.organizationId,
            result.version,
            JSON.stringify(snapshotOf(result)),
            result.change ?? 'created',
            auth.caller.email,
          ],
        );
      }
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: event,
          resourceType: 'flag',
          resourceId: result.id,
          metadata: { key: result.key, version: result.version },
        },
        manager,
      );
      await this.webhooks.flagChanged(manager, auth.organizationId, FLAG_EVENT_KIND[event], {
        flag_id: result.id,
        flag_key: result.key,
        app_id: appId,
        version: result.version,
        value_type: result.valueType,
        change: result.change ?? FLAG_EVENT_KIND[event],
        changed_by: auth.caller.email,
      });
      await notify(manager, appId);
      return result;
    });
    this.store.invalidate(appId);
    return flag;
  }

  private async assertApp(manager: EntityManager, auth: OrgAuthContext, appId: string): Promise<void> {
    const rows: unknown[] = await manager.query(`SELECT 1 FROM apps WHERE id = $1 AND organization_id = $2`, [
      appId,
      auth.organizationId,
    ]);
    if (!rows.length) throw notFound('App');
  }

  /** Free counts flags per organization; paid plans per app (DESIGN.md section 10). */
  private async assertFlagLimit(
    manager: EntityManager,
    auth: OrgAuthContext,
    appId: string,
    tier: TierDefinition,
  ): Promise<void> {
    const limit = tier.limits.maxFeatureFlags;
    if (limit === null) return;
    const perOrganization = tier.flagLimitScope === 'organization';
    const rows: { count: string }[] = await manager.query(
      `SELECT count(*) FROM feature_flags WHERE ${perOrganization ? 'organization_id' : 'app_id'} = $1`,
      [perOrganization ? auth.organizationId : appId],
    );
    if (Number(rows[0].count) >= limit) {
      throw new AppException(
        403,
        'flag_limit_reached',
        `Your plan allows ${limit} flags ${tier.flagLimitScope === 'organization' ? 'per organization' : 'per app'}`,
        {
          hint: 'Upgrade the plan or delete a flag',
        },
      );
    }
  }

  private assertTargetingAllowed(tier: TierDefinition, input: EnvironmentConfigDto): void {
    const maxRules = tier.limits.maxRulesPerFlag;
    if (maxRules !== null && input.rules.length > maxRules) {
      throw new AppException(403, 'rule_limit_reached', `Your plan allows ${maxRules} rules per flag`, {
        hint: maxRules === 0 ? 'Targeting rules are available from the Pro plan' : 'Upgrade the plan for more rules',
      });
    }
    const partialRollout = input.rules.some(
      (r) => r.rolloutPercentage != null && r.rolloutPercentage > 0 && r.rolloutPercentage < 100,
    );
    if (partialRollout && !tier.features.percentRollout) {
      throw new AppException(403, 'feature_unavailable', 'Percentage rollout is not available on your plan');
    }
    const targetsDevices = input.rules.some((r) => r.conditions.some((c) => DEVICE_ATTRIBUTES.has(c.attribute)));
    if (targetsDevices && !tier.features.deviceTargeting) {
      throw new AppException(403, 'feature_unavailable', 'Device targeting is not available on your plan');
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
