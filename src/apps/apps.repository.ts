import { Injectable } from '@nestjs/common';
import { trustAppId, trustOrganizationId, type AppId, type OrganizationId } from '../common/access/tenant-id.js';
import { notFound } from '../common/errors/app-exception.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { App, type JwtConfiguration, type RiskThresholds } from './app.entity.js';

/** How a read runs: with the app row locked FOR UPDATE until the unit of work ends (`lock`). */
export interface AppQuery {
  /** Locks the app row until the caller's transaction ends. */
  lock?: boolean;
}

/** What the primary-flag rule reads of each app of an organization. */
export interface AppPrimaryState {
  id: AppId;
  isActive: boolean;
  isPrimary: boolean;
  createdAt: Date;
}

/** The app and its organization as the SDK routes' tenant resolver reads them. */
export interface TenantRow {
  id: AppId;
  app_name: string;
  organization_id: OrganizationId;
  service_tier: string;
  current_period_end: Date | null;
  billing_anchor_day: number | null;
  is_active: boolean;
  org_active: boolean;
  jwt_configuration: Partial<JwtConfiguration>;
  risk_thresholds: Partial<RiskThresholds>;
  require_signed_subject: boolean;
  subject_signing_secret: string | null;
}

/** The app an organization's quick start is made for. */
export interface PrimaryAppRow {
  id: AppId;
  name: string;
  /** Null with teamId for an Android-only app. */
  bundleId: string | null;
  teamId: string | null;
}

/**
 * The owner of the `apps` table: apps management, and the reads of the features that hang
 * something off an app (flags, push credentials, release notes, risk-alert rules, debug tokens,
 * token verification, webhooks). Every method on an organization's apps takes its id first: an app
 * of another organization is as unknown as a missing one.
 */
