import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Environment, FlagEnvironmentConfig } from './evaluation/flag-types.js';
import type { Protection } from './evaluation/protection.js';
import { FeatureFlag, FlagOverride } from './flag.entity.js';

/** A flag version's stored settings. */
export interface FlagSnapshot {
  name: string;
  description: string;
  defaultValue: string;
  environments: Record<Environment, FlagEnvironmentConfig>;
}

/** One row of a flag's history. */
export interface FlagVersionRow {
  version: number;
  change: string;
  changed_by: string | null;
  created_at: Date;
  snapshot: unknown;
}

/** A new flag's fields (`id` when a change request named the flag it makes). */
export type NewFlag = Pick<
  FeatureFlag,
  'appId' | 'key' | 'name' | 'description' | 'valueType' | 'defaultValue' | 'environments' | 'createdBy'
> & { id?: string };

/** A new device override's fields. */
export type NewOverride = Pick<FlagOverride, 'flagId' | 'deviceKeyId' | 'forcedValue' | 'expiresAt' | 'createdBy'>;

/**
 * The owner of `feature_flags`, their versions, device overrides and key protections (decision
 * 0064). Every method takes the organization: another organization's flag is as unknown as a
 * missing one.
 */
@Injectable()
export class FlagsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Throws unless the flag table answers a read (the health check of the flag store). */
  async probe(): Promise<void> {
    await this.uow.manager().query('SELECT 1 FROM feature_flags LIMIT 1');
  }

  /** The app's flags, by key. */
  listByApp(organizationId: OrganizationId, appId: string): Promise<FeatureFlag[]> {
    return this.flags().find({ where: { organizationId, appId }, order: { key: 'ASC' } });
  }

  /** The flag, or null; `lock` holds it FOR UPDATE until the unit of work ends. */
  find(organizationId: OrganizationId, flagId: string, options: { lock?: boolean } = {}): Promise<FeatureFlag | null> {
    if (!options.lock) return this.flags().findOneBy({ id: flagId, organizationId });
    return this.flags()
      .createQueryBuilder('f')
      .setLock('pessimistic_write')
      .where('f.id = :flagId AND f.organization_id = :organizationId', { flagId, organizationId })
      .getOne();
  }

  /** The app of the flag, or null (not locked). */
  async appOf(organizationId: OrganizationId, flagId: string): Promise<string | null> {
    const rows = await this.uow
      .manager()
      .query<{ app_id: string }[]>(`SELECT app_id FROM feature_flags WHERE id = $1 AND organization_id = $2`, [
        flagId,
        organizationId,
      ]);
    return rows[0]?.app_id ?? null;
  }

  /** The id of the app's flag whose key is `flagKey`, else of the flag whose id is `asId`; null when neither. */
  async idByKey(
    organizationId: OrganizationId,
    appId: string,
    flagKey: string,
    asId: string | null,
  ): Promise<string | null> {
    const rows = await this.uow.manager().query<{ id: string }[]>(
      `SELECT id FROM feature_flags
        WHERE organization_id = $1 AND app_id = $2 AND (key = $3 OR ($4::uuid IS NOT NULL AND id = $4::uuid))
        ORDER BY key = $3 DESC LIMIT 1`,
      [organizationId, appId, flagKey, asId],
    );
    return rows[0]?.id ?? null;
  }

  /** Every flag of the app (for the prerequisite graph). */
  appFlags(organizationId: OrganizationId, appId: string): Promise<FeatureFlag[]> {
    return this.flags().find({ where: { organizationId, appId } });
  }

  /** How many flags the organization holds, or (with `appId`) the app. */
  count(organizationId: OrganizationId, appId?: string): Promise<number> {
    return this.flags().countBy(appId === undefined ? { organizationId } : { organizationId, appId });
  }

  /** Inserts the flag at version 1; null when the app has a flag with this key. */
  async insert(organizationId: OrganizationId, fields: NewFlag): Promise<FeatureFlag | null> {
    const flag = this.flags().create({ ...fields, organizationId, version: 1 });
    try {
      await this.flags().save(flag);
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
    return flag;
  }

  /** Saves the flag's fields as they are now (a change's next version). */
  async save(organizationId: OrganizationId, flag: FeatureFlag): Promise<void> {
    if (flag.organizationId !== organizationId) throw new Error('a flag is saved by its own organization');
    await this.flags().save(flag);
  }

  async remove(organizationId: OrganizationId, flagId: string): Promise<void> {
    await this.flags().delete({ id: flagId, organizationId });
  }

  /** Records the flag's current settings as its version `flag.version`. */
  async recordVersion(organizationId: OrganizationId, flag: FeatureFlag, change: string, changedBy: string | null) {
    await this.uow.manager().query(
      `INSERT INTO feature_flag_versions (flag_id, organization_id, version, snapshot, change, changed_by)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        flag.id,
        organizationId,
        flag.version,
        JSON.stringify({
          key: flag.key,
          name: flag.name,
          description: flag.description,
          valueType: flag.valueType,
          defaultValue: flag.defaultValue,
          environments: flag.environments,
        }),
        change,
        changedBy,
      ],
    );
  }

  /** The flag's versions, newest first. */
  versions(organizationId: OrganizationId, flagId: string): Promise<FlagVersionRow[]> {
    return this.uow.manager().query<FlagVersionRow[]>(
      `SELECT version, change, changed_by, created_at, snapshot FROM feature_flag_versions
        WHERE flag_id = $1 AND organization_id = $2 ORDER BY version DESC`,
      [flagId, organizationId],
    );
  }

  /** The settings of version `version` of the flag, or null when there is no such version. */
  async snapshot(organizationId: OrganizationId, flagId: string, version: number): Promise<FlagSnapshot | null> {
    const rows = await this.uow
      .manager()
      .query<{ snapshot: FlagSnapshot }[]>(
        `SELECT snapshot FROM feature_flag_versions WHERE flag_id = $1 AND organization_id = $2 AND version = $3`,
        [flagId, organizationId, version],
      );
    return rows[0]?.snapshot ?? null;
  }

  /** The protected environments of the app's flag keys, flag or not (decision 0064). */
  async protections(organizationId: OrganizationId, appId: string): Promise<Protection[]> {
    const rows = await this.uow
      .manager()
      .query<{ flag_key: string; environment: Environment }[]>(
        `SELECT flag_key, environment FROM feature_flag_protections WHERE organization_id = $1 AND app_id = $2`,
        [organizationId, appId],
      );
    return rows.map((row) => ({ flagKey: row.flag_key, environment: row.environment }));
  }

  /** Protects (or, with `createdBy` undefined, unprotects) the key's environment. */
  async setProtection(
    organizationId: OrganizationId,
    protection: Protection & { appId: string },
    protect: { createdBy: string | null } | null,
  ): Promise<void> {
    const { appId, flagKey, environment } = protection;
    await this.uow.manager().query(
      protect
        ? `INSERT INTO feature_flag_protections (organization_id, app_id, flag_key, environment, created_by)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`
        : `DELETE FROM feature_flag_protections
            WHERE organization_id = $1 AND app_id = $2 AND flag_key = $3 AND environment = $4`,
      protect
        ? [organizationId, appId, flagKey, environment, protect.createdBy]
        : [organizationId, appId, flagKey, environment],
    );
  }

  /** The flag's overrides, newest first. */
  overrides(organizationId: OrganizationId, flagId: string): Promise<FlagOverride[]> {
    return this.uow
      .manager()
      .getRepository(FlagOverride)
      .find({ where: { flagId, organizationId }, order: { createdAt: 'DESC' } });
  }

  /** One override of the flag, or null. */
  findOverride(organizationId: OrganizationId, flagId: string, overrideId: string): Promise<FlagOverride | null> {
    return this.uow.manager().getRepository(FlagOverride).findOneBy({ id: overrideId, flagId, organizationId });
  }

  async insertOverride(organizationId: OrganizationId, fields: NewOverride): Promise<FlagOverride> {
    const overrides = this.uow.manager().getRepository(FlagOverride);
    return overrides.save(overrides.create({ ...fields, organizationId }));
  }

  /** Deletes the override; false when the flag has none with this id. */
  async removeOverride(organizationId: OrganizationId, flagId: string, overrideId: string): Promise<boolean> {
    const result = await this.uow
      .manager()
      .getRepository(FlagOverride)
      .delete({ id: overrideId, flagId, organizationId });
    return Boolean(result.affected);
  }

  private flags() {
    return this.uow.manager().getRepository(FeatureFlag);
  }
}