@Injectable()
export class AppsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private apps() {
    return this.uow.manager().getRepository(App);
  }

  /** The app's state, or null when the organization has no app with this id. */
  async find(
    organizationId: OrganizationId,
    appId: string,
    options: AppQuery = {},
  ): Promise<{ id: AppId; isActive: boolean } | null> {
    const rows = await this.uow
      .manager()
      .query<{ id: string; is_active: boolean }[]>(
        `SELECT id, is_active FROM apps WHERE id = $1 AND organization_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
        [appId, organizationId],
      );
    // The id, read back from the organization's own row, is the app's established id.
    return rows[0] ? { id: trustAppId(rows[0].id), isActive: rows[0].is_active } : null;
  }

  /** 404 `App` unless the organization has an app with this id. */
  async assertExists(organizationId: OrganizationId, appId: string, options: AppQuery = {}): Promise<void> {
    if (!(await this.find(organizationId, appId, options))) throw notFound('App');
  }

  /** The organization's apps, primary first, then by name. */
  list(organizationId: OrganizationId): Promise<App[]> {
    return this.apps().find({
      where: { organizationId },
      order: { isPrimary: 'DESC', appName: 'ASC', createdAt: 'ASC' },
    });
  }

  /** The organization's app with this id, or null. */
  get(organizationId: OrganizationId, appId: string): Promise<App | null> {
    return this.apps().findOneBy({ id: appId, organizationId });
  }

  /** The organization's app with this id locked FOR UPDATE until the unit of work ends, or null. */
  lock(organizationId: OrganizationId, appId: string): Promise<App | null> {
    return this.apps()
      .createQueryBuilder('app')
      .setLock('pessimistic_write')
      .where('app.id = :id AND app.organization_id = :org', { id: appId, org: organizationId })
      .getOne();
  }

  /** How many apps the organization has. */
  count(organizationId: OrganizationId): Promise<number> {
    return this.apps().countBy({ organizationId });
  }

  /** A new app of the organization (unique violation on a taken bundle and team id). */
  async insert(organizationId: OrganizationId, fields: Omit<Partial<App>, 'id' | 'organizationId'>): Promise<App> {
    const repository = this.apps();
    return repository.save(repository.create({ ...fields, organizationId }));
  }

  /** Writes the app's changed fields. */
  async save(organizationId: OrganizationId, app: App): Promise<App> {
    if (app.organizationId !== organizationId) throw notFound('App');
    return this.apps().save(app);
  }

  async delete(organizationId: OrganizationId, appId: string): Promise<void> {
    await this.apps().delete({ id: appId, organizationId });
  }

  /** Every app's primary-flag state, oldest first. */
  async primaryStates(organizationId: OrganizationId): Promise<AppPrimaryState[]> {
    const apps = await this.apps().find({
      where: { organizationId },
      select: { id: true, isActive: true, isPrimary: true, createdAt: true },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    return apps.map((app) => ({
      id: trustAppId(app.id),
      isActive: app.isActive,
      isPrimary: app.isPrimary,
      createdAt: app.createdAt,
    }));
  }

  /** Makes `appId` the organization's only primary app (none with null). */
  async setPrimary(organizationId: OrganizationId, appId: string | null): Promise<void> {
    await this.apps().update({ organizationId, isPrimary: true }, { isPrimary: false });
    if (appId) await this.apps().update({ id: appId, organizationId }, { isPrimary: true });
  }

  /** Each app's id and name, primary first (statistics). */
  async names(organizationId: OrganizationId): Promise<{ id: string; appName: string }[]> {
    const rows = await this.uow
      .manager()
      .query<{ id: string; app_name: string }[]>(
        `SELECT id, app_name FROM apps WHERE organization_id = $1 ORDER BY is_primary DESC, app_name`,
        [organizationId],
      );
    return rows.map((row) => ({ id: row.id, appName: row.app_name }));
  }

  /** The primary app; should none be marked, the oldest active app, then the oldest app. */
  async primaryApp(organizationId: OrganizationId): Promise<PrimaryAppRow | null> {
    const rows = await this.uow
      .manager()
      .query<{ id: string; app_name: string; bundle_id: string | null; team_id: string | null }[]>(
        `SELECT id, app_name, bundle_id, team_id FROM apps WHERE organization_id = $1
          ORDER BY is_primary DESC, is_active DESC, created_at, id LIMIT 1`,
        [organizationId],
      );
    const app = rows[0];
    return app ? { id: trustAppId(app.id), name: app.app_name, bundleId: app.bundle_id, teamId: app.team_id } : null;
  }

  /** The ids of the apps of these organizations. */
  async idsOf(organizationIds: readonly OrganizationId[]): Promise<AppId[]> {
    const rows = await this.uow
      .manager()
      .query<{ id: string }[]>(`SELECT id FROM apps WHERE organization_id = ANY($1::uuid[])`, [[...organizationIds]]);
    return rows.map((row) => trustAppId(row.id));
  }

  /** Apps deactivated, or of a deactivated organization (the deny set's part apps own). */
  async inactiveIds(): Promise<AppId[]> {
    const rows = await this.uow.manager().query<{ id: string }[]>(
      `SELECT a.id FROM apps a JOIN organization_tenants o ON o.id = a.organization_id
        WHERE NOT a.is_active OR NOT o.active`,
    );
    return rows.map((row) => trustAppId(row.id));
  }

  /** The app whose identity headers are these, with its organization's plan and state (one statement: SDK routes). */
  async tenantOf(bundleId: string, teamId: string): Promise<TenantRow | null> {
    const rows = await this.uow.manager().query<TenantRow[]>(
      `SELECT a.id, a.app_name, a.organization_id, o.tier AS service_tier, o.period_end AS current_period_end,
              o.anchor_day AS billing_anchor_day, a.is_active,
              o.active AS org_active, a.jwt_configuration, a.risk_thresholds, a.require_signed_subject, a.subject_signing_secret
         FROM apps a JOIN organization_tenants o ON o.id = a.organization_id
        WHERE a.bundle_id = $1 AND a.team_id = $2`,
      [bundleId, teamId],
    );
    const row = rows[0];
    return row ? { ...row, id: trustAppId(row.id), organization_id: trustOrganizationId(row.organization_id) } : null;
  }

  /** Whether the app has webhooks enabled (false for an unknown app). */
  async webhooksEnabled(appId: AppId): Promise<boolean> {
    const rows = await this.uow
      .manager()
      .query<{ webhook_enabled: boolean }[]>(`SELECT webhook_enabled FROM apps WHERE id = $1`, [appId]);
    return rows[0]?.webhook_enabled ?? false;
  }

  /** Whether the app accepts debug tokens (null for an unknown app). */
  async debugTokensEnabled(appId: AppId): Promise<boolean | null> {
    const rows = await this.uow
      .manager()
      .query<{ debug_tokens_enabled: boolean }[]>(`SELECT debug_tokens_enabled FROM apps WHERE id = $1`, [appId]);
    return rows[0]?.debug_tokens_enabled ?? null;
  }

  /** The bundle id (the APNs topic) of each of these apps, by app id; null for an Android-only app. */
  async bundleIds(appIds: readonly AppId[]): Promise<Map<AppId, string | null>> {
    if (!appIds.length) return new Map();
    const rows = await this.uow
      .manager()
      .query<{ id: string; bundle_id: string | null }[]>(`SELECT id, bundle_id FROM apps WHERE id = ANY($1::uuid[])`, [
        [...appIds],
      ]);
    return new Map(rows.map((row) => [trustAppId(row.id), row.bundle_id]));
  }
}
